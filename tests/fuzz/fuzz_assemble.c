/* Fuzz target: the tool's event-to-span assembly fed arbitrary event
 * sequences, interleaved with ticks, loss reports and flushes. Ids come
 * from small spaces so traces and spans collide, parents point anywhere
 * (self, cycles, missing), timestamps go back and jump far.
 * Invariants: no crash or leak; every emitted trace has spans, span ids
 * unique but where each span sharing one is flagged (and counted) a
 * duplicate, consistent parent/children/roots links and counters; stats
 * match what the callback saw; and every event's content (annotations,
 * tags) comes out exactly once, so no trace is lost or emitted twice.
 * Every emitted trace also goes through the per-host accounting (which
 * may mark it) and the clock alignment: its RPCs into the fit, refitted
 * every few traces, then moved onto the reference clock; hostile
 * timestamps and hosts must not crash, overflow or leak there either.
 * Every emitted trace is then written in every output format, each
 * document checked at the end (fuzz_outputs.h: valid JSON). Half the
 * inputs run under small memory limits (read/limits.h), which must hold:
 * open traces, spans a trace, string bytes. */
#include <stdlib.h>
#include <string.h>

#include "assemble/align.h"
#include "assemble/assemble.h"
#include "assemble/host_health.h"
#include "assemble/span_checks.h"
#include "fuzz_outputs.h"
#include "fuzz_target.h"
#include "read/limits.h"

static uint64_t u64(reader *r) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v = v << 8 | byte(r);
  return v;
}

static const char *const strs[] = {NULL, "", "osd.write", "osd.read", "cs",
                                   "sr", "ss", "cr", "client.1", "osd.0",
                                   "127.0.0.1:6800", "dropped", "error",
                                   "tcp://10.0.0.2:6801", "h2", "tcp://[::1]:7",
                                   "a-much-longer-string-that-still-is-not-"
                                   "very-long-but-longer-than-sixteen"};
#define N_STRS (sizeof(strs) / sizeof(strs[0]))

static const char *str(reader *r) { return strs[byte(r) % N_STRS]; }

typedef struct seen {
  uint64_t traces, spans, orphans, unfinished, incomplete, lossy, timed_out;
  uint64_t content; /* annotations + tags emitted */
  align_state *align;
  host_health *hosts;
  fuzz_outputs *outputs;
} seen;

static void check_hosts(void *user, trace *t) { host_health_check(((seen *)user)->hosts, t); }

static void check_span(const trace *t, const span *s, size_t *children, size_t *duplicates) {
  bool duplicate = span_has_tag(s, SPAN_ID_DUPLICATE_KEY);
  *duplicates += duplicate;
  for (size_t k = 0; k < t->n_spans; k++)
    FUZZ_CHECK(t->spans[k] == s || t->spans[k]->id != s->id ||
               (duplicate && span_has_tag(t->spans[k], SPAN_ID_DUPLICATE_KEY)));
  if (s->parent != NULL) {
    FUZZ_CHECK(s->parent_id != 0 && s->parent->id == s->parent_id);
    FUZZ_CHECK(!s->orphan);
    int found = 0, in_trace = 0;
    for (size_t k = 0; k < s->parent->n_children; k++)
      found += s->parent->children[k] == s;
    for (size_t k = 0; k < t->n_spans; k++)
      in_trace += t->spans[k] == s->parent;
    FUZZ_CHECK(found == 1 && in_trace == 1);
  } else {
    FUZZ_CHECK(s->orphan == (s->parent_id != 0));
  }
  *children += s->n_children;
  FUZZ_CHECK(span_duration_ns(s) >= 0);
  /* the event's strings, cut to --max-string; the assembler's own tags
   * (hoptrace.*) whole */
  size_t max = ht_limits.string_bytes;
  for (size_t k = 0; k < s->n_annotations; k++)
    FUZZ_CHECK(strlen(s->annotations[k].value) <= max);
  for (size_t k = 0; k < s->n_tags; k++) {
    size_t most = strncmp(s->tags[k].key, "hoptrace.", 9) == 0 ? 256 : max;
    FUZZ_CHECK(strlen(s->tags[k].key) <= most &&
               (s->tags[k].is_int || strlen(s->tags[k].str_value) <= most));
  }
  const char *fields[] = {s->name, s->service, s->endpoint, s->peer,
                          s->procname, s->hostname, s->status_message};
  for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++)
    FUZZ_CHECK(fields[k] == NULL ||
               (fields[k][0] != '\0' && strlen(fields[k]) <= ht_limits.string_bytes));
}

static void on_trace(void *user, const trace *t) {
  seen *sn = user;
  FUZZ_CHECK(t->n_spans > 0 || t->malformed_events > 0); /* those alone: a trace of no span */
  FUZZ_CHECK(t->n_spans <= ht_limits.trace_spans);
  size_t children = 0, orphans = 0, unfinished = 0, duplicates = 0;
  for (size_t i = 0; i < t->n_spans; i++) {
    const span *s = t->spans[i];
    check_span(t, s, &children, &duplicates);
    orphans += s->orphan;
    unfinished += !s->started || !s->ended;
    sn->content += s->n_annotations;
    for (size_t k = 0; k < s->n_tags; k++) /* the assembler's own flags are not content */
      sn->content += strncmp(s->tags[k].key, "hoptrace.", 9) != 0;
  }
  FUZZ_CHECK(children + t->n_roots == t->n_spans);
  for (size_t i = 0; i < t->n_roots; i++)
    FUZZ_CHECK(t->roots[i]->parent == NULL);
  FUZZ_CHECK(orphans == t->orphans && unfinished == t->unfinished);
  FUZZ_CHECK(duplicates == t->duplicate_ids);
  FUZZ_CHECK(t->incomplete == (t->orphans || t->unfinished || t->lossy || t->timed_out ||
                               t->missing_spans || t->dropped_spans || t->malformed_events));
  FUZZ_CHECK(t->missing_spans == 0 || t->missing_host != NULL);
  align_collect(sn->align, t);
  if (sn->traces % 16 == 15) {
    char err[128];
    FUZZ_CHECK(align_solve(sn->align, err, sizeof(err)) == 0);
  }
  align_apply(sn->align, (trace *)t);
  for (size_t i = 0; i < t->n_spans; i++)
    FUZZ_CHECK(t->spans[i]->clock_bound_ns >= -1);
  fuzz_outputs_trace(sn->outputs, t);
  sn->traces++;
  sn->spans += t->n_spans;
  sn->orphans += t->orphans;
  sn->unfinished += t->unfinished;
  sn->incomplete += t->incomplete;
  sn->lossy += t->lossy;
  sn->timed_out += t->timed_out;
}

/* Every event's content came out once; less only when span events were
 * dropped past --max-trace-spans (counted). */
static bool content_out(const seen *sn, uint64_t content) {
  return ht_drops.trace_spans > 0 ? sn->content <= content : sn->content == content;
}

/* The input's clock moves with wrap-around (the harness itself must not
 * overflow); the assembler sees every int64 value a CTF clock can give. */
static int64_t ts_add(int64_t ts, int64_t d) {
  return (int64_t)((uint64_t)ts + (uint64_t)d);
}

/* Decodes one event; returns how much content it adds to its span. */
static uint64_t decode_event(reader *r, uint8_t op, int64_t *ts, hop_event *ev,
                             hop_kv *kvs, size_t max_kvs) {
  memset(ev, 0, sizeof(*ev));
  /* up to HOP_SPAN_NAMES, and an event dropped as malformed */
  ev->kind = op % 18 == 17 ? HOP_MALFORMED : (hop_event_kind)(op % 18);
  uint8_t step = byte(r);
  if (step == 0xff)
    *ts = (int64_t)u64(r); /* anywhere, even negative or near the limits */
  else if (step >= 0xf0)
    *ts = ts_add(*ts, -(int64_t)(step & 0x0f) * 1000); /* a little back */
  else
    *ts = ts_add(*ts, (int64_t)step * 1000);
  ev->ts_ns = *ts;
  uint8_t ids = byte(r);
  static const uint64_t his[] = {0, 0, 1, 0x4bf92f3577b34da6ull};
  static const uint64_t los[] = {0, 1, 1, 0xa3ce929d0e0e4736ull};
  ev->trace_hi = his[ids & 3];
  ev->trace_lo = los[(ids >> 2) & 3];
  ev->span_id = byte(r) & 0x3f; /* 64 ids: big traces get indexed */
  uint8_t p = byte(r);
  ev->parent_id = p & 0x80 ? 0 : p & 0x3f;
  ev->vpid = (int64_t)(ids >> 4) - 1;
  ev->vtid = ev->vpid;
  ev->procname = str(r);
  ev->hostname = str(r);
  ev->flags = byte(r);
  ev->span_kind = byte(r) % 6;
  ev->name = str(r);
  ev->service = str(r);
  ev->endpoint = str(r);
  ev->status = (int32_t)(int8_t)byte(r);
  ev->message = str(r);
  ev->key = str(r);
  ev->str_value = str(r);
  ev->int_value = (int64_t)u64(r);
  ev->n_kvs = byte(r) % (max_kvs + 1);
  for (size_t i = 0; i < ev->n_kvs; i++) {
    kvs[i].key = str(r);
    kvs[i].is_int = byte(r) & 1;
    kvs[i].int_value = (int8_t)byte(r);
    kvs[i].str_value = kvs[i].is_int ? NULL : str(r);
  }
  ev->kvs = kvs;
  ev->msg_type = byte(r) % 6;
  ev->seq = byte(r);
  ev->size = byte(r);
  ev->peer = str(r);
  ev->annotation = ev->name; /* folded start/end events: their hop's */
  /* span sides (schema 2): a start, frames, a span API span's marks */
  uint8_t marks = byte(r);
  ev->start_ns = ts_add(*ts, -(int64_t)byte(r) * 1000);
  ev->end_annotation = ev->endpoint;
  ev->named_apart = marks & 0x10;
  /* a span_r's: its end apart from its event's time, before or after it
   * (bits of `marks` no other field reads: the corpus keeps its meaning) */
  if (marks & 0x20)
    ev->end_ns = ts_add(*ts, (marks & 0x40 ? 1 : -1) * (int64_t)(marks >> 7 ? 7000000000 : 3000));
  uint64_t n_marks = 0;
  for (int k = 0; k < 4; k++)
    if (marks & (1u << k)) {
      ev->marks_ns[k] = ts_add(ev->start_ns, (int64_t)(3 - k) * 100); /* any order */
      n_marks += ev->marks_ns[k] != 0;
    }
  switch (ev->kind) {
  case HOP_SPAN_SIDE: /* its marks, frames' annotations and span_k's tag */
    return n_marks + (ev->annotation != NULL && ev->annotation[0] != '\0') +
           (ev->end_annotation != NULL && ev->end_annotation[0] != '\0') +
           (ev->key != NULL);
  case HOP_ANNOTATION:
  case HOP_KV_STR:
  case HOP_KV_INT:
    return 1;
  case HOP_HOP_SEND:
  case HOP_HOP_RECV:
  case HOP_SPAN_START_SEND:
  case HOP_SPAN_START_RECV:
  case HOP_SPAN_END_SEND:
  case HOP_SPAN_END_RECV:
    return ev->name != NULL && ev->name[0] != '\0' ? 1 : 0; /* its annotation */
  case HOP_KVS:
    return ev->n_kvs;
  default:
    return 0;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  reader r = {data, size};
  static const int64_t graces[] = {0, 1000, 1000000, 1000000000};
  static const int64_t timeouts[] = {0, 5000, 10000000, 30000000000};
  uint8_t setup = byte(&r);
  const tool_limits defaults = ht_limits;
  if (setup & 0x10) /* small limits: every one reached */
    ht_limits = (tool_limits){.open_traces = 3, .open_spans = 12, .trace_spans = 6,
                              .names = 8, .name_bytes = 256, .string_bytes = 12,
                              .page_bytes = 2048};
  ht_drops = (tool_drops){0};
  seen sn = {.align = align_new(NULL), .hosts = host_health_new()};
  output_info info = {.align = sn.align, .n_hosts = 2, .hosts = sn.hosts,
                      .stall_ns = 5000000000, .follow = setup & 0x20};
  sn.outputs = fuzz_outputs_open(&info);
  assembler *a = assembler_new(on_trace, &sn, graces[setup & 3],
                               timeouts[(setup >> 2) & 3]);
  FUZZ_CHECK(a != NULL && sn.align != NULL && sn.hosts != NULL);
  assembler_set_check(a, check_hosts, &sn);
  int64_t ts = 1700000000000000000;
  uint64_t content = 0;
  while (r.left > 0) {
    uint8_t op = byte(&r);
    if (op < 0xc0) {
      hop_event ev;
      hop_kv kvs[4];
      uint64_t adds = decode_event(&r, op, &ts, &ev, kvs, 4);
      FUZZ_CHECK(assembler_add(a, &ev) == 0);
      host_health_event(sn.hosts, &ev);
      content += adds;
    } else if (op < 0xe0) {
      assembler_tick(a, ts_add(ts, (int64_t)(op & 0x1f) * 100000000));
    } else if (op < 0xf0) {
      hop_loss loss = {.hostname = strs[op % N_STRS], .events = op & 1, .packets = op & 2,
                       .begin_ns = ts_add(ts, -1000), .end_ns = (op & 1) ? 0 : ts};
      assembler_discarded(a, &loss);
      host_health_discarded(sn.hosts, strs[op % N_STRS], op & 1, op & 2);
    } else if (op < 0xf8) {
      assembler_flush(a);
      FUZZ_CHECK(content_out(&sn, content)); /* nothing open: all came out */
    } else {
      ts = (int64_t)u64(&r); /* the clock jumps anywhere */
      assembler_tick(a, ts);
    }
  }
  assembler_flush(a);
  const assembler_stats *st = assembler_get_stats(a);
  FUZZ_CHECK(content_out(&sn, content));
  FUZZ_CHECK(st->traces == sn.traces && st->spans == sn.spans);
  FUZZ_CHECK(st->orphan_spans == sn.orphans &&
             st->unfinished_spans == sn.unfinished);
  FUZZ_CHECK(st->incomplete_traces == sn.incomplete &&
             st->lossy_traces == sn.lossy && st->timed_out_traces == sn.timed_out);
  FUZZ_CHECK(st->open_traces_peak <= st->traces);
  /* the trace an event is added to is never written early: one above */
  FUZZ_CHECK(st->open_traces_peak <= ht_limits.open_traces + 1);
  char err[128];
  FUZZ_CHECK(align_solve(sn.align, err, sizeof(err)) == 0);
  fuzz_outputs_close(sn.outputs, st);
  FILE *sink = fopen("/dev/null", "w");
  if (sink != NULL) {
    clock_sync_print(align_clock(sn.align), sink);
    host_health_print(sn.hosts, 5000000000, sink);
    fclose(sink);
  }
  assembler_free(a);
  align_free(sn.align);
  host_health_free(sn.hosts);
  ht_limits = defaults;
  return 0;
}
