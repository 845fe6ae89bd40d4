/* sim-hostile: hostile peers against a live sim-osd.
 *
 *   sim-hostile --url tcp://127.0.0.1:PORT --duration S [--seed N]
 *               [--conns N] [--storm N] [--storm-every S] [--max-frame B]
 *               [--pid OSDPID] [--rss-cap-mib 256] [--rss-margin-mib 32]
 *               [--control SOCK --debug-rate R] [--frame-timeout-ms MS]
 *               [--only ATTACK]   (one attack kind, e.g. debug-flood)
 *
 * Keeps --conns connections busy for --duration seconds, each running one
 * random attack (hostile_gen.c) and then closing; every --storm-every
 * seconds opens --storm connections at once (beyond the listener's limit)
 * and closes them. Counts, per attack, what it sent and how the OSD
 * reacted: closed the connection, error replies, normal replies, nothing.
 * Samples the OSD's VmRSS every second. At the end: the OSD must answer a
 * legitimate request, still run, keep its memory bounded (second-half max
 * <= first-half max + margin, all samples <= cap, on VmRSS less RssShmem:
 * the shared LTTng ring buffers grow with whatever session on the host
 * records the OSD, not with the OSD's own state) and, with --control,
 * have honoured at most debug-rate remote DEBUG flags a second, and, with
 * --frame-timeout-ms, have closed every slowloris connection that outlived
 * that limit (plus 2 s of slack).
 * Exit 0 when every check holds, 1 otherwise, 2 for bad usage.
 *
 * Never: talk to anything but the given loopback address, keep more than
 * --conns + --storm sockets open, or run past --duration + ~5 s. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hoptrace/error.h"
#include "hoptrace/wire.h"
#include "hostile.h"

#define DRIP_MS 200u
#define MAX_CONNS 512
#define MAX_SAMPLES 4096

typedef struct opts {
  char host[64];
  int port;
  double duration;
  uint64_t seed;
  int conns, storm;
  double storm_every;
  size_t max_frame;
  pid_t pid;
  long rss_cap_mib, rss_margin_mib;
  const char *control;
  double debug_rate;
  long frame_timeout_ms;
  attack_kind only; /* A_KINDS: every kind */
} opts;

typedef struct counts {
  unsigned long long conns, bytes, frames, requests, debug;
  unsigned long long closed_by_osd, all_answered, no_reaction, we_closed;
  unsigned long long normal_replies, error_replies, garbage, connect_failed;
} counts;

enum { S_IDLE = 0, S_CONNECTING, S_SENDING, S_LINGER };

typedef struct slot {
  int fd, state;
  attack a;
  size_t sent, allowed; /* bytes sent; bytes the drip allows so far */
  uint64_t next_drip_ms, deadline_ms, first_byte_ms;
  ht_frame_reader *reader;
  uint32_t replies;
} slot;

static counts totals[A_KINDS];
static test_rng rng;
static unsigned long long storms, storm_conns, storm_refused, storm_connect_failed;
static long expect_frame_timeout_ms; /* 0: the OSD's limit is not checked */
static unsigned long long slow_held; /* slowloris kept past that limit */

/* --- options */

static int parse_url(const char *url, opts *o) {
  const char *p = strncmp(url, "tcp://", 6) == 0 ? url + 6 : NULL;
  const char *colon = p != NULL ? strrchr(p, ':') : NULL;
  if (colon == NULL || (size_t)(colon - p) >= sizeof(o->host))
    return -1;
  memcpy(o->host, p, (size_t)(colon - p));
  o->host[colon - p] = '\0';
  o->port = atoi(colon + 1);
  return o->port > 0 && o->port < 65536 ? 0 : -1;
}

static int parse_args(int argc, char **argv, opts *o) {
  static const struct option lo[] = {
      {"url", 1, NULL, 'u'},         {"duration", 1, NULL, 'd'},
      {"seed", 1, NULL, 's'},        {"conns", 1, NULL, 'c'},
      {"storm", 1, NULL, 'S'},       {"storm-every", 1, NULL, 'E'},
      {"max-frame", 1, NULL, 'F'},   {"pid", 1, NULL, 'p'},
      {"rss-cap-mib", 1, NULL, 'C'}, {"rss-margin-mib", 1, NULL, 'M'},
      {"control", 1, NULL, 'k'},     {"debug-rate", 1, NULL, 'r'},
      {"frame-timeout-ms", 1, NULL, 'T'}, {"only", 1, NULL, 'O'},
      {0, 0, 0, 0}};
  *o = (opts){.duration = 20, .conns = 48, .storm_every = 5,
              .max_frame = HT_FRAME_DEFAULT_MAX, .rss_cap_mib = 256,
              .rss_margin_mib = 32, .debug_rate = -1, .only = A_KINDS};
  o->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
  const char *url = NULL;
  int c;
  while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    switch (c) {
    case 'u': url = optarg; break;
    case 'd': o->duration = strtod(optarg, NULL); break;
    case 's': o->seed = strtoull(optarg, NULL, 0); break;
    case 'c': o->conns = atoi(optarg); break;
    case 'S': o->storm = atoi(optarg); break;
    case 'E': o->storm_every = strtod(optarg, NULL); break;
    case 'F': o->max_frame = (size_t)strtoull(optarg, NULL, 0); break;
    case 'p': o->pid = (pid_t)atoi(optarg); break;
    case 'C': o->rss_cap_mib = atol(optarg); break;
    case 'M': o->rss_margin_mib = atol(optarg); break;
    case 'k': o->control = optarg; break;
    case 'r': o->debug_rate = strtod(optarg, NULL); break;
    case 'T': o->frame_timeout_ms = atol(optarg); break;
    case 'O':
      for (int k = 0; k < A_KINDS; k++)
        if (strcmp(optarg, attack_names[k]) == 0)
          o->only = (attack_kind)k;
      if (o->only == A_KINDS)
        return -1;
      break;
    default: return -1;
    }
  }
  if (url == NULL || parse_url(url, o) != 0 || o->duration <= 0 || o->conns < 1 ||
      o->conns > MAX_CONNS || o->storm < 0 || o->max_frame < 16 ||
      o->max_frame >= 0xffffffffu) {
    fprintf(stderr, "usage: sim-hostile --url tcp://127.0.0.1:PORT --duration S [--seed N] "
                    "[--conns N<=%d] [--storm N] [--storm-every S] [--max-frame B] [--pid P] "
                    "[--rss-cap-mib M] [--rss-margin-mib M] [--control SOCK --debug-rate R] "
                    "[--frame-timeout-ms MS] [--only ATTACK]\n",
            MAX_CONNS);
    return -1;
  }
  return 0;
}

/* --- sockets */

static int connect_nonblocking(const opts *o) {
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)o->port)};
  if (inet_pton(AF_INET, o->host, &sa.sin_addr) != 1)
    return -1;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Makes sure the process may hold every socket it plans to. */
static void raise_fd_limit(opts *o) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
    return;
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  getrlimit(RLIMIT_NOFILE, &rl);
  long room = (long)rl.rlim_cur - o->conns - 32;
  if (o->storm > room) {
    fprintf(stderr, "sim-hostile: storm size %d cut to %ld (open file limit)\n", o->storm, room);
    o->storm = room > 0 ? (int)room : 0;
  }
}

/* --- one slot's life */

static void slot_end(slot *s, int closed_by_osd) {
  counts *k = &totals[s->a.kind];
  if (s->a.kind == A_SLOWLORIS && !closed_by_osd && expect_frame_timeout_ms > 0 &&
      s->first_byte_ms != 0 &&
      watch_now_ms() - s->first_byte_ms > (uint64_t)expect_frame_timeout_ms + 2000)
    slow_held++;
  if (closed_by_osd)
    k->closed_by_osd++;
  else if (s->a.close_after_send)
    k->we_closed++;
  else if (s->a.requests > 0 && s->replies >= s->a.requests)
    k->all_answered++;
  else
    k->no_reaction++;
  close(s->fd);
  ht_frame_reader_free(s->reader);
  attack_free(&s->a);
  *s = (slot){.fd = -1, .state = S_IDLE};
}

static void slot_start(slot *s, const opts *o, uint64_t now) {
  *s = (slot){.fd = -1, .state = S_IDLE};
  if (attack_make(&s->a, &rng, o->max_frame, o->only) != 0 ||
      ht_frame_reader_new(0, &s->reader) != 0) {
    attack_free(&s->a);
    return;
  }
  counts *k = &totals[s->a.kind];
  s->fd = connect_nonblocking(o);
  if (s->fd < 0) {
    k->connect_failed++;
    ht_frame_reader_free(s->reader);
    attack_free(&s->a);
    *s = (slot){.fd = -1, .state = S_IDLE};
    return;
  }
  k->conns++;
  k->frames += s->a.frames;
  k->requests += s->a.requests;
  k->debug += s->a.debug;
  s->state = S_CONNECTING;
  s->allowed = s->a.kind == A_SLOWLORIS ? 4 + s->a.burst : s->a.bytes.len;
  if (s->allowed > s->a.bytes.len)
    s->allowed = s->a.bytes.len;
  s->next_drip_ms = now + DRIP_MS;
  s->deadline_ms = now + 3000 + s->a.linger_ms; /* connect + send + linger */
}

/* Reads what the OSD sent; 1 when it closed the connection. */
static int slot_read(slot *s) {
  uint8_t buf[16384];
  for (;;) {
    ssize_t n = recv(s->fd, buf, sizeof(buf), 0);
    if (n == 0)
      return 1;
    if (n < 0)
      return errno == EAGAIN || errno == EINTR ? 0 : 1;
    const uint8_t *p = buf;
    size_t left = (size_t)n;
    while (left > 0) {
      size_t used = 0;
      ht_envelope env;
      int rc = ht_frame_reader_feed(s->reader, p, left, &used, &env);
      p += used;
      left -= used;
      if (rc == HT_EAGAIN)
        break;
      if (rc != 0) { /* the OSD must never send garbage */
        totals[s->a.kind].garbage++;
        return 1;
      }
      s->replies++;
      if (env.type == HT_MSG_REPLY && env.status == 0)
        totals[s->a.kind].normal_replies++;
      else if (env.type == HT_MSG_ERROR || env.type == HT_MSG_REPLY)
        totals[s->a.kind].error_replies++;
      else
        totals[s->a.kind].garbage++;
    }
  }
}

/* Sends what the schedule allows; 1 when the OSD closed the connection. */
static int slot_send(slot *s, uint64_t now) {
  while (s->a.kind == A_SLOWLORIS && now >= s->next_drip_ms) {
    s->allowed += s->a.drip;
    s->next_drip_ms += DRIP_MS;
  }
  if (s->allowed > s->a.bytes.len)
    s->allowed = s->a.bytes.len;
  while (s->sent < s->allowed) {
    ssize_t n = send(s->fd, s->a.bytes.p + s->sent, s->allowed - s->sent, MSG_NOSIGNAL);
    if (n < 0)
      return errno == EAGAIN || errno == EINTR ? 0 : 1;
    if (s->sent == 0 && n > 0)
      s->first_byte_ms = now;
    s->sent += (size_t)n;
    totals[s->a.kind].bytes += (uint64_t)n;
  }
  if (s->sent == s->a.bytes.len && s->a.kind != A_SLOWLORIS) {
    s->state = S_LINGER;
    s->deadline_ms = now + s->a.linger_ms;
  }
  return 0;
}

static void slot_events(slot *s, short revents, uint64_t now) {
  if (s->state == S_CONNECTING && (revents & (POLLOUT | POLLERR | POLLHUP))) {
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      slot_end(s, 1);
      return;
    }
    s->state = S_SENDING;
  }
  if ((revents & (POLLIN | POLLHUP | POLLERR)) && s->state != S_CONNECTING && slot_read(s)) {
    slot_end(s, 1);
    return;
  }
  if (s->state == S_SENDING && slot_send(s, now)) {
    slot_end(s, 1);
    return;
  }
  if (s->state == S_LINGER && s->a.close_after_send) {
    slot_end(s, 0);
    return;
  }
  if (s->state != S_CONNECTING && s->a.requests > 0 && s->replies >= s->a.requests)
    slot_end(s, 0);
  else if (now >= s->deadline_ms)
    slot_end(s, 0);
}

/* --- connection storms */

static void storm(const opts *o) {
  int *fds = calloc((size_t)o->storm, sizeof(int));
  struct pollfd *p = calloc((size_t)o->storm, sizeof(*p));
  if (fds == NULL || p == NULL) {
    free(fds);
    free(p);
    return;
  }
  int n = 0;
  for (int i = 0; i < o->storm; i++) {
    int fd = connect_nonblocking(o);
    if (fd < 0) {
      storm_connect_failed++;
      continue;
    }
    fds[n++] = fd;
  }
  storms++;
  storm_conns += (unsigned long long)n;
  /* hold them 500 ms: refused ones are closed by the OSD at once */
  uint64_t end = watch_now_ms() + 500;
  char alive[4096];
  memset(alive, 1, sizeof(alive));
  while (watch_now_ms() < end) {
    for (int i = 0; i < n; i++)
      p[i] = (struct pollfd){fds[i], POLLIN, 0};
    if (poll(p, (nfds_t)n, 50) <= 0)
      continue;
    for (int i = 0; i < n && i < (int)sizeof(alive); i++) {
      char b;
      if (alive[i] && (p[i].revents & (POLLIN | POLLHUP | POLLERR)) &&
          recv(fds[i], &b, 1, MSG_DONTWAIT) <= 0) {
        alive[i] = 0;
        storm_refused++;
      }
    }
  }
  for (int i = 0; i < n; i++)
    close(fds[i]);
  free(fds);
  free(p);
}

/* --- the run */

static watch_mem rss[MAX_SAMPLES];
static unsigned nrss;

static void run(const opts *o) {
  slot *slots = calloc((size_t)o->conns, sizeof(*slots));
  struct pollfd *pfd = calloc((size_t)o->conns, sizeof(*pfd));
  if (slots == NULL || pfd == NULL) {
    free(slots);
    free(pfd);
    return;
  }
  for (int i = 0; i < o->conns; i++)
    slots[i] = (slot){.fd = -1};
  uint64_t start = watch_now_ms(), now = start;
  uint64_t end = start + (uint64_t)(o->duration * 1000);
  uint64_t next_sample = start, next_storm = start + (uint64_t)(o->storm_every * 1000);
  while (now < end) {
    for (int i = 0; i < o->conns; i++) {
      if (slots[i].state == S_IDLE)
        slot_start(&slots[i], o, now);
      short ev = POLLIN;
      if (slots[i].state == S_CONNECTING ||
          (slots[i].state == S_SENDING && slots[i].sent < slots[i].allowed))
        ev |= POLLOUT;
      pfd[i] = (struct pollfd){slots[i].fd, slots[i].state == S_IDLE ? 0 : ev, 0};
    }
    poll(pfd, (nfds_t)o->conns, 20);
    now = watch_now_ms();
    for (int i = 0; i < o->conns; i++)
      if (slots[i].state != S_IDLE)
        slot_events(&slots[i], pfd[i].revents, now);
    if (o->pid > 0 && now >= next_sample && nrss < MAX_SAMPLES) {
      watch_mem_kib(o->pid, &rss[nrss++]);
      next_sample += 1000;
    }
    if (o->storm > 0 && now >= next_storm) {
      storm(o);
      next_storm += (uint64_t)(o->storm_every * 1000);
    }
  }
  for (int i = 0; i < o->conns; i++)
    if (slots[i].state != S_IDLE)
      slot_end(&slots[i], 0);
  free(slots);
  free(pfd);
}

/* --- the verdict */

static void report(double secs) {
  counts all = {0};
  printf("%-16s %7s %11s %8s %8s %7s %8s %8s %8s %8s %8s %7s\n", "attack", "conns", "bytes",
         "frames", "requests", "debug", "closed", "answered", "silent", "replies", "errors",
         "garbage");
  for (int k = 0; k < A_KINDS; k++) {
    const counts *c = &totals[k];
    printf("%-16s %7llu %11llu %8llu %8llu %7llu %8llu %8llu %8llu %8llu %8llu %7llu\n",
           attack_names[k], c->conns, c->bytes, c->frames, c->requests, c->debug,
           c->closed_by_osd, c->all_answered, c->no_reaction, c->normal_replies,
           c->error_replies, c->garbage);
    all.conns += c->conns;
    all.bytes += c->bytes;
    all.frames += c->frames;
    all.requests += c->requests;
    all.debug += c->debug;
    all.closed_by_osd += c->closed_by_osd;
    all.garbage += c->garbage;
    all.normal_replies += c->normal_replies;
    all.error_replies += c->error_replies;
    all.connect_failed += c->connect_failed;
  }
  printf("storms: %llu, %llu connections, %llu closed at once by the OSD, %llu connect failures\n",
         storms, storm_conns, storm_refused, storm_connect_failed);
  printf("SIM-HOSTILE conns=%llu bytes=%llu frames=%llu requests=%llu debug=%llu "
         "debug_per_s=%.0f closed=%llu replies=%llu errors=%llu garbage=%llu "
         "connect_failed=%llu storm_conns=%llu storm_refused=%llu\n",
         all.conns, all.bytes, all.frames, all.requests, all.debug, all.debug / secs,
         all.closed_by_osd, all.normal_replies, all.error_replies, all.garbage,
         all.connect_failed, storm_conns, storm_refused);
}

/* The OSD's own resident memory: VmRSS without the shared LTTng buffers. */
static long own_kib(const watch_mem *m) {
  return m->shmem >= 0 ? m->rss - m->shmem : m->rss;
}

static int check_rss(const opts *o) {
  long first = 0, second = 0, top = 0, top_rss = 0, top_shmem = 0;
  for (unsigned i = 0; i < nrss; i++) {
    if (rss[i].rss < 0) {
      fprintf(stderr, "sim-hostile: FAIL: the OSD (pid %d) is gone at %u s\n", (int)o->pid, i);
      return -1;
    }
    long own = own_kib(&rss[i]);
    if (i < nrss / 2)
      first = own > first ? own : first;
    else
      second = own > second ? own : second;
    top = own > top ? own : top;
    top_rss = rss[i].rss > top_rss ? rss[i].rss : top_rss;
    top_shmem = rss[i].shmem > top_shmem ? rss[i].shmem : top_shmem;
  }
  printf("osd VmRSS/RssShmem (KiB) every 10 s:");
  for (unsigned i = 0; i < nrss; i += 10)
    printf(" %ld/%ld", rss[i].rss, rss[i].shmem);
  printf("\n");
  printf("osd memory: %u samples; VmRSS max %ld KiB (RssShmem max %ld); own (VmRSS - RssShmem): "
         "first-half max %ld KiB, second-half max %ld KiB, max %ld KiB (cap %ld MiB, margin "
         "%ld MiB)\n",
         nrss, top_rss, top_shmem, first, second, top, o->rss_cap_mib, o->rss_margin_mib);
  int ok = nrss >= 2 && top <= o->rss_cap_mib * 1024 && second <= first + o->rss_margin_mib * 1024;
  if (!ok)
    fprintf(stderr, "sim-hostile: FAIL: OSD memory not bounded\n");
  return ok ? 0 : -1;
}

static int check_debug(const opts *o, double secs, unsigned long long sent) {
  unsigned long long honoured, refused;
  if (watch_debug_counters(o->control, &honoured, &refused) != 0)
    return -1;
  /* a token bucket: burst = rate, then rate a second */
  double limit = o->debug_rate * (secs + 2) + o->debug_rate + 1;
  printf("osd remote DEBUG: %llu honoured, %llu refused (limit %.0f at %.1f/s)\n", honoured,
         refused, limit, o->debug_rate);
  if ((double)honoured > limit || (sent > 0 && honoured + refused == 0)) {
    fprintf(stderr, "sim-hostile: FAIL: remote DEBUG not rate-limited (or never seen)\n");
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  opts o;
  if (parse_args(argc, argv, &o) != 0)
    return 2;
  signal(SIGPIPE, SIG_IGN);
  raise_fd_limit(&o);
  rng.state = o.seed;
  expect_frame_timeout_ms = o.frame_timeout_ms;
  printf("sim-hostile: seed %llu, %s:%d, %.0f s, %d connections, storms of %d every %.0f s\n",
         (unsigned long long)o.seed, o.host, o.port, o.duration, o.conns, o.storm,
         o.storm_every);
  fflush(stdout);
  uint64_t t0 = watch_now_ms();
  run(&o);
  double secs = (double)(watch_now_ms() - t0) / 1000.0;
  report(secs);
  int fail = 0;
  if (totals[A_RANDOM].garbage + totals[A_VALID_OPS].garbage + totals[A_DEBUG_FLOOD].garbage +
          totals[A_BAD_ENVELOPE].garbage + totals[A_BAD_CONTEXT].garbage > 0) {
    fprintf(stderr, "sim-hostile: FAIL: the OSD sent bytes that are not reply frames\n");
    fail = 1;
  }
  if (expect_frame_timeout_ms > 0) {
    printf("slowloris: %llu of %llu connections closed by the OSD, %llu held past %ld ms + 2 s\n",
           totals[A_SLOWLORIS].closed_by_osd, totals[A_SLOWLORIS].conns, slow_held,
           expect_frame_timeout_ms);
    if (slow_held > 0) {
      fprintf(stderr, "sim-hostile: FAIL: the OSD held slow frames past its frame timeout\n");
      fail = 1;
    }
  }
  if (watch_probe(o.host, o.port, 5000) != 0) {
    fprintf(stderr, "sim-hostile: FAIL: the OSD does not answer a legitimate request\n");
    fail = 1;
  } else {
    printf("osd answers a legitimate request after the run\n");
  }
  if (o.pid > 0 && (check_rss(&o) != 0 || kill(o.pid, 0) != 0))
    fail = 1;
  unsigned long long debug_sent = 0;
  for (int k = 0; k < A_KINDS; k++)
    debug_sent += totals[k].debug;
  if (o.control != NULL && o.debug_rate >= 0 && check_debug(&o, secs, debug_sent) != 0)
    fail = 1;
  printf("sim-hostile: seed %llu: %s\n", (unsigned long long)o.seed, fail ? "FAILED" : "passed");
  return fail;
}
