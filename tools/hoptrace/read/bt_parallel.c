/* Decoder processes and the merge (bt_parallel.h). Each decoder shares
 * DECODER_BLOCKS blocks with this process and a socket: the decoder
 * sends "block i is full" (or a big event inline, or its end with its
 * stats), this process sends back "block i is free". A socket, not a
 * pipe, so that a send to a dead peer fails (MSG_NOSIGNAL) instead of
 * raising SIGPIPE. */
#include "read/bt_parallel.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "read/event_block.h"
#include "read/stream_split.h"

enum { MSG_BLOCK = 1, MSG_BIG = 2, MSG_END = 3 };

typedef struct decoder_msg {
  uint32_t type;
  uint32_t index;     /* MSG_BLOCK */
  uint64_t big_bytes; /* MSG_BIG: a block of this size follows */
  int32_t rc;         /* MSG_END */
  bt_source_stats stats;
  char err[512];
} decoder_msg;

typedef struct decoder {
  pid_t pid;
  int sock;
  unsigned char *blocks;
  event_block *cur; /* block being merged, NULL when none */
  bool cur_big;     /* cur is malloc'd (MSG_BIG), not a shared block */
  uint32_t cur_index, at;
  const event_record *head; /* next record to merge */
  const hop_event *head_ev;
  bool ended;
  decoder_msg end;
  bool reaped;
  int exit_status;
  int signal; /* that ended it, 0 when none */
} decoder;

struct bt_parallel {
  size_t n;
  decoder d[STREAM_SPLIT_MAX_GROUPS];
};

static int send_all(int fd, const void *buf, size_t len) {
  const unsigned char *p = buf;
  while (len > 0) {
    ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    p += w;
    len -= (size_t)w;
  }
  return 0;
}

static int recv_all(int fd, void *buf, size_t len) {
  unsigned char *p = buf;
  while (len > 0) {
    ssize_t r = recv(fd, p, len, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return -1;
    p += r;
    len -= (size_t)r;
  }
  return 0;
}

static event_block *block_at(unsigned char *blocks, uint32_t i) {
  return (event_block *)(blocks + (size_t)i * DECODER_BLOCK_BYTES);
}

/* ---- the decoder process ---- */

typedef struct child {
  unsigned char *blocks;
  int sock;
  uint32_t never_used; /* blocks [never_used, DECODER_BLOCKS) not yet used */
  int cur;             /* block being filled, -1 when none */
} child;

static atomic_int child_stop;
static void on_child_signal(int sig) {
  (void)sig;
  child_stop = 1;
}

static int child_take_block(child *c) {
  uint32_t i;
  if (c->never_used < DECODER_BLOCKS)
    i = c->never_used++;
  else if (recv_all(c->sock, &i, sizeof(i)) != 0 || i >= DECODER_BLOCKS)
    return -1;
  c->cur = (int)i;
  event_block_init(block_at(c->blocks, i));
  return 0;
}

/* Hands the current block over when it holds records. */
static int child_send_block(child *c) {
  if (c->cur < 0 || block_at(c->blocks, (uint32_t)c->cur)->n_records == 0)
    return 0;
  decoder_msg m = {.type = MSG_BLOCK, .index = (uint32_t)c->cur};
  c->cur = -1;
  return send_all(c->sock, &m, sizeof(m));
}

/* An event bigger than a block: a block of its own, through the socket. */
static int child_send_big(child *c, const hop_event *ev) {
  size_t cap = sizeof(event_block) + 16 + event_record_size(ev);
  event_block *big = malloc(cap);
  if (big == NULL)
    return -1;
  event_block_init(big);
  int rc = event_block_put_event(big, cap, ev);
  decoder_msg m = {.type = MSG_BIG, .big_bytes = big->used};
  if (rc == 0)
    rc = send_all(c->sock, &m, sizeof(m)) == 0 && send_all(c->sock, big, big->used) == 0 ? 0 : -1;
  free(big);
  return rc;
}

/* ev, or a loss when ev is NULL. */
static int child_put(child *c, const hop_event *ev, const hop_loss *loss) {
  for (;;) {
    if (c->cur < 0 && child_take_block(c) != 0)
      return -1;
    event_block *b = block_at(c->blocks, (uint32_t)c->cur);
    int rc = ev != NULL ? event_block_put_event(b, DECODER_BLOCK_BYTES, ev)
                        : event_block_put_discarded(b, DECODER_BLOCK_BYTES, loss);
    if (rc == 0)
      return 0;
    if (b->n_records == 0) /* fits no block: only an event can be that big */
      return ev != NULL ? child_send_big(c, ev) : -1;
    if (child_send_block(c) != 0)
      return -1;
  }
}

static int child_event(void *user, const hop_event *ev) {
  return child_put(user, ev, NULL);
}

static void child_discarded(void *user, const hop_loss *loss) {
  child *c = user;
  if (child_put(c, NULL, loss) != 0)
    child_stop = 1;
}

static void child_main(const char *input, bt_read_fn read, unsigned char *blocks, int sock) {
  struct sigaction sa = {.sa_handler = on_child_signal};
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  child c = {.blocks = blocks, .sock = sock, .cur = -1};
  bt_source_callbacks cb = {child_event, child_discarded, NULL};
  decoder_msg m = {.type = MSG_END};
  m.rc = read(input, &cb, &c, &m.stats, &child_stop, m.err, sizeof(m.err));
  if (child_send_block(&c) != 0 || send_all(sock, &m, sizeof(m)) != 0)
    _exit(1);
  _exit(m.rc == 0 ? 0 : 1);
}

/* ---- this process ---- */

bt_parallel *bt_parallel_start(char *const *inputs, size_t n, bt_read_fn read,
                               char *err, size_t err_len) {
  bt_parallel *p = calloc(1, sizeof(*p));
  if (p == NULL || n > STREAM_SPLIT_MAX_GROUPS) {
    snprintf(err, err_len, "out of memory");
    free(p);
    return NULL;
  }
  for (size_t i = 0; i < STREAM_SPLIT_MAX_GROUPS; i++)
    p->d[i].sock = -1;
  pid_t parent = getpid();
  for (size_t i = 0; i < n; i++) {
    decoder *d = &p->d[i];
    int sv[2];
    d->blocks = mmap(NULL, DECODER_BLOCKS * DECODER_BLOCK_BYTES, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (d->blocks == MAP_FAILED) {
      d->blocks = NULL;
      snprintf(err, err_len, "cannot map decoder memory: %s", strerror(errno));
      break;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      snprintf(err, err_len, "cannot create a decoder socket: %s", strerror(errno));
      break;
    }
    d->pid = fork();
    if (d->pid == 0) {
      /* a decoder dies with the reading process, even of SIGKILL (no
       * orphan decoding on, holding its link directory); and the parent
       * may have died before this line */
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(1);
      close(sv[0]);
      for (size_t j = 0; j < i; j++) /* the earlier decoders' ends */
        close(p->d[j].sock);
      child_main(inputs[i], read, d->blocks, sv[1]);
    }
    close(sv[1]);
    d->sock = sv[0];
    if (d->pid < 0) {
      snprintf(err, err_len, "cannot start a decoder process: %s", strerror(errno));
      break;
    }
    p->n = i + 1;
  }
  if (p->n < n) {
    bt_parallel_stop(p);
    return NULL;
  }
  return p;
}

static void release_current(decoder *d) {
  if (d->cur == NULL)
    return;
  if (d->cur_big)
    free(d->cur);
  else if (!d->ended)
    (void)send_all(d->sock, &d->cur_index, sizeof(d->cur_index));
  d->cur = NULL;
}

/* Waits for a decoder that said its end, or closed its socket (nothing
 * else closes its end: it is exiting, so the wait is short). 0 when it
 * exited with 0. */
static int reap(decoder *d) {
  int status = 0;
  d->reaped = true;
  d->exit_status = -1; /* unknown, when it cannot be waited for */
  d->signal = 0;
  while (waitpid(d->pid, &status, 0) < 0)
    if (errno != EINTR)
      return -1;
  d->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  d->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return d->exit_status == 0 ? 0 : -1;
}

/* "decoder process PID [what: ]how it ended" in err, once reaped: a
 * crash named by its signal. */
static void say_ended(const decoder *d, const char *what, char *err, size_t err_len) {
  char how[128];
  if (d->signal != 0)
    snprintf(how, sizeof(how), "killed by signal %d (%s)", d->signal, strsignal(d->signal));
  else if (d->exit_status >= 0)
    snprintf(how, sizeof(how), "exited with status %d", d->exit_status);
  else
    snprintf(how, sizeof(how), "not waited for");
  snprintf(err, err_len, "decoder process %d %s%s%s", (int)d->pid, what, *what ? ": " : "", how);
}

/* Moves d's head to its next record, taking the next block when the
 * current one is done; sets ended at the decoder's end. */
static int advance(decoder *d, char *err, size_t err_len) {
  for (;;) {
    if (d->cur != NULL) {
      d->head = event_block_next(d->cur, &d->at, &d->head_ev);
      if (d->head != NULL)
        return 0;
      if (d->at < d->cur->used) {
        snprintf(err, err_len, "decoder process %d sent a malformed block", (int)d->pid);
        return -1;
      }
      release_current(d);
    }
    decoder_msg m;
    if (recv_all(d->sock, &m, sizeof(m)) != 0) {
      d->ended = true;
      reap(d);
      say_ended(d, "ended without finishing", err, err_len);
      return -1;
    }
    d->at = 0;
    if (m.type == MSG_BLOCK && m.index < DECODER_BLOCKS &&
        block_at(d->blocks, m.index)->used <= DECODER_BLOCK_BYTES) {
      d->cur = block_at(d->blocks, m.index);
      d->cur_index = m.index;
      d->cur_big = false;
    } else if (m.type == MSG_BIG && m.big_bytes >= sizeof(event_block) &&
               m.big_bytes <= UINT32_MAX && (d->cur = malloc(m.big_bytes)) != NULL) {
      d->cur_big = true;
      if (recv_all(d->sock, d->cur, m.big_bytes) != 0 || d->cur->used != m.big_bytes) {
        snprintf(err, err_len, "decoder process %d sent a malformed event", (int)d->pid);
        return -1;
      }
    } else if (m.type == MSG_END) {
      d->ended = true;
      d->end = m;
      d->end.err[sizeof(d->end.err) - 1] = '\0';
      return 0;
    } else {
      snprintf(err, err_len, "decoder process %d: bad message or out of memory", (int)d->pid);
      return -1;
    }
  }
}

/* Adds what a decoder read. Its hop events count once merged (the
 * caller's count: those of a decoder that never ended are not lost). */
static void add_stats(bt_source_stats *sum, const bt_source_stats *s) {
  sum->events += s->events;
  sum->malformed_events += s->malformed_events;
  sum->foreign_names += s->foreign_names;
  sum->discarded_events += s->discarded_events;
  sum->discarded_packets += s->discarded_packets;
}

/* The decoder whose head comes first (ties: the lower index), or NULL.
 * A malformed event without time (ts_ns 0) comes at once, as a message
 * without time does in the merging sink (bt_merge.c). */
static decoder *earliest(bt_parallel *p) {
  decoder *best = NULL;
  for (size_t i = 0; i < p->n; i++) {
    decoder *d = &p->d[i];
    if (!d->ended && (best == NULL || d->head->ts_ns < best->head->ts_ns))
      best = d;
  }
  return best;
}

/* A decoder said it failed (e.g. it could not open its streams): the
 * run fails at once, as one graph over the whole trace would, instead of
 * merging the other decoders' events into a partial output. */
static int said_failure(const decoder *d, char *err, size_t err_len) {
  if (!d->ended || d->end.type != MSG_END || d->end.rc == 0)
    return 0;
  snprintf(err, err_len, "%s", d->end.err);
  return -1;
}

int bt_parallel_read(bt_parallel *p, const bt_source_callbacks *cb, void *user,
                     bt_source_stats *stats, atomic_int *stop,
                     char *err, size_t err_len) {
  *stats = (bt_source_stats){0};
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < p->n; i++)
    rc = advance(&p->d[i], err, err_len);
  for (size_t i = 0; rc == 0 && i < p->n; i++)
    rc = said_failure(&p->d[i], err, err_len);
  decoder *d;
  uint64_t delivered = 0; /* hop events: known even when a decoder never ends */
  while (rc == 0 && (d = earliest(p)) != NULL && !(stop != NULL && *stop)) {
    const event_record *r = d->head;
    if (r->type == EVENT_RECORD_EVENT) {
      delivered += d->head_ev->kind != HOP_MALFORMED; /* counted as malformed */
      if (cb->on_event(user, d->head_ev) != 0)
        break;
    } else if (cb->on_discarded != NULL) {
      hop_loss loss = event_block_loss(r, d->head_ev);
      cb->on_discarded(user, &loss);
    }
    rc = advance(d, err, err_len);
    if (rc == 0)
      rc = said_failure(d, err, err_len);
  }
  stats->hop_events = delivered;
  for (size_t i = 0; i < p->n; i++) {
    d = &p->d[i];
    if (d->end.type != MSG_END) /* never said its end: bt_parallel_stop kills it */
      continue;
    add_stats(stats, &d->end.stats);
    if (d->end.rc != 0 && rc == 0) {
      snprintf(err, err_len, "%s", d->end.err);
      rc = -1;
    }
    if (reap(d) != 0 && rc == 0) { /* e.g. valgrind found an error in it */
      say_ended(d, "", err, err_len);
      rc = -1;
    }
  }
  if (stats->events < stats->hop_events) /* a decoder never said its count */
    stats->events = stats->hop_events;
  return rc;
}

void bt_parallel_stop(bt_parallel *p) {
  if (p == NULL)
    return;
  for (size_t i = 0; i < STREAM_SPLIT_MAX_GROUPS; i++) {
    decoder *d = &p->d[i];
    if (d->cur_big)
      free(d->cur);
    d->cur = NULL;
    if (d->sock >= 0)
      close(d->sock); /* a decoder waiting on it ends */
    if (d->pid > 0 && !d->reaped) {
      kill(d->pid, SIGKILL); /* bounded: no waiting on a busy graph */
      while (waitpid(d->pid, NULL, 0) < 0 && errno == EINTR) {
      }
    }
    if (d->blocks != NULL)
      munmap(d->blocks, DECODER_BLOCKS * DECODER_BLOCK_BYTES);
  }
  free(p);
}
