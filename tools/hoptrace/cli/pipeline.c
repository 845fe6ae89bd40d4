/* Wires the babeltrace2 source to the assembler and an output format,
 * and tells how the run ended (its summary: cli/summary.h). */
#include "cli/pipeline.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "assemble/align.h"
#include "assemble/assemble.h"
#include "assemble/host_health.h"
#include "cli/flight_follow.h"
#include "cli/live_end.h"
#include "cli/summary.h"
#include "output/utf8.h"
#include "output/writer.h"
#include "read/bt_hosts.h"
#include "read/bt_source.h"
#include "read/capture_json.h"
#include "read/limits.h"
#include "read/trace_dirs.h"
#include "util/grow.h"

#define TICK_EVERY 4096u

typedef struct run {
  const pipeline_options *opts;
  bool flight; /* the input is flight-recorder snapshots */
  uint64_t not_captured, not_kept; /* traces not written without --all */
  assembler *asm_;
  output *out;
  obuf *buf;
  trace_writer *writer; /* NULL: traces are written on this thread */
  uint64_t since_tick;
  host_health *hosts;
  /* clock alignment (NULL: none); live: fitted as it goes */
  align_state *align;
  bool align_live, warm;
  int64_t first_event_ns, last_fit_ns;
  uint64_t rpcs_at_fit;
  bool cut_short; /* the reading stopped before the input's end */
  trace **held; /* live: traces emitted during the warm-up, in order */
  size_t n_held, cap_held;
} run;

/* The signal that interrupted the run: set by the handler, read by the
 * main, writer and ship sender threads, hence an atomic (lock-free, so
 * safe in a handler) and not a volatile sig_atomic_t. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the signal flag must be lock-free");
static atomic_int interrupted;
/* Ends the reading: a signal, or pipeline_stop */
static atomic_int stop_reading;
/* Following snapshots, the first signal is the run's end (what it holds
 * written, the output whole); a second one interrupts. */
static atomic_int signal_ends;
static void on_signal(int sig) {
  if (!signal_ends || stop_reading)
    interrupted = sig;
  stop_reading = 1;
}

void pipeline_stop(void) { stop_reading = 1; }

void pipeline_catch_signals(void) {
  struct sigaction sa = {.sa_handler = on_signal};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  bt_trace_dirs_stop_on(&interrupted); /* `report /` must stop on SIGINT */
}

int pipeline_interrupted(void) { return interrupted; }

static void on_alarm(int sig) { (void)sig; }

/* Interrupted: the last writes may sit on a reader that never reads (a
 * full pipe); a second later SIGALRM, caught without SA_RESTART, makes
 * the blocked write fail (EINTR) and the run ends. */
static void bound_last_writes(void) {
  struct sigaction sa = {.sa_handler = on_alarm};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, NULL);
  alarm(1);
}

static void release_trace(void *user, trace *t) {
  assembler_release(((run *)user)->asm_, t);
}

static void write_trace(run *r, const trace *t) {
  if (r->writer != NULL) { /* the assembler keeps t for the writer */
    writer_submit(r->writer, (trace *)t, release_trace, r);
    return;
  }
  r->opts->format->trace(r->out, t);
  if (r->opts->follow)
    obuf_flush(r->buf);
}

static void fit(run *r) {
  char err[256];
  if (align_solve(r->align, err, sizeof(err)) != 0 && !r->opts->quiet)
    fprintf(stderr, "hoptrace: %s\n", err);
  r->last_fit_ns = assembler_now(r->asm_);
  r->rpcs_at_fit = align_rpcs(r->align);
}

/* Every host seen so far has a clock map. */
static bool all_aligned(const run *r) {
  clock_sync_summary sum;
  clock_sync_get_summary(align_clock(r->align), &sum);
  return sum.aligned == sum.hosts && (size_t)sum.hosts >= host_health_count(r->hosts);
}

/* Live: the first fit once the warm-up has passed and it aligns every
 * host seen (or, failing that, 4 warm-ups, or the input ended); the
 * traces held until then are written with it, in their order. */
static void end_warmup(run *r, bool at_end) {
  if (r->align == NULL || r->warm || (r->first_event_ns == 0 && !at_end))
    return; /* the warm-up starts with the first event */
  int64_t waited = assembler_now(r->asm_) - r->first_event_ns;
  if (!at_end && waited < r->opts->align_warmup_ns)
    return;
  fit(r);
  if (!at_end && !all_aligned(r) && waited < 4 * r->opts->align_warmup_ns)
    return;
  r->warm = true;
  for (size_t i = 0; i < r->n_held; i++) {
    align_apply(r->align, r->held[i]);
    write_trace(r, r->held[i]);
  }
  free(r->held);
  r->held = NULL;
  r->n_held = r->cap_held = 0;
}

static bool hold(run *r, const trace *t) {
  if (ht_grow(&r->held, &r->cap_held, r->n_held + 1, sizeof(trace *), 256) != 0)
    return false;
  r->held[r->n_held++] = (trace *)t;
  return true;
}

static void on_trace(void *user, const trace *t) {
  run *r = user;
  if (r->align != NULL && r->align_live) {
    align_collect(r->align, t);
    /* traces can wait only when the assembler keeps them for a writer */
    if (!r->warm && r->writer != NULL && hold(r, t))
      return;
    r->warm = true;
    if (align_rpcs(r->align) > r->rpcs_at_fit &&
        assembler_now(r->asm_) - r->last_fit_ns >= 1000000000)
      fit(r);
  }
  if (r->align != NULL)
    align_apply(r->align, (trace *)t);
  write_trace(r, t);
}

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The output failed (EPIPE: `| head` has what it wanted; ENOSPC): the
 * rest of the input would be read for nothing. */
static bool output_failed(run *r) {
  return r->writer != NULL ? writer_failed(r->writer) : obuf_error(r->buf) != 0;
}

static int on_event(void *user, const hop_event *ev) {
  run *r = user;
  const pipeline_options *o = r->opts;
  if (o->filter_trace && (ev->trace_hi != o->trace_hi || ev->trace_lo != o->trace_lo))
    return 0;
  if (assembler_add(r->asm_, ev) != 0) {
    fprintf(stderr, "hoptrace: out of memory\n");
    r->cut_short = true;
    return 1;
  }
  if (r->first_event_ns == 0)
    r->first_event_ns = ev->ts_ns;
  host_health_event(r->hosts, ev);
  if (++r->since_tick >= TICK_EVERY) {
    r->since_tick = 0;
    if (output_failed(r)) {
      r->cut_short = true;
      return 1;
    }
    end_warmup(r, false);
    assembler_tick(r->asm_, assembler_now(r->asm_));
    if (r->writer != NULL)
      writer_collect(r->writer, release_trace, r);
  }
  return 0;
}

static void on_discarded(void *user, const hop_loss *loss) {
  run *r = user;
  host_health_discarded(r->hosts, loss->hostname, loss->events, loss->packets);
  assembler_discarded(r->asm_, loss);
}

static void check_trace(void *user, trace *t) { host_health_check(((run *)user)->hosts, t); }

/* Without --all: of flight snapshots only the captured traces, of a
 * recording only the kept ones (a flight-mode process records every
 * request; its sampler's SAMPLED flag says which are kept). */
static bool keep_trace(void *user, const trace *t) {
  run *r = user;
  if (r->flight && t->capture == NULL) {
    r->not_captured++;
    return false;
  }
  if (!r->flight && trace_recorded_not_kept(t)) {
    r->not_kept++;
    return false;
  }
  return true;
}

static void on_idle(void *user) {
  run *r = user;
  /* live: the trace's time runs on from its last event's, at the
   * monotonic clock's pace (assembler_idle), never the wall clock's */
  end_warmup(r, false);
  assembler_idle(r->asm_, mono_ns());
  if (r->writer != NULL)
    writer_collect(r->writer, release_trace, r);
}

/* First pass over a file input: every trace's cross-host RPCs into the
 * clock fit, nothing written. */
static void collect_only(void *user, const trace *t) { align_collect(user, t); }
static int collect_event(void *user, const hop_event *ev) {
  return assembler_add(user, ev) != 0 ? (fprintf(stderr, "hoptrace: out of memory\n"), 1) : 0;
}
static void collect_discarded(void *user, const hop_loss *loss) { (void)user, (void)loss; }

static int alignment_pass(const pipeline_options *opts, align_state *al) {
  bt_source *source = bt_source_open(opts->inputs, opts->n_inputs, opts->decoders);
  assembler *a = source ? assembler_new(collect_only, al, opts->grace_ns, opts->timeout_ns) : NULL;
  if (a == NULL) {
    fprintf(stderr, "hoptrace: out of memory\n");
    bt_source_close(source);
    return 1;
  }
  bt_source_callbacks cb = {collect_event, collect_discarded, NULL};
  bt_source_stats src;
  char err[512];
  int rc = bt_source_read(source, &cb, a, &src, &interrupted, err, sizeof(err));
  if (rc != 0 && !interrupted)
    fprintf(stderr, "hoptrace: %s\n", err);
  bt_source_close(source);
  assembler_flush(a);
  assembler_free(a);
  ht_drops = (tool_drops){0}; /* the writing pass counts them again */
  if (rc == 0 && !interrupted && align_solve(al, err, sizeof(err)) != 0) {
    fprintf(stderr, "hoptrace: %s\n", err);
    rc = -1;
  }
  return rc != 0 || interrupted ? 1 : 0;
}

/* Alignment when asked for and the input holds several hosts: NULL
 * otherwise. *failed on an error of the first pass. */
static align_state *start_alignment(const pipeline_options *opts, int *hosts, int *failed) {
  *failed = 0;
  *hosts = opts->align ? bt_count_hosts(opts->inputs, opts->n_inputs) : 0;
  if (*hosts < 2)
    return NULL;
  align_state *al = align_new(opts->align_reference);
  if (al == NULL) {
    fprintf(stderr, "hoptrace: out of memory\n");
    *failed = 1;
    return NULL;
  }
  if (!opts->follow && alignment_pass(opts, al) != 0) {
    align_free(al);
    *failed = 1;
    return NULL;
  }
  return al;
}

/* A host is called stalled when its last event came this long before the
 * input's last: twice the grace period, at least 5 s (a host of a busy
 * cluster is never quiet that long; an idle one is said to be, honestly). */
static int64_t host_stall_ns(const pipeline_options *opts) {
  if (opts->grace_ns > INT64_MAX / 2) /* flight snapshots: windows of their own */
    return INT64_MAX;
  return 2 * opts->grace_ns > 5000000000 ? 2 * opts->grace_ns : 5000000000;
}

static int run_pipeline(const pipeline_options *given) {
  /* Flight snapshots are read whole before any trace is written: a
   * capture (a person's, minutes later) may come long after the trace's
   * spans, and a snapshot's size is its rings', so holding every trace
   * until the end is bounded by them. */
  pipeline_options held = *given;
  const pipeline_options *opts = &held;
  bool follow_dirs = given->follow && strncmp(given->inputs[0], "net://", 6) != 0;
  signal_ends = follow_dirs;
  run r = {.opts = opts, .flight = follow_dirs || (!given->follow &&
                                   bt_inputs_are_flight(given->inputs, given->n_inputs))};
  if (r.flight)
    held.grace_ns = held.timeout_ns = INT64_MAX;
  /* before the decoders start: a SIGINT or SIGTERM from then on ends the
   * run through its cleanup (decoders stopped, link directories gone) */
  pipeline_catch_signals();
  int hosts = 0, failed = 0;
  r.align = start_alignment(opts, &hosts, &failed);
  if (failed || interrupted)
    return 1;
  r.align_live = r.align != NULL && opts->follow;
  output_info info = {.align = r.align, .n_hosts = hosts, .stall_ns = host_stall_ns(opts),
                      .follow = opts->follow, .user = opts->format_user};
  capture_files *captures = r.flight ? malloc(sizeof(*captures)) : NULL;
  if (captures != NULL)
    capture_files_find(opts->inputs, opts->n_inputs, captures);
  info.captures = captures;
  /* decoder processes next: they fork, before any thread starts */
  bt_source *source =
      follow_dirs ? NULL : bt_source_open(opts->inputs, opts->n_inputs, opts->decoders);
  r.hosts = host_health_new();
  info.hosts = r.hosts;
  r.asm_ = (source || follow_dirs) && r.hosts ? assembler_new(on_trace, &r, opts->grace_ns, opts->timeout_ns)
                             : NULL;
  if (r.asm_ != NULL)
    assembler_set_check(r.asm_, check_trace, &r);
  /* a trace asked for by its id is written, captured and kept or not */
  if (r.asm_ != NULL && !opts->all && !opts->filter_trace)
    assembler_set_keep(r.asm_, keep_trace, &r);
  r.buf = r.asm_ ? obuf_new(opts->out) : NULL;
  r.out = r.buf ? opts->format->open(r.buf, &info) : NULL;
  if (r.out == NULL) {
    fprintf(stderr, "hoptrace: out of memory\n");
    obuf_free(r.buf);
    assembler_free(r.asm_);
    bt_source_close(source);
    align_free(r.align);
    host_health_free(r.hosts);
    free(captures);
    return 2;
  }
  /* a writer thread when one can start; else this thread writes */
  r.writer = writer_new(opts->format, r.out, r.buf, opts->follow, &interrupted);
  if (r.writer != NULL)
    assembler_keep_traces(r.asm_);
  bt_source_callbacks cb = {on_event, on_discarded, on_idle};
  bt_source_stats src;
  char err[512];
  struct timespec started;
  clock_gettime(CLOCK_REALTIME, &started);
  follow_options fo = {given->grace_ns, given->timeout_given ? given->timeout_ns : -1,
                       given->all};
  follow_stats fs;
  int rc = follow_dirs ? flight_follow_read(opts->inputs, opts->n_inputs, r.asm_, &fo, &cb, &r,
                                            &src, &fs, &stop_reading, err, sizeof(err))
                       : bt_source_read(source, &cb, &r, &src, &stop_reading, err, sizeof(err));
  if (rc != 0 && !interrupted)
    fprintf(stderr, "hoptrace: %s\n", err);
  bt_source_close(source);
  /* a live input that ended by itself (not stopped: a collector given
   * up on, a failed output): whole, or not (live_end.h) */
  bool live_end = rc == 0 && !stop_reading && !r.cut_short &&
                  strncmp(opts->inputs[0], "net://", 6) == 0;
  uint64_t only[2] = {opts->trace_hi, opts->trace_lo};
  relay_check relay = {0};
  if (live_end && opts->relay_dir == NULL)
    live_end_unchecked(r.hosts, r.asm_);
  int unclean = live_end && opts->relay_dir != NULL
                    ? live_end_check(&relay, opts->relay_dir, opts->inputs, opts->n_inputs,
                                     r.hosts, r.asm_,
                                     (int64_t)started.tv_sec * 1000000000 + started.tv_nsec,
                                     opts->filter_trace ? only : NULL, &stop_reading)
                    : 0;
  assembler_flush(r.asm_);
  end_warmup(&r, true);
  if (r.writer != NULL)
    writer_finish(r.writer, release_trace, &r);
  const assembler_stats *st = assembler_get_stats(r.asm_);
  /* unchecked: not whole when a trace written was marked (one not kept
   * was not written) */
  if (live_end && opts->relay_dir == NULL)
    unclean = st->unreceived_traces > 0;
  /* interrupted or failed: the traces written so far go out, the
   * document's end does not (it must not look complete) */
  if (interrupted)
    bound_last_writes();
  if (interrupted || rc != 0) {
    obuf_flush(r.buf);
    obuf_discard(r.buf);
  }
  int write_rc = opts->format->close(r.out, &src, st);
  if (obuf_flush(r.buf) != 0)
    write_rc = -1;
  alarm(0);
  if (interrupted || write_rc != 0) /* what stdio still holds would be written at exit */
    __fpurge(opts->out);
  int write_errno = obuf_errno(r.buf);
  unsigned long long replaced = r.buf->replaced;
  obuf_free(r.buf);
  if (!opts->quiet) {
    run_summary sum = {&src, st, replaced, r.flight, opts->follow, r.not_captured,
                       r.not_kept, follow_dirs ? &fs : NULL, r.hosts,
                       host_stall_ns(opts), r.align, hosts};
    summary_print(&sum);
  }
  if (live_end && (!opts->quiet || unclean != 0))
    live_end_print(&relay, unclean, opts->relay_dir, r.hosts, st->unreceived_traces);
  relay_check_free(&relay);
  assembler_free(r.asm_);
  align_free(r.align);
  host_health_free(r.hosts);
  free(captures);
  if (rc != 0 || unclean != 0)
    return 1;
  if (write_rc != 0 && !interrupted) {
    fprintf(stderr, "hoptrace: cannot write %s: %s\n",
            opts->out_name ? opts->out_name : "the output",
            strerror(write_errno ? write_errno : EIO));
    return 2;
  }
  return limits_dropped() ? PIPELINE_NOT_WHOLE : 0;
}

int pipeline_run(const pipeline_options *opts) {
  int rc = run_pipeline(opts);
  int sig = interrupted;
  if (sig != 0) {
    fprintf(stderr, "hoptrace: interrupted by %s: the output is incomplete\n",
            sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal");
    return 128 + sig;
  }
  return rc;
}
