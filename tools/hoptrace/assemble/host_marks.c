/* Marks a trace gets from outside its own events: a host's stream lost
 * events (lossy), or a live input ended with events of a host never
 * delivered (unreceived). Marks only: never emits a trace. */
#include "assemble/assemble_internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

/* Hosts whose latest loss is remembered (assembler_discarded): past
 * this many, a new host's loss marks only the traces open at the time. */
#define MAX_LOSS_HOSTS 1024

/* The first span of t recorded on host, NULL when none. */
static const span *span_on_host(const trace *t, const char *host) {
  for (size_t i = 0; i < t->n_spans; i++)
    if (t->spans[i]->hostname != NULL && strcmp(t->spans[i]->hostname, host) == 0)
      return t->spans[i];
  return NULL;
}

static void mark_lossy(trace *t, const char *host) {
  t->lossy = true;
  t->lossy_host = host; /* a span's name: lives as long as t */
}

/* Remembers when host's latest loss ended, for the span sides of that
 * host that arrive after it (mark_late_loss). */
static void remember_loss(assembler *a, const char *host, int64_t end_ns) {
  for (size_t i = 0; i < a->n_losses; i++)
    if (strcmp(a->losses[i].host, host) == 0) {
      if (end_ns > a->losses[i].end_ns)
        a->losses[i].end_ns = end_ns;
      return;
    }
  if (a->n_losses == MAX_LOSS_HOSTS)
    return;
  if (ht_grow(&a->losses, &a->cap_losses, a->n_losses + 1, sizeof(host_loss), 4) != 0)
    return;
  char *copy = strdup(host);
  if (copy != NULL)
    a->losses[a->n_losses++] = (host_loss){copy, end_ns};
}

/* A span of a host that lost events, running when the loss ended, whose
 * event arrives after the loss (a span side is written at the span's
 * end): events of its trace on that host may be among those lost. */
void assembler_mark_late_loss(assembler *a, trace *t, const span *s) {
  if (s->hostname == NULL || !s->started)
    return;
  for (size_t i = 0; i < a->n_losses; i++)
    if (s->start_ns <= a->losses[i].end_ns && strcmp(a->losses[i].host, s->hostname) == 0) {
      mark_lossy(t, s->hostname);
      return;
    }
}

void assembler_discarded(assembler *a, const hop_loss *loss) {
  const char *host = loss->hostname != NULL && loss->hostname[0] != '\0' ? loss->hostname : NULL;
  int64_t end_ns = loss->end_ns;
  /* An open trace that began before the loss ended may have lost events
   * of that host's stream when it holds a span of that host; every open
   * trace when the stream names no host. */
  for (open_trace *o = a->oldest; o != NULL; o = o->next) {
    trace *t = o->t;
    if (t->lossy || (end_ns != 0 && t->first_ns > end_ns))
      continue;
    const span *s;
    if (host == NULL)
      t->lossy = true;
    else if ((s = span_on_host(t, host)) != NULL)
      mark_lossy(t, s->hostname);
  }
  if (host != NULL) /* lost packets have no times: the loss ended by now */
    remember_loss(a, host, end_ns != 0 ? end_ns : a->now_ns);
}

static void mark_unreceived(trace *t, const char *host, bool unchecked, int64_t last_ns) {
  if (t->unreceived++ == 0) {
    t->unreceived_host = host;
    t->end_unchecked = unchecked;
    t->end_last_ns = last_ns;
  }
}

void assembler_unreceived(assembler *a, const hop_event *ev, const char *host) {
  open_trace *o = idmap_get(&a->traces, ev->trace_hi, ev->trace_lo);
  if (o != NULL && (ev->trace_hi != 0 || ev->trace_lo != 0))
    mark_unreceived(o->t, host, false, 0);
}

uint64_t assembler_end_host(assembler *a, const char *host, bool unchecked, int64_t last_ns) {
  uint64_t marked = 0;
  for (open_trace *o = a->oldest; o != NULL; o = o->next)
    if (o->t->unreceived == 0 && span_on_host(o->t, host) != NULL) {
      mark_unreceived(o->t, host, unchecked, last_ns);
      marked++;
    }
  return marked;
}
