/* Spans <-> clock model. The only code that moves a timestamp; it does
 * so only through the fitted maps, and leaves the shift on the span. */
#include "assemble/align.h"

#include <stdlib.h>
#include <string.h>

#include "assemble/assemble.h"

#define HOST_CACHE 16

struct align_state {
  clock_sync *clock;
  char *reference;
  uint64_t rpcs;
  /* host names are shared by the spans (name table): a pointer hit
   * avoids the clock model's lookup by text */
  const char *cache_name[HOST_CACHE];
  int cache_host[HOST_CACHE];
  unsigned cache_next;
};

align_state *align_new(const char *reference) {
  align_state *a = calloc(1, sizeof(*a));
  if (a == NULL || (a->clock = clock_sync_new()) == NULL ||
      (reference != NULL && (a->reference = strdup(reference)) == NULL)) {
    align_free(a);
    return NULL;
  }
  return a;
}

void align_free(align_state *a) {
  if (a == NULL)
    return;
  clock_sync_free(a->clock);
  free(a->reference);
  free(a);
}

static int host_of(align_state *a, const span *s) {
  const char *name = s->hostname != NULL ? s->hostname : "";
  for (unsigned i = 0; i < HOST_CACHE; i++)
    if (a->cache_name[i] == name)
      return a->cache_host[i];
  int host = clock_sync_host(a->clock, name);
  if (host >= 0) {
    unsigned slot = a->cache_next++ % HOST_CACHE;
    a->cache_name[slot] = name;
    a->cache_host[slot] = host;
  }
  return host;
}

static int same_host(const span *x, const span *y) {
  const char *a = x->hostname ? x->hostname : "", *b = y->hostname ? y->hostname : "";
  return a == b || strcmp(a, b) == 0;
}

uint64_t align_collect(align_state *a, const trace *t) {
  uint64_t added = 0;
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *server = t->spans[i], *client = server->parent;
    if (server->kind != HOP_KIND_SERVER || client == NULL || client->kind != HOP_KIND_CLIENT ||
        same_host(client, server))
      continue;
    int64_t cs = span_annotation_ns(client, "cs"), cr = span_annotation_ns(client, "cr");
    int64_t sr = span_annotation_ns(server, "sr"), ss = span_annotation_ns(server, "ss");
    if (cs == 0 || cr == 0 || sr == 0 || ss == 0)
      continue;
    int ch = host_of(a, client), sh = host_of(a, server);
    if (ch < 0 || sh < 0)
      continue;
    if (clock_sync_add_rpc(a->clock, ch, sh, cs, sr, ss, cr) == 0)
      added++;
  }
  a->rpcs += added;
  return added;
}

int align_solve(align_state *a, char *err, size_t err_len) {
  if (clock_sync_solve(a->clock, a->reference) != 0) {
    snprintf(err, err_len, "--align-reference %s: no such host in the input", a->reference);
    return -1;
  }
  return 0;
}

void align_apply(align_state *a, trace *t) {
  for (size_t i = 0; i < t->n_spans; i++) {
    span *s = t->spans[i];
    int host = host_of(a, s);
    if (host < 0)
      continue;
    int64_t raw_start = s->start_ns, raw_end = s->end_ns;
    if (s->started || s->start_ns != 0) /* not started: its first event's time */
      s->start_ns = clock_sync_to_reference(a->clock, host, s->start_ns);
    if (s->ended)
      s->end_ns = clock_sync_to_reference(a->clock, host, s->end_ns);
    for (uint32_t k = 0; k < s->n_annotations; k++)
      s->annotations[k].ts_ns = clock_sync_to_reference(a->clock, host, s->annotations[k].ts_ns);
    /* what the span's first time was moved by: raw = shown - shift */
    int64_t at = s->started ? raw_start : raw_end;
    s->clock_shift_ns = s->started ? s->start_ns - raw_start : s->end_ns - raw_end;
    int64_t bound = clock_sync_bound_ns(a->clock, host, at);
    /* a host with no RPC path to the reference keeps its clock: no tag
     * (the clock table lists it as unaligned) */
    s->clock_bound_ns = bound == INT64_MAX ? -1 : bound < 0 ? 0 : bound;
  }
}

const clock_sync *align_clock(const align_state *a) { return a->clock; }
uint64_t align_rpcs(const align_state *a) { return a->rpcs; }
