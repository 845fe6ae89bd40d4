/* The reading facade (bt_source.h): an input read either by one graph in
 * this process (bt_graph.c) or, for a trace directory with several
 * stream files, by decoder processes over groups of its streams
 * (stream_split.h, bt_parallel.h), merged back in time order: the same
 * events either way. Must never touch an event itself (decoding is
 * bt_decode.c's, merging bt_parallel.c's), nor leave a decoder process or
 * a link directory behind once closed. */
#include "read/bt_source.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/bt_parallel.h"
#include "read/dedupe.h"
#include "read/names.h"
#include "read/stream_split.h"
#include "read/trace_dirs.h"

struct bt_source {
  char **inputs;
  size_t n_inputs;
  bt_parallel *decoders; /* NULL: one graph in this process */
  stream_split split;
  uint64_t trace_dirs;
  char **dirs; /* the trace directories split, by the user's path: t<i> is dirs[i] */
  size_t n_dirs;
  bool flight; /* overlapping snapshots: each event once (dedupe.h) */
  bool (*skip)(void *user, const hop_event *ev); /* NULL: none */
  void *skip_user;
  names *names; /* NULL: each read's own */
};

void bt_source_share_names(bt_source *s, names *n) { s->names = n; }

void bt_source_set_skip(bt_source *s, bool (*skip)(void *user, const hop_event *ev),
                        void *user) {
  s->skip = skip;
  s->skip_user = user;
}

/* Decoder processes for a trace directory with several stream files. A
 * split that cannot be made leaves the one in-process graph: the same
 * result, slower. */
static void start_decoders(bt_source *s, unsigned decoders) {
  char **dirs = NULL;
  size_t n = 0;
  char err[512];
  int found = 0;
  for (size_t i = 0; found == 0 && i < s->n_inputs; i++)
    found = bt_find_trace_dirs(s->inputs[i], &dirs, &n, 0);
  if (found == 0 && n > 0 &&
      stream_split_make(dirs, n, decoders, &s->split, err, sizeof(err)) == 0) {
    s->decoders = bt_parallel_start(s->split.roots, s->split.n_groups, bt_source_run,
                                    err, sizeof(err));
    if (s->decoders == NULL)
      stream_split_remove(&s->split);
    s->trace_dirs = n;
  }
  if (s->decoders != NULL) { /* kept to name them in messages */
    s->dirs = dirs;
    s->n_dirs = n;
    return;
  }
  for (size_t i = 0; i < n; i++)
    free(dirs[i]);
  free(dirs);
}

bt_source *bt_source_open(const char *const *inputs, size_t n_inputs, unsigned decoders) {
  bt_source *s = calloc(1, sizeof(*s));
  if (s == NULL || n_inputs == 0 || (s->inputs = calloc(n_inputs, sizeof(char *))) == NULL) {
    free(s);
    return NULL;
  }
  for (size_t i = 0; i < n_inputs; i++) {
    if ((s->inputs[s->n_inputs] = strdup(inputs[i])) == NULL) {
      bt_source_close(s);
      return NULL;
    }
    s->n_inputs++;
  }
  s->flight = bt_inputs_are_flight(inputs, n_inputs);
  if (decoders > 1 && strncmp(inputs[0], "net://", 6) != 0)
    start_decoders(s, decoders);
  return s;
}

/* A decoder's message names its group's link directories (ROOT/t<i>,
 * ROOT/t<i>/FILE, ROOT): name the user's trace directory dirs[i], or
 * the input, instead, everywhere in the message. */
static void name_input(const bt_source *s, char *err, size_t err_len) {
  for (int replaced = 0; replaced < 16; replaced++) {
    const char *root = NULL, *at = NULL;
    for (size_t g = 0; at == NULL && g < s->split.n_groups; g++)
      if ((root = s->split.roots[g]) != NULL)
        at = strstr(err, root);
    if (at == NULL)
      return;
    const char *rest = at + strlen(root), *name = s->inputs[0];
    char *end;
    if (rest[0] == '/' && rest[1] == 't' && rest[2] >= '0' && rest[2] <= '9') {
      unsigned long i = strtoul(rest + 2, &end, 10);
      if (i < s->n_dirs) {
        name = s->dirs[i];
        rest = end;
      }
    }
    char tail[512];
    snprintf(tail, sizeof(tail), "%s", rest);
    size_t used = (size_t)(at - err);
    snprintf(err + used, err_len - used, "%s%s", name, tail);
  }
}

/* The user's callbacks behind schema 2's names (names.h), applied to the
 * merged stream: a table entry and its first use may come from different
 * decoders. */
typedef struct naming {
  names *names;
  event_dedupe *dedupe; /* NULL: not flight snapshots */
  const bt_source *s;
  const bt_source_callbacks *cb;
  void *user;
  bool out_of_memory;
} naming;

static int pass_on(void *arg, const hop_event *ev) {
  naming *w = arg;
  return w->cb->on_event(w->user, ev);
}

static int named_event(void *arg, const hop_event *ev) {
  naming *w = arg;
  if (w->dedupe != NULL && event_dedupe_is_copy(w->dedupe, ev))
    return 0;
  /* each read names with tables of its own: they always pass */
  bool table = ev->kind == HOP_DESC || ev->kind == HOP_PEER || ev->kind == HOP_PROCESS;
  if (!table && w->s->skip != NULL && w->s->skip(w->s->skip_user, ev))
    return 0;
  hop_event named = *ev;
  int rc = names_apply(w->names, &named);
  if (rc < 0) {
    w->out_of_memory = true;
    return -1;
  }
  if (rc == 1 && (rc = w->cb->on_event(w->user, &named)) != 0)
    return rc;
  /* a table entry may have named held sides; the oldest may have waited
   * enough */
  if (names_waiting(w->names, ev->ts_ns))
    return names_release(w->names, ev->ts_ns, false, pass_on, w);
  return 0;
}

static void named_discarded(void *arg, const hop_loss *loss) {
  naming *w = arg;
  if (w->cb->on_discarded != NULL)
    w->cb->on_discarded(w->user, loss);
}

static void named_idle(void *arg) {
  naming *w = arg;
  if (w->cb->on_idle != NULL)
    w->cb->on_idle(w->user);
}

/* A flight recorder that captured nothing wrote its capture.json and no
 * snapshot: nothing to read, and no error. */
static bool no_snapshot(const bt_source *s) {
  if (!s->flight || s->decoders != NULL)
    return false;
  size_t n = 0;
  for (size_t i = 0; i < s->n_inputs && n == 0; i++) {
    char **dirs = NULL;
    size_t k = 0;
    if (bt_find_trace_dirs(s->inputs[i], &dirs, &k, 0) != 0)
      k = 1; /* an error: let the read say it */
    for (size_t j = 0; dirs != NULL && j < k; j++)
      free(dirs[j]);
    free(dirs);
    n += k;
  }
  return n == 0;
}

int bt_source_read(bt_source *s, const bt_source_callbacks *callbacks, void *user,
                   bt_source_stats *stats, atomic_int *stop, char *err,
                   size_t err_len) {
  if (no_snapshot(s)) {
    *stats = (bt_source_stats){.flight = true};
    return 0;
  }
  event_dedupe dedupe = {0};
  naming w = {s->names ? s->names : names_new(), s->flight ? &dedupe : NULL, s, callbacks,
              user, false};
  uint64_t unresolved = w.names ? names_unresolved(w.names) : 0;
  uint64_t redefined = w.names ? names_redefined(w.names) : 0;
  if (w.names == NULL) {
    snprintf(err, err_len, "out of memory");
    return -1;
  }
  bt_source_callbacks named = {named_event, named_discarded, named_idle};
  int rc;
  if (s->decoders == NULL) {
    rc = bt_source_run_many((const char *const *)s->inputs, s->n_inputs, &named, &w,
                            stats, stop, err, err_len);
  } else {
    rc = bt_parallel_read(s->decoders, &named, &w, stats, stop, err, err_len);
    stats->trace_dirs = s->trace_dirs;
    if (rc != 0)
      name_input(s, err, err_len);
  }
  if (rc == 0) /* the end: whatever still waits, named or not */
    rc = names_release(w.names, 0, true, pass_on, &w);
  stats->unresolved_names = names_unresolved(w.names) - unresolved;
  stats->redefined_names = names_redefined(w.names) - redefined;
  stats->duplicate_events = dedupe.duplicates;
  stats->flight = s->flight;
  event_dedupe_free(&dedupe);
  if (w.out_of_memory) {
    snprintf(err, err_len, "out of memory for the name tables");
    rc = -1;
  }
  if (s->names == NULL)
    names_free(w.names);
  return rc;
}

void bt_source_close(bt_source *s) {
  if (s == NULL)
    return;
  bt_parallel_stop(s->decoders);
  stream_split_remove(&s->split);
  for (size_t i = 0; i < s->n_dirs; i++)
    free(s->dirs[i]);
  free(s->dirs);
  for (size_t i = 0; i < s->n_inputs; i++)
    free(s->inputs[i]);
  free(s->inputs);
  free(s);
}
