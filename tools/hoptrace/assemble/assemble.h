/* Builds traces from hop events and hands each one out once it is
 * complete (every span started and ended, every parent present, quiet
 * for a grace period) or, failing that, after a timeout or at the end of
 * the input, marked incomplete. Memory is bounded by the traces still
 * open, not by the size of the input. */
#ifndef HT_TOOL_ASSEMBLE_H
#define HT_TOOL_ASSEMBLE_H

#include "assemble/model.h"
#include "read/event.h"

typedef struct assembler assembler;

/* Called once per trace; the trace is freed after it returns, unless
 * the assembler keeps traces (assembler_keep_traces). */
typedef void (*trace_ready_fn)(void *user, const trace *t);

typedef struct assembler_stats {
  uint64_t traces, incomplete_traces, spans, orphan_spans, unfinished_spans,
      lossy_traces, timed_out_traces, open_traces_peak, missing_spans;
  uint64_t invalid_prob_traces; /* roots that recorded a p outside (0, 1] */
  /* spans sharing their id with another span of their trace, spans
   * ending before they start (model.h: each flagged) */
  uint64_t duplicate_id_spans, backwards_spans;
  /* traces that lost events the decoder dropped as malformed, and those
   * events (each such trace incomplete) */
  uint64_t malformed_traces, malformed_events;
  /* traces the relay's files held events of that the live stream never
   * delivered (assembler_unreceived) */
  uint64_t unreceived_traces;
  /* traces the keep callback declined (assembler_set_keep): not handed
   * out, not counted above */
  uint64_t declined_traces;
  /* flight recorder: traces with a capture event, of them complete and
   * partial (model.h capture_info); the triggers (hops 0) by why
   * (HOP_CAPTURE_*, 0: a why this build does not know) and the notices */
  uint64_t captured_traces, captured_complete, captured_partial;
  uint64_t triggers[HOP_CAPTURE_WHY_MAX], notices;
} assembler_stats;

/* grace_ns: quiet time before a complete trace is emitted (a late child
 * from a worker thread still joins it). timeout_ns: an incomplete trace
 * quiet for this long is emitted anyway, marked incomplete. */
assembler *assembler_new(trace_ready_fn ready, void *user, int64_t grace_ns,
                         int64_t timeout_ns);
void assembler_free(assembler *a);

/* 0, or -1 when out of memory. */
int assembler_add(assembler *a, const hop_event *ev);

/* LTTng lost events or packets of one host's stream (event.h): marks
 * lossy the open traces that began before it ended and hold a span of
 * that host (every one when the stream names no host), and the trace of
 * a span of that host running when it ended whose event comes later. */
void assembler_discarded(assembler *a, const hop_loss *loss);

/* A live session ended and the relay's files hold ev, never delivered
 * (read/relay_check.h): its trace, when open, is marked incomplete
 * (host: a string that outlives the assembler's traces). */
void assembler_unreceived(assembler *a, const hop_event *ev, const char *host);
/* A live input ended: every open trace with a span on host (not marked
 * yet) is marked incomplete, and how many returned. unchecked: its end
 * was not compared with the relay's files (the trace's reason says
 * spans after last_ns, host's last event received, may be missing);
 * otherwise the files held events of host never delivered. A call of
 * another host to this one needs no mark here: answered, it lacks its
 * server span (host_health_check marks it); in flight, it is unfinished. */
uint64_t assembler_end_host(assembler *a, const char *host, bool unchecked, int64_t last_ns);

/* Emits what is ready at time now_ns (ns since epoch). */
void assembler_tick(assembler *a, int64_t now_ns);

/* Live, no event for now (mono_ns: CLOCK_MONOTONIC): emits what is ready
 * at the trace's time, taken to run on from the latest event's at the
 * monotonic clock's pace, from the first idle call after the last event
 * (the wall clock is not the trace's: a host's clock may be hours off
 * the machine's). Nothing before the first event. */
void assembler_idle(assembler *a, int64_t mono_ns);

/* Flight snapshots followed live (cli/flight_follow.h): events added
 * from now on stamp their trace with `stamp` (the trace's born stamp when
 * they open it, its touched stamp always). */
void assembler_set_stamp(assembler *a, int64_t stamp);
/* true when trace (hi, lo) is open; *born: its born stamp. */
bool assembler_open_born(const assembler *a, uint64_t hi, uint64_t lo, int64_t *born);
/* Emits (complete, or marked incomplete as at the end) every open trace
 * pick says true of, given its touched stamp; pick may set t->unsettled. */
typedef bool (*trace_pick_fn)(void *user, trace *t, int64_t touched);
void assembler_emit_if(assembler *a, trace_pick_fn pick, void *user);
/* Called with every trace handed out (the keep callback said yes),
 * before the ready callback: written early past a limit too. */
typedef void (*trace_emitted_fn)(void *user, const trace *t);
void assembler_set_emitted(assembler *a, trace_emitted_fn emitted, void *user);

/* End of input: emits every open trace. */
void assembler_flush(assembler *a);

/* Called on every trace about to be emitted, its parents resolved, before
 * its completeness is settled: may set t->missing_spans / missing_host. */
typedef void (*trace_check_fn)(void *user, trace *t);
void assembler_set_check(assembler *a, trace_check_fn check, void *user);

/* Called on every trace about to be handed out, settled: false keeps it
 * from the ready callback (counted in declined_traces, nothing else). */
typedef bool (*trace_keep_fn)(void *user, const trace *t);
void assembler_set_keep(assembler *a, trace_keep_fn keep, void *user);

/* The words of a capture's why: "slow-client", "error", "slow-server",
 * "manual", "notice"; "unknown" for another number. */
const char *capture_reason(uint8_t why);

/* A captured trace some part of which is not in the input: no span at
 * all, a process the capture notice reached with none of its spans, or an
 * answered call with no server span (settled at emission). */
bool capture_partial(const trace *t);

/* From now on an emitted trace stays valid after the ready callback
 * until it is handed back with assembler_release (on the assembler's
 * thread; every one of them before assembler_free). For a writer thread
 * (writer.h). */
void assembler_keep_traces(assembler *a);
void assembler_release(assembler *a, trace *t);

const assembler_stats *assembler_get_stats(const assembler *a);

/* Latest event time seen. */
int64_t assembler_now(const assembler *a);

#endif
