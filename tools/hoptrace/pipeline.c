/* Wires the babeltrace2 source to the assembler and an output format,
 * and prints the loss and completeness summary on stderr. */
#include "pipeline.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "assemble.h"
#include "bt_source.h"
#include "writer.h"

#define TICK_EVERY 4096u

typedef struct run {
  const pipeline_options *opts;
  assembler *asm_;
  output *out;
  obuf *buf;
  trace_writer *writer; /* NULL: traces are written on this thread */
  uint64_t since_tick;
} run;

static volatile sig_atomic_t interrupted;
static void on_signal(int sig) {
  (void)sig;
  interrupted = 1;
}

const char *trace_incomplete_reason(const trace *t, char *buf, size_t cap) {
  buf[0] = '\0';
  size_t n = 0;
  if (t->orphans)
    n += (size_t)snprintf(buf + n, cap - n, "%zu span(s) without parent; ", t->orphans);
  if (t->unfinished && n < cap)
    n += (size_t)snprintf(buf + n, cap - n, "%zu span(s) unfinished; ", t->unfinished);
  if (t->lossy && n < cap)
    n += (size_t)snprintf(buf + n, cap - n, "LTTng discarded events; ");
  if (t->timed_out && n < cap)
    n += (size_t)snprintf(buf + n, cap - n, "timed out; ");
  if (n >= 2 && n < cap)
    buf[n - 2] = '\0';
  return buf;
}

static void release_trace(void *user, trace *t) {
  assembler_release(((run *)user)->asm_, t);
}

static void on_trace(void *user, const trace *t) {
  run *r = user;
  if (r->writer != NULL) { /* the assembler keeps t for the writer */
    writer_submit(r->writer, (trace *)t, release_trace, r);
    return;
  }
  r->opts->format->trace(r->out, t);
  if (r->opts->follow)
    obuf_flush(r->buf);
}

static int64_t wall_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int on_event(void *user, const hop_event *ev) {
  run *r = user;
  const pipeline_options *o = r->opts;
  if (o->filter_trace && (ev->trace_hi != o->trace_hi || ev->trace_lo != o->trace_lo))
    return 0;
  if (assembler_add(r->asm_, ev) != 0) {
    fprintf(stderr, "hoptrace: out of memory\n");
    return 1;
  }
  if (++r->since_tick >= TICK_EVERY) {
    r->since_tick = 0;
    assembler_tick(r->asm_, assembler_now(r->asm_));
    if (r->writer != NULL)
      writer_collect(r->writer, release_trace, r);
  }
  return 0;
}

static void on_discarded(void *user, uint64_t count, int64_t begin, int64_t end) {
  (void)count;
  assembler_discarded(((run *)user)->asm_, begin, end);
}

static void on_idle(void *user) {
  run *r = user;
  /* live: the session's clock follows the wall clock */
  assembler_tick(r->asm_, wall_ns());
  if (r->writer != NULL)
    writer_collect(r->writer, release_trace, r);
}

static void summary(const bt_source_stats *src, const assembler_stats *st) {
  fprintf(stderr,
          "hoptrace: %" PRIu64 " events, %" PRIu64 " traces (%" PRIu64 " incomplete: %" PRIu64
          " spans without parent, %" PRIu64 " unfinished, %" PRIu64 " touched by loss), %" PRIu64
          " events discarded by LTTng, %" PRIu64 " packets lost, %" PRIu64 " malformed\n",
          src->hop_events, st->traces, st->incomplete_traces, st->orphan_spans,
          st->unfinished_spans, st->lossy_traces, src->discarded_events,
          src->discarded_packets, src->malformed_events);
}

int pipeline_run(const pipeline_options *opts) {
  run r = {.opts = opts};
  /* before the decoders start: a SIGINT or SIGTERM from then on ends the
   * run through its cleanup (decoders stopped, link directories gone) */
  struct sigaction sa = {.sa_handler = on_signal};
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  /* decoder processes next: they fork, before any thread starts */
  bt_source *source = bt_source_open(opts->input, opts->decoders);
  r.asm_ = source ? assembler_new(on_trace, &r, opts->grace_ns, opts->timeout_ns) : NULL;
  r.buf = r.asm_ ? obuf_new(opts->out) : NULL;
  r.out = r.buf ? opts->format->open(r.buf) : NULL;
  if (r.out == NULL) {
    fprintf(stderr, "hoptrace: out of memory\n");
    obuf_free(r.buf);
    assembler_free(r.asm_);
    bt_source_close(source);
    return 2;
  }
  /* a writer thread when one can start; else this thread writes */
  r.writer = writer_new(opts->format, r.out, r.buf, opts->follow);
  if (r.writer != NULL)
    assembler_keep_traces(r.asm_);
  bt_source_callbacks cb = {on_event, on_discarded, on_idle};
  bt_source_stats src;
  char err[512];
  int rc = bt_source_read(source, &cb, &r, &src, &interrupted, err, sizeof(err));
  if (rc != 0)
    fprintf(stderr, "hoptrace: %s\n", err);
  bt_source_close(source);
  assembler_flush(r.asm_);
  if (r.writer != NULL)
    writer_finish(r.writer, release_trace, &r);
  const assembler_stats *st = assembler_get_stats(r.asm_);
  int write_rc = opts->format->close(r.out, &src, st);
  if (obuf_flush(r.buf) != 0)
    write_rc = -1;
  obuf_free(r.buf);
  if (!opts->quiet)
    summary(&src, st);
  assembler_free(r.asm_);
  if (rc != 0)
    return 1;
  if (write_rc != 0) {
    fprintf(stderr, "hoptrace: write error: %s\n", strerror(errno));
    return 2;
  }
  return 0;
}
