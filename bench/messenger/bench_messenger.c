/* Plain vs traced messenger: requests/s and latency (p50, p99) of one
 * client and one server messenger over loopback TCP, each on its own
 * loop thread, DEPTH requests kept in flight (each reply sends the next,
 * on the client's loop thread, so every request is a new root trace).
 *
 * Cells: plain; traced with sampling 0 %, 1 %, 100 % and no session;
 * traced 100 % with a recording LTTng session (when HT_BENCH_SESSION
 * names a created, stopped session: this program starts and stops it
 * around that cell; bench/messenger/run.sh sets it up). Each figure is
 * the best of ROUNDS interleaved rounds (the machine is shared).
 * Prints the table with ratios to plain and writes
 * bench/results/messenger.txt.
 *   bench_messenger [SECONDS_PER_CELL] [ROUNDS]
 * BENCH_CELL=N runs cell N only (for a profiler) and writes nothing.
 * Not a test: no assertion on speed anywhere.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench_pair.h"
#include "bench_report.h"
#include "hoptrace/tracing.h"

#define DEPTH 16
#define PAYLOAD 64
#define MAX_SAMPLES (4u << 20)

typedef struct cell {
  const char *label;
  int traced;
  double ratio;
  int session;
} cell;

static const cell cells[] = {
    {"plain", 0, 0, 0},
    {"traced 0%", 1, 0.0, 0},
    {"traced 1%", 1, 0.01, 0},
    {"traced 100%", 1, 1.0, 0},
    {"traced 100% rec", 1, 1.0, 1},
};
#define N_CELLS (sizeof(cells) / sizeof(cells[0]))

typedef struct result {
  double rps, p50_us, p99_us;
  double cpu_us; /* process CPU (user + system) per request, both sides */
  int ok;
  size_t requests;
} result;

typedef struct run {
  ht_peer *peer;
  uint64_t deadline_ns;
  uint32_t *lat_ns; /* one per completed request */
  size_t n;
  int inflight, failed;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  char payload[PAYLOAD];
} run;

typedef struct slot {
  run *r;
  uint64_t t0;
} slot;

static void send_one(run *r, slot *s);

static void on_reply(void *arg, int status, const ht_envelope *reply) {
  (void)reply;
  slot *s = arg;
  run *r = s->r;
  uint64_t now = bench_now_ns();
  if (status != 0)
    r->failed++;
  else if (r->n < MAX_SAMPLES)
    r->lat_ns[r->n++] = (uint32_t)(now - s->t0 > UINT32_MAX ? UINT32_MAX
                                                            : now - s->t0);
  if (now < r->deadline_ns && !r->failed) {
    send_one(r, s);
    return;
  }
  free(s);
  pthread_mutex_lock(&r->lock);
  r->inflight--;
  pthread_cond_signal(&r->cond);
  pthread_mutex_unlock(&r->lock);
}

static void send_one(run *r, slot *s) {
  ht_payload p = {r->payload, PAYLOAD, NULL, NULL};
  s->t0 = bench_now_ns();
  int rc = ht_peer_request(r->peer, "echo", &p, NULL, on_reply, s);
  if (rc != 0) {
    r->failed++;
    free(s);
    pthread_mutex_lock(&r->lock);
    r->inflight--;
    pthread_cond_signal(&r->cond);
    pthread_mutex_unlock(&r->lock);
  }
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static void session_ctl(const char *verb) {
  const char *s = getenv("HT_BENCH_SESSION");
  char cmd[256];
  snprintf(cmd, sizeof(cmd), "lttng %s %s >/dev/null", verb, s);
  if (system(cmd) != 0)
    fprintf(stderr, "bench: '%s' failed\n", cmd);
}

static double cpu_seconds(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static result measure(const cell *c, double seconds, uint32_t *lat) {
  bench_pair pair;
  bench_pair_open(&pair, c->traced, c->ratio);
  run r = {.lat_ns = lat, .peer = pair.peer};
  pthread_mutex_init(&r.lock, NULL);
  pthread_cond_init(&r.cond, NULL);
  memset(r.payload, 'x', PAYLOAD);
  if (c->session)
    session_ctl("start");
  double cpu0 = cpu_seconds();
  uint64_t t0 = bench_now_ns();
  r.deadline_ns = t0 + (uint64_t)(seconds * 1e9);
  pthread_mutex_lock(&r.lock);
  r.inflight = DEPTH;
  pthread_mutex_unlock(&r.lock);
  for (int i = 0; i < DEPTH; i++) {
    slot *s = malloc(sizeof(*s));
    s->r = &r;
    send_one(&r, s);
  }
  pthread_mutex_lock(&r.lock);
  while (r.inflight > 0)
    pthread_cond_wait(&r.cond, &r.lock);
  pthread_mutex_unlock(&r.lock);
  uint64_t t1 = bench_now_ns();
  double cpu1 = cpu_seconds();
  if (c->session)
    session_ctl("stop");
  bench_pair_close(&pair);
  pthread_mutex_destroy(&r.lock);
  pthread_cond_destroy(&r.cond);
  result out = {0, 0, 0, 0, r.failed == 0 && r.n > 0, r.n};
  if (r.n > 0) {
    qsort(lat, r.n, sizeof(*lat), cmp_u32);
    out.rps = (double)r.n / ((double)(t1 - t0) / 1e9);
    out.p50_us = lat[r.n / 2] / 1e3;
    out.p99_us = lat[r.n * 99 / 100] / 1e3;
    out.cpu_us = (cpu1 - cpu0) * 1e6 / (double)r.n;
  }
  return out;
}

/* Median of cell i's requests a second over plain's in the same round:
 * the cells of a round run back to back, so each ratio shares its
 * round's machine speed, which the best of each cell does not. */
#define MAX_ROUNDS 64
static double paired_median(double rps[][N_CELLS], int rounds, size_t i) {
  double r[MAX_ROUNDS];
  int n = 0;
  for (int k = 0; k < rounds; k++)
    if (rps[k][0] > 0 && rps[k][i] > 0)
      r[n++] = rps[k][i] / rps[k][0];
  for (int a = 1; a < n; a++) /* insertion sort: a handful of rounds */
    for (int b = a; b > 0 && r[b] < r[b - 1]; b--) {
      double t = r[b];
      r[b] = r[b - 1];
      r[b - 1] = t;
    }
  return n == 0 ? 0 : n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 2.0;
  int rounds = argc > 2 ? atoi(argv[2]) : 3;
  if (rounds < 1 || rounds > MAX_ROUNDS) {
    fprintf(stderr, "bench_messenger: ROUNDS is 1..%d\n", MAX_ROUNDS);
    return 2;
  }
  static double rps[MAX_ROUNDS][N_CELLS];
  int have_session = getenv("HT_BENCH_SESSION") != NULL;
  const char *only = getenv("BENCH_CELL"); /* "1": profile one cell */
  ht_tracing_init();
  uint32_t *lat = malloc(MAX_SAMPLES * sizeof(*lat));
  result best[N_CELLS];
  memset(best, 0, sizeof(best));
  for (int round = 0; round < rounds; round++) {
    for (size_t i = 0; i < N_CELLS; i++) {
      if (cells[i].session && !have_session)
        continue;
      if (only != NULL && (size_t)atoi(only) != i)
        continue;
      result r = measure(&cells[i], seconds, lat);
      rps[round][i] = r.rps;
      fprintf(stderr,
              "round %d %-16s %9.0f req/s p99 %7.1f us cpu %5.2f us/req "
              "requests %zu%s\n",
              round, cells[i].label, r.rps, r.p99_us, r.cpu_us, r.requests,
              r.ok ? "" : " (errors)");
      double cpu = round == 0 || r.cpu_us < best[i].cpu_us ? r.cpu_us : best[i].cpu_us;
      if (round == 0 || r.rps > best[i].rps) {
        double p50 = round == 0 || r.p50_us < best[i].p50_us ? r.p50_us : best[i].p50_us;
        double p99 = round == 0 || r.p99_us < best[i].p99_us ? r.p99_us : best[i].p99_us;
        best[i] = r;
        best[i].p50_us = p50;
        best[i].p99_us = p99;
      } else {
        if (r.p50_us < best[i].p50_us) best[i].p50_us = r.p50_us;
        if (r.p99_us < best[i].p99_us) best[i].p99_us = r.p99_us;
      }
      best[i].cpu_us = cpu;
    }
  }
  free(lat);
  if (only != NULL)
    return 0;
  bench_report *rep = bench_report_open("messenger");
  if (rep == NULL)
    return 1;
  bench_report_line(rep, "# provider: %s; loopback TCP, one client and one "
                         "server messenger, %d in flight, %d-byte payload\n",
                    ht_tracing_provider_state() == HT_PROVIDER_LOADED
                        ? "loaded"
                        : "not loaded",
                    DEPTH, PAYLOAD);
  bench_report_line(rep, "# each figure: best of %d interleaved rounds of "
                         "%.1f s (shared machine)\n\n", rounds, seconds);
  bench_report_line(rep, "%-16s %10s %8s %9s %9s %8s %12s %8s %8s\n", "cell",
                    "req/s", "vs plain", "p50 us", "p99 us", "p99 x",
                    "cpu us/req", "cpu x", "paired");
  const result *plain = &best[0];
  for (size_t i = 0; i < N_CELLS; i++) {
    if (cells[i].session && !have_session) {
      bench_report_line(rep, "%-16s %10s (no session: run bench/messenger/run.sh)\n",
                        cells[i].label, "-");
      continue;
    }
    bench_report_line(rep, "%-16s %10.0f %7.1f%% %9.1f %9.1f %8.2f %12.2f %8.2f %7.1f%%%s\n",
                      cells[i].label, best[i].rps,
                      100.0 * best[i].rps / plain->rps, best[i].p50_us,
                      best[i].p99_us, best[i].p99_us / plain->p99_us,
                      best[i].cpu_us, best[i].cpu_us / plain->cpu_us,
                      100.0 * paired_median(rps, rounds, i),
                      best[i].ok ? "" : "  (errors)");
  }
  bench_report_line(rep, "\npaired: the median over rounds of the cell's req/s over plain's in the "
                         "same round\n");
  double r1 = best[2].rps / plain->rps, rrec = best[4].rps / plain->rps;
  double p1 = paired_median(rps, rounds, 2), prec = paired_median(rps, rounds, 4);
  bench_report_line(rep, "goals: traced 1%% >= 98.5%% of plain: best %.1f%% (%s), paired %.1f%% (%s)",
                    100 * r1, r1 >= 0.985 ? "met" : "missed", 100 * p1,
                    p1 >= 0.985 ? "met" : "missed");
  if (have_session)
    bench_report_line(rep, "; traced 100%% recording >= 85%%: best %.1f%% (%s), paired %.1f%% (%s)\n",
                      100 * rrec, rrec >= 0.85 ? "met" : "missed", 100 * prec,
                      prec >= 0.85 ? "met" : "missed");
  else
    bench_report_line(rep, "\n");
  bench_report_close(rep);
  return 0;
}
