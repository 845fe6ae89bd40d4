/* Test helper: a hostile traced process. It defines its own LTTng-UST
 * provider `hoptrace` from the same schema (src/provider/hoptrace_tp.h, so
 * the same event names and field layout as libhoptrace's) and writes raw
 * events with hostile values, as any process of a traced host can. It
 * never loads libhoptrace-tp.so: two providers of one name in a process
 * conflict. One attack a run:
 *
 *   hostile_events --desc-flood N [--bytes B]
 *                                    N desc events (ids 1..N, each its own
 *                                    name of B bytes, 24) for one span
 *   hostile_events --huge N [--bytes B] [--drain DIR [--ring BYTES]]
 *                                    N single-span traces, each with a name
 *                                    and a string tag of B bytes (1 MiB);
 *                                    with --drain, each written once the
 *                                    stream files under DIR hold all but
 *                                    half a ring (BYTES, 32 MiB) of the
 *                                    bytes written before it
 *   hostile_events --traces N        N single-span traces, as fast as it can
 *   hostile_events --malformed-child N
 *                                    N three-span traces: the root and a
 *                                    span_k child (a 31-byte key, value
 *                                    -1 - i) sound, the other child
 *                                    malformed (its start past any clock
 *                                    time, span id 0, or a span_k key
 *                                    with no NUL in its 32 bytes)
 *   hostile_events --forge-vpid PID [--ids K]
 *                                    desc and peer events (ids 1..K, 1024)
 *                                    and a process event claiming process
 *                                    PID's vpid, every name "FORGED"
 *
 * Its own names (process, desc 1) are written first, under its own vpid.
 * Prints what it wrote; exit 0 when the attack ran. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "hoptrace_tp.h"

#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint32_t vpid, vtid;
static uint64_t next_id = 1;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* LTTng-UST's default clock */
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void own_names(void) {
  ht_rec_process p = {.schema = HT_SCHEMA_VERSION, .procname = "hostile_events", .vpid = vpid};
  lttng_ust_tracepoint(hoptrace, process, &p);
  ht_rec_desc d = {.id = 1, .vpid = vpid, .kind = 1, .name = "hostile_op",
                   .service = "hostile", .endpoint = "tcp://127.0.0.1:1"};
  lttng_ust_tracepoint(hoptrace, desc, &d);
}

/* A root span side of a trace of its own, named by desc id `desc`. */
static void root_span(uint32_t desc, uint64_t *trace_lo) {
  uint64_t id = next_id++;
  *trace_lo = id;
  ht_rec_span s = {.rec = {HT_REC_NAMES_VPID_OF(desc, 0, vpid),
                           HT_REC_VTID_FLAGS_STATUS_OF(vtid, 1 /* sampled */, 0),
                           0x4057, id, id, 0, now_ns() - 1000}};
  lttng_ust_tracepoint(hoptrace, span, &s);
}

static int desc_flood(long n, long bytes) {
  char *name = malloc((size_t)bytes + 1);
  if (name == NULL)
    return -1;
  memset(name, 'n', (size_t)bytes);
  name[bytes] = '\0';
  for (long i = 1; i <= n; i++) {
    char head[32];
    int len = snprintf(head, sizeof(head), "flood_%ld_", i); /* each its own name */
    memcpy(name, head, (size_t)len < (size_t)bytes ? (size_t)len : (size_t)bytes);
    ht_rec_desc d = {.id = (uint32_t)i, .vpid = vpid, .kind = 1, .name = name,
                     .service = "hostile", .endpoint = "tcp://127.0.0.1:1"};
    lttng_ust_tracepoint(hoptrace, desc, &d);
    if (i % (1 + 100000 / (3 * bytes)) == 0) /* 100 kB, then the consumer */
      usleep(2000);                            /* drains the names channel */
  }
  free(name);
  uint64_t lo;
  root_span(1, &lo);
  printf("hostile_events: %ld desc events of %ld-byte names, 1 span\n", n, bytes);
  return 0;
}

/* Bytes of the stream files (hoptrace_*) in the directories under dir. */
static long long stream_bytes(const char *dir) {
  DIR *d = opendir(dir);
  if (d == NULL)
    return 0;
  long long sum = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    char path[4096];
    struct stat st;
    if (e->d_name[0] == '.' ||
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path) ||
        lstat(path, &st) != 0)
      continue;
    if (S_ISDIR(st.st_mode))
      sum += stream_bytes(path);
    else if (strncmp(e->d_name, "hoptrace_", 9) == 0)
      sum += st.st_size;
  }
  closedir(d);
  return sum;
}

/* Waits (60 s at most, then never again: said so) until the consumer has written all but `slack`
 * of `written` bytes to the stream files under dir: a ring then never
 * holds more than that unwritten, however slow the consumer (a fixed
 * pause lost events on a loaded machine). Partly filled sub-buffers are
 * written only when full: slack must exceed one per CPU. */
static void await_drain(const char **dir, long long written, long long slack) {
  int i = 0;
  for (; i < 12000 && stream_bytes(*dir) < written - slack; i++)
    usleep(5000);
  if (i == 12000) {
    fprintf(stderr, "hostile_events: %s not written within 60 s\n", *dir);
    *dir = NULL;
  }
}

static int huge(long n, long bytes, const char *drain, long long ring) {
  char *text = malloc((size_t)bytes + 1);
  if (text == NULL)
    return -1;
  for (long i = 0; i < n; i++) {
    if (drain != NULL)
      await_drain(&drain, 2LL * bytes * i, ring / 2);
    memset(text, 'a' + (int)(i % 26), (size_t)bytes);
    text[bytes] = '\0';
    char head[24];
    int n = snprintf(head, sizeof(head), "%010ld", i); /* each its own string */
    memcpy(text, head, (size_t)n);
    uint64_t id = next_id++;
    ht_rec_tag_s t = {.ids = {0x4057, id, id, 0}, .key = "huge", .value = text};
    lttng_ust_tracepoint(hoptrace, tag_s, &t);
    ht_rec_span_s s = {.side = {0, vpid, HT_SIDE_VTID_FLAGS_OF(vtid, 1), 0},
                       .at = {0x4057, id, id, 0, now_ns() - 1000},
                       .kind = 1, .name = text, .service = "hostile",
                       .endpoint = "", .peer_text = ""};
    lttng_ust_tracepoint(hoptrace, span_s, &s);
    if (drain == NULL)
      usleep(20000); /* the consumer writes the sub-buffers these filled */
  }
  free(text);
  printf("hostile_events: %ld spans with %ld-byte strings\n", n, bytes);
  return 0;
}

static void traces(long n) {
  uint64_t lo;
  for (long i = 0; i < n; i++)
    root_span(1, &lo);
  printf("hostile_events: %ld single-span traces\n", n);
}

/* A span_k child of trace lo: its key the n bytes of `key` (as many as
 * span_k holds at most: none of them a NUL then makes it malformed). */
static void span_k_child(uint64_t lo, const char *key, size_t n, int64_t value) {
  ht_rec_span_k k = {.rec = {HT_REC_NAMES_VPID_OF(1, 0, vpid),
                             HT_REC_VTID_FLAGS_STATUS_OF(vtid, 1, 0), 0x4057, lo,
                             next_id++, lo, now_ns() - 500, (uint64_t)value}};
  for (size_t i = 0; i < n && i < HT_REC_KV_KEY_BYTES; i++) /* little-endian */
    k.rec[HT_REC_KV_KEY + i / 8] |= (uint64_t)(unsigned char)key[i] << 8 * (i % 8);
  lttng_ust_tracepoint(hoptrace, span_k, &k);
}

/* The root whole and a span_k child at span_k's longest key, the other
 * child a side the tool must drop: one start time no clock converts
 * (cycles past int64 ns), the next span id 0, the next a span_k key that
 * never ends. */
static void malformed_child(long n) {
  char key[HT_REC_KV_KEY_BYTES];
  memset(key, 'k', sizeof(key));
  for (long i = 0; i < n; i++) {
    uint64_t lo;
    root_span(1, &lo);
    span_k_child(lo, key, HT_SCHEMA_KV_KEY_MAX, -1 - i);
    if (i % 3 == 2) {
      span_k_child(lo, key, sizeof(key), 1);
      continue;
    }
    uint64_t child = next_id++, start = now_ns() - 500;
    if (i % 3 == 0)
      start = UINT64_MAX;
    else
      child = 0;
    ht_rec_span s = {.rec = {HT_REC_NAMES_VPID_OF(1, 0, vpid),
                             HT_REC_VTID_FLAGS_STATUS_OF(vtid, 1, 0), 0x4057, lo, child, lo,
                             start}};
    lttng_ust_tracepoint(hoptrace, span, &s);
  }
  printf("hostile_events: %ld traces with a malformed child\n", n);
}

static void forge(uint32_t victim, long ids) {
  ht_rec_process p = {.schema = HT_SCHEMA_VERSION, .procname = "FORGED", .vpid = victim};
  lttng_ust_tracepoint(hoptrace, process, &p);
  for (long i = 1; i <= ids; i++) {
    ht_rec_desc d = {.id = (uint32_t)i, .vpid = victim, .kind = 1, .name = "FORGED",
                     .service = "FORGED", .endpoint = "FORGED"};
    lttng_ust_tracepoint(hoptrace, desc, &d);
    ht_rec_peer e = {.id = (uint32_t)i, .vpid = victim, .text = "FORGED"};
    lttng_ust_tracepoint(hoptrace, peer, &e);
  }
  printf("hostile_events: %ld desc and peer events naming vpid %u\n", ids, victim);
}

int main(int argc, char **argv) {
  static const struct option opts[] = {
      {"desc-flood", required_argument, NULL, 'd'}, {"huge", required_argument, NULL, 'h'},
      {"bytes", required_argument, NULL, 'b'},      {"traces", required_argument, NULL, 't'},
      {"forge-vpid", required_argument, NULL, 'f'}, {"ids", required_argument, NULL, 'i'},
      {"malformed-child", required_argument, NULL, 'm'},
      {"drain", required_argument, NULL, 'w'},      {"ring", required_argument, NULL, 'g'},
      {NULL, 0, NULL, 0}};
  const char *drain = NULL;
  long long ring = 32 << 20;
  long flood = 0, n_huge = 0, bytes = 0, n_traces = 0, victim = 0, ids = 1024, bad = 0;
  for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
    long v = optarg != NULL ? strtol(optarg, NULL, 10) : 0;
    switch (c) {
    case 'd': flood = v; break;
    case 'h': n_huge = v; break;
    case 'b': bytes = v; break;
    case 't': n_traces = v; break;
    case 'f': victim = v; break;
    case 'i': ids = v; break;
    case 'm': bad = v; break;
    case 'w': drain = optarg; break;
    case 'g': ring = strtoll(optarg, NULL, 10); break;
    default:
      return 2;
    }
  }
  if (bytes == 0)
    bytes = flood > 0 ? 24 : 1 << 20;
  if ((flood > 0) + (n_huge > 0) + (n_traces > 0) + (victim > 0) + (bad > 0) != 1 || bytes < 16 ||
      ids < 1 || victim > UINT32_MAX) {
    fprintf(stderr, "usage: hostile_events --desc-flood N | --huge N [--bytes B] [--drain DIR "
                    "[--ring BYTES]] | "
                    "--traces N | --forge-vpid PID [--ids K] | --malformed-child N\n");
    return 2;
  }
  vpid = (uint32_t)getpid();
  vtid = (uint32_t)syscall(SYS_gettid);
  own_names();
  if (flood > 0 && desc_flood(flood, bytes) != 0)
    return 1;
  else if (n_huge > 0 && huge(n_huge, bytes, drain, ring) != 0)
    return 1;
  else if (n_traces > 0)
    traces(n_traces);
  else if (victim > 0)
    forge((uint32_t)victim, ids);
  else if (bad > 0)
    malformed_child(bad);
  return 0;
}
