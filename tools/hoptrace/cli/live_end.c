/* The end of a live input (live_end.h). */
#include "cli/live_end.h"

#include <inttypes.h>
#include <stdio.h>

#include "output/report_groups.h"

typedef struct marking {
  host_health *hosts;
  assembler *a;
} marking;

static int64_t received_until(void *user, const char *host) {
  return host_health_last_ns(((marking *)user)->hosts, host);
}

static void unreceived(void *user, const hop_event *ev, const char *host) {
  assembler_unreceived(((marking *)user)->a, ev, host);
}

/* A host name as the trace has it (a remote daemon's bytes): no control
 * character reaches the terminal. */
static void print_host(const char *host) {
  if (host[0] == '\0')
    fputs("(unnamed)", stderr);
  for (const unsigned char *p = (const unsigned char *)host; *p != '\0'; p++)
    fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, stderr);
}

int live_end_check(relay_check *c, const char *relay_dir, const char *const *urls,
                   size_t n_urls, host_health *hosts, assembler *a, int64_t since_ns,
                   const uint64_t *only_trace, atomic_int *stop) {
  marking m = {hosts, a};
  c->received_until = received_until;
  c->unreceived = unreceived;
  c->user = &m;
  c->since_ns = since_ns;
  c->only_trace = only_trace;
  char err[1024];
  int rc = relay_check_run(c, relay_dir, urls, n_urls, stop, err, sizeof(err));
  c->user = NULL; /* m ends here */
  if (rc != 0) {
    fprintf(stderr, "hoptrace: %s\n", err);
    return -1;
  }
  int found = 0;
  for (size_t i = 0; i < c->n_gaps; i++)
    if (c->gaps[i].events > 0) {
      assembler_end_host(a, c->gaps[i].host, false, 0);
      found = 1;
    }
  return found;
}

void live_end_unchecked(host_health *hosts, assembler *a) {
  for (size_t i = 0; i < host_health_count(hosts); i++) {
    const char *host = host_health_name(hosts, i);
    if (host != NULL)
      assembler_end_host(a, host, true, host_health_last_ns(hosts, host));
  }
}

/* Without --relay-dir: the end of each host's session, unchecked. */
static void print_unchecked(const host_health *hosts, uint64_t marked_traces) {
  if (marked_traces == 0) {
    fprintf(stderr, "hoptrace: the live session ended with no trace open; a live viewer cannot"
                    " tell a clean destroy from a session daemon that died, so its end could"
                    " not be checked (--relay-dir DIR, the relay's output directory, compares"
                    " with its files)\n");
    return;
  }
  char when[40];
  for (size_t i = 0; i < host_health_count(hosts); i++) {
    const char *host = host_health_name(hosts, i);
    if (host == NULL)
      continue;
    report_utc(host_health_last_ns(hosts, host), when, sizeof(when));
    fputs("hoptrace: the live session of host ", stderr);
    print_host(host);
    fprintf(stderr, " ended at %s (its last event received), unchecked: to a live viewer a"
                    " session daemon that died ends it as a clean destroy does\n", when);
  }
  fprintf(stderr, "hoptrace: %" PRIu64 " traces open at the end marked incomplete: spans after"
                  " their host's last event received may be missing (pass --relay-dir DIR to"
                  " check what the relay holds)\n", marked_traces);
}

void live_end_print(const relay_check *c, int found, const char *relay_dir,
                    const host_health *hosts, uint64_t marked_traces) {
  if (relay_dir == NULL) {
    print_unchecked(hosts, marked_traces);
    return;
  }
  if (found == 0)
    fprintf(stderr, "hoptrace: the relay's files (%s) hold no event after the last one"
                    " received: nothing the relay holds was missed\n", c->dirs ? c->dirs : "");
  if (found != 1)
    return;
  for (size_t i = 0; i < c->n_gaps; i++) {
    const relay_gap *g = &c->gaps[i];
    if (g->events == 0)
      continue;
    fputs("hoptrace: the live session of host ", stderr);
    print_host(g->host);
    fprintf(stderr,
            " ended uncleanly (its session daemon or consumer died, or its connection to the"
            " relay broke): the relay's files hold %" PRIu64 " events (%" PRIu64 " span sides)"
            " after the last event received from it, never delivered\n",
            g->events, g->sides);
  }
  fprintf(stderr, "hoptrace: %" PRIu64 " traces open at the end marked incomplete (read the"
                  " relay's files for the rest: %s)\n", marked_traces, c->dirs ? c->dirs : "");
}
