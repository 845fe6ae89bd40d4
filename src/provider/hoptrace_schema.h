/* The span-record events of provider `hoptrace` (schema 3): the one list
 * from which libhoptrace's tracepoints (hoptrace_tp.h), the argument
 * struct each of them takes, and the tool's decoder
 * (tools/hoptrace/read/) are all generated. An event or field name is
 * written here and nowhere else.
 *
 * A span side (client or server half of an RPC, or any span) is one event,
 * written when it finishes: its timestamp is the end, `start` is the start
 * read from the same clock (LTTng-UST's, a clock plugin's if one is
 * loaded: lttng_ust_trace_clock_get_read64_cb), in that clock's cycles.
 * Names and peers are interned per
 * process: `desc` and `peer` events (id -> text) come before the first
 * span that uses an id, again whenever tracing is (re)enabled in the
 * process, and `process` says once which schema the process writes. The
 * process is the vpid these events and the span sides carry (as getpid()
 * says: the PID namespace's); no per-event context is needed. Ids are
 * only meaningful within one (host, vpid).
 *
 * Events (fields in order; `ids` = trace_id_hi, trace_id_lo, span_id,
 * parent_span_id; `at` = those four, then the side's start; a root's `at`
 * may hold its sampling probability for its parent: flag ROOT_P, below):
 *   span:    rec = [desc | peer << 16 | vpid << 32,
 *            vtid | flags << 24 | status << 32, then `at`'s five]: a span
 *            side, written by thread vtid of process vpid; peer 0 = none;
 *            status 0 = ok (a negative one as its 32-bit two's
 *            complement)
 *   span_k:  a span side as `span`, with one integer key-value of the
 *            span inline: rec = span's seven words, the value, the key's
 *            bytes (up to 31, NUL-padded) in four words: one event and
 *            one field where span and tag_i were two events (the first
 *            integer key-value of a traced messenger's span, or of a
 *            span API span that is written as span, whose key fits; a
 *            tool before this event does not read it; a session enabling
 *            span and not span_k gets span and tag_i)
 *   span_r:  a span side kept in a process's flight memory (capture.h:
 *            HT_FLIGHT=memory) and written when its trace was captured:
 *            rec = span_k's twelve words (key all NUL: no key-value),
 *            then the side's end (same clock as start), since the
 *            event's own time is the capture's, not the end's
 *   span_s:  self-contained, side = [desc | peer << 16, vpid,
 *            vtid | flags << 24, status], at, then the names inline (desc
 *            and peer 0): when an intern table is full
 *   A span API span (ht_span_*) whose only marks are its frames (a
 *   client's "cs" at its start and "cr" at its end, a server's "sr" and
 *   "ss"; none for other kinds) is a span or span_k too; any other:
 *   span_a:  a span of the span API (ht_span_*), at its finish: side and
 *            at as span_s's (peer 0), plus `marks`, the times of its "cs", "sr", "ss", "cr"
 *            annotations (same clock as start; 0: not annotated;
 *            HT_SCHEMA_MARK_AT_END: the event's own time, the span's end,
 *            as a client's "cr" and a server's "ss" are; a tool before
 *            this value drops such an event as damaged); desc 0:
 *            its names are in a span_n written when it started
 *   span_n:  a span API span's names, at its start, when they could not
 *            be interned (the table is full)
 *   note:    an annotation at the event's time (any other than the four
 *            a span_a carries, or one of those given twice)
 *   tag_i, tag_s: a key-value of the span (integer, string)
 *   error:   the span's status code and message, when it is set
 *   frame:   a message sent (dir 0) or received (1) on the span's behalf:
 *            envelope type, sequence, frame bytes, the annotation it
 *            makes ("cs", "ss", ... or ""), the peer's address text
 *   process: schema version, process name, process id
 *   desc:    (id, process id) -> (kind, name, service, endpoint)
 *   peer:    (id, process id) -> the peer's address text
 *   capture: a trigger fired for the trace (flight recorder, DESIGN.md):
 *            ids (span id: the span that fired, 0 by hand; parent 0),
 *            the process, why (HT_CAPTURE_*), hops (0: this process
 *            fired it; n: a capture notice reached it n hops from the
 *            one that did), threshold and value (ns for a slow span, the
 *            status for an error, 0 by hand), origin (the service whose
 *            trigger fired; for a notice, the service it reached). The event a host's recorder snapshots on.
 * A span's note, tag, error and frame events come before its span event
 * (written when it finishes); each carries the span's ids.
 * Field types: X64 hex uint64, U64, U32, U8, I32, I64, STR
 * (NUL-terminated); Tx<N>: a fixed array of N Ts.
 * Schema 2 (hoptrace 0.2 before this) wrote a span side that ended ok as
 * `span` with side = [desc | peer << 16, vpid, vtid | flags << 24] and
 * at, and one that failed as `span_x` (side + [status]): the tool still
 * reads both (HT_SCHEMA_READ_ONLY_EVENTS), and span_k as schema 3 first
 * wrote it (rec as span's, then key a STR and value an I64 field of
 * their own: span_k_v2); schema 1 (hoptrace 0.1): see
 * hoptrace_tp.h.
 * Must never: include LTTng headers (the tool includes this).
 */
#ifndef HOPTRACE_SCHEMA_H
#define HOPTRACE_SCHEMA_H

#include <stdint.h>

#define HT_SCHEMA_VERSION 3

/* The span's ids: trace_id_hi, trace_id_lo, span_id, parent_span_id. */
#define HT_SCHEMA_IDS(X) X(X64x4, ids)

/* A span side: one array, not one field each: LTTng-UST writes every
 * field (and every context) with a call of its own (about 75 instructions
 * each), the bulk of an event's cost; so the process, thread and status
 * ride in `rec` too, not in per-event vpid and vtid contexts. 60 bytes
 * with LTTng's 4-byte compact header (x86 packs fields unaligned). desc
 * and peer ids are < 2^16 (HT_INTERN_MAX), thread ids < 2^22 (Linux's
 * PID_MAX_LIMIT). */
#define HT_SCHEMA_SPAN(X) X(X64x7, rec)

/* span with one integer key-value inline, in the same one array (a
 * field of its own costs a call; a string field about 125 instructions
 * more): span's seven words, the value, then the key's bytes NUL-padded
 * in four words (HT_REC_KV_*, below) */
#define HT_SCHEMA_SPAN_K(X) X(X64x12, rec)

/* span_k's rec, then the side's end: a span side written after it ended
 * (HT_REC_R_END, below) */
#define HT_SCHEMA_SPAN_R(X) X(X64x13, rec)

/* span_k as written before its key and value moved into `rec` (read only) */
#define HT_SCHEMA_SPAN_K_V2(X) X(X64x7, rec) X(STR, key) X(I64, value)

/* Schema 2's span sides (read only): `side` = [desc | peer << 16, vpid,
 * vtid | flags << 24] (span_x: and status), `at` = ids then start. The
 * span API's span_a and the inline span_s still write these arrays. */
#define HT_SCHEMA_SPAN_V2(X) X(U32x3, side) X(X64x5, at)
#define HT_SCHEMA_SPAN_X(X) X(U32x4, side) X(X64x5, at)

/* desc and peer 0 in side: the names are inline */
#define HT_SCHEMA_SPAN_S(X)                                                    \
  X(U32x4, side) X(X64x5, at) X(U8, kind) X(STR, name) X(STR, service)         \
  X(STR, endpoint) X(STR, peer_text)

/* marks: the times of cs, sr, ss, cr */
#define HT_SCHEMA_SPAN_A(X) X(U32x4, side) X(X64x5, at) X(U64x4, marks)

#define HT_SCHEMA_SPAN_N(X)                                                    \
  HT_SCHEMA_IDS(X) X(U8, kind) X(STR, name) X(STR, service) X(STR, endpoint)

#define HT_SCHEMA_NOTE(X) HT_SCHEMA_IDS(X) X(STR, text)
#define HT_SCHEMA_TAG_I(X) HT_SCHEMA_IDS(X) X(STR, key) X(I64, value)
#define HT_SCHEMA_TAG_S(X) HT_SCHEMA_IDS(X) X(STR, key) X(STR, value)
#define HT_SCHEMA_ERROR(X) HT_SCHEMA_IDS(X) X(I32, code) X(STR, message)

#define HT_SCHEMA_FRAME(X)                                                     \
  HT_SCHEMA_IDS(X) X(U8, dir) X(U32, type) X(U64, seq) X(U64, size)            \
  X(STR, annotation) X(STR, peer_text)

/* vpid last: a process event written before the events carried their
 * process (hoptrace 0.1 with schema 1 spans) has the first two only */
#define HT_SCHEMA_PROCESS(X) X(U32, schema) X(STR, procname) X(U32, vpid)

#define HT_SCHEMA_DESC(X)                                                      \
  X(U32, id) X(U32, vpid) X(U8, kind) X(STR, name) X(STR, service)             \
  X(STR, endpoint)

#define HT_SCHEMA_PEER(X) X(U32, id) X(U32, vpid) X(STR, text)

#define HT_SCHEMA_CAPTURE(X)                                                   \
  HT_SCHEMA_IDS(X) X(U32, vpid) X(U8, why) X(U8, hops) X(U64, threshold)      \
  X(U64, value) X(STR, origin)

/* capture's why */
enum {
  HT_CAPTURE_SLOW_CLIENT = 1, /* a client call slower than its threshold */
  HT_CAPTURE_ERROR = 2,       /* a span ended in error */
  HT_CAPTURE_SLOW_SERVER = 3, /* a server span slower than its threshold */
  HT_CAPTURE_MANUAL = 4,      /* asked by hand (control socket) */
  HT_CAPTURE_NOTICE = 5       /* a peer's trigger, by a capture notice */
};

/* E(event name, its field list). The first events get the smallest ids,
 * which LTTng's compact event header needs: the hot ones come first. */
#define HT_SCHEMA_EVENTS(E)                                                    \
  E(span, HT_SCHEMA_SPAN) E(span_k, HT_SCHEMA_SPAN_K) E(span_a, HT_SCHEMA_SPAN_A) \
  E(tag_i, HT_SCHEMA_TAG_I)                                                    \
  E(tag_s, HT_SCHEMA_TAG_S) E(note, HT_SCHEMA_NOTE) E(error, HT_SCHEMA_ERROR)  \
  E(frame, HT_SCHEMA_FRAME) E(span_s, HT_SCHEMA_SPAN_S)                        \
  E(span_n, HT_SCHEMA_SPAN_N) E(process, HT_SCHEMA_PROCESS)                    \
  E(desc, HT_SCHEMA_DESC) E(peer, HT_SCHEMA_PEER) E(capture, HT_SCHEMA_CAPTURE)         \
  E(span_r, HT_SCHEMA_SPAN_R)

/* Events the tool reads and nothing writes any more (no tracepoint): what
 * earlier schemas wrote. R(event, its field list); an event NAME_v2 is
 * event NAME in an older layout (the tool tells them apart by their
 * fields). */
#define HT_SCHEMA_READ_ONLY_EVENTS(R)                                          \
  R(span_x, HT_SCHEMA_SPAN_X) R(span_v2, HT_SCHEMA_SPAN_V2)                 \
  R(span_k_v2, HT_SCHEMA_SPAN_K_V2)

/* The C type of each field type, for the argument structs. */
#define HT_SCHEMA_CTYPE_X64 uint64_t
#define HT_SCHEMA_CTYPE_U64 uint64_t
#define HT_SCHEMA_CTYPE_U32 uint32_t
#define HT_SCHEMA_CTYPE_U8 uint8_t
#define HT_SCHEMA_CTYPE_I32 int32_t
#define HT_SCHEMA_CTYPE_I64 int64_t
#define HT_SCHEMA_CTYPE_STR const char *
#define HT_SCHEMA_CTYPE_X64x4 uint64_t
#define HT_SCHEMA_CTYPE_X64x5 uint64_t
#define HT_SCHEMA_CTYPE_X64x7 uint64_t
#define HT_SCHEMA_CTYPE_X64x12 uint64_t
#define HT_SCHEMA_CTYPE_X64x13 uint64_t
#define HT_SCHEMA_CTYPE_U64x4 uint64_t
#define HT_SCHEMA_CTYPE_U32x3 uint32_t
#define HT_SCHEMA_CTYPE_U32x4 uint32_t

/* An array type's length ([N]), nothing for a scalar: Tx<N> is N Ts. */
#define HT_SCHEMA_DIM_X64 /* a scalar */
#define HT_SCHEMA_DIM_U64 /* a scalar */
#define HT_SCHEMA_DIM_U32 /* a scalar */
#define HT_SCHEMA_DIM_U8 /* a scalar */
#define HT_SCHEMA_DIM_I32 /* a scalar */
#define HT_SCHEMA_DIM_I64 /* a scalar */
#define HT_SCHEMA_DIM_STR /* a scalar */
#define HT_SCHEMA_DIM_X64x4 [4]
#define HT_SCHEMA_DIM_X64x5 [5]
#define HT_SCHEMA_DIM_X64x7 [7]
#define HT_SCHEMA_DIM_X64x12 [12]
#define HT_SCHEMA_DIM_X64x13 [13]
#define HT_SCHEMA_DIM_U64x4 [4]
#define HT_SCHEMA_DIM_U32x3 [3]
#define HT_SCHEMA_DIM_U32x4 [4]

/* Indices into the arrays. */
enum {
  HT_AT_TRACE_HI, HT_AT_TRACE_LO, HT_AT_SPAN, HT_AT_PARENT, HT_AT_START
};
enum { HT_SIDE_NAMES, HT_SIDE_VPID, HT_SIDE_VTID_FLAGS, HT_SIDE_STATUS };

/* side's packed words, both ways */
#define HT_SIDE_NAMES_OF(desc, peer) ((uint32_t)(desc) | (uint32_t)(peer) << 16)
#define HT_SIDE_DESC_IN(names) ((names) & 0xffffu)
#define HT_SIDE_PEER_IN(names) ((names) >> 16)
#define HT_SIDE_VTID_FLAGS_OF(vtid, flags)                                     \
  (((uint32_t)(vtid) & 0xffffffu) | (uint32_t)(flags) << 24)
#define HT_SIDE_VTID_IN(word) ((word) & 0xffffffu)
#define HT_SIDE_FLAGS_IN(word) ((word) >> 24)
enum { HT_MARKS_CS, HT_MARKS_SR, HT_MARKS_SS, HT_MARKS_CR };
/* a mark that is the span_a event's own time (no clock read for it) */
#define HT_SCHEMA_MARK_AT_END UINT64_MAX

/* span's rec: two packed words, then `at` (rec + HT_REC_AT) */
enum { HT_REC_NAMES_VPID, HT_REC_VTID_FLAGS_STATUS, HT_REC_AT };
#define HT_REC_NAMES_VPID_OF(desc, peer, vpid)                                 \
  ((uint64_t)HT_SIDE_NAMES_OF(desc, peer) | (uint64_t)(uint32_t)(vpid) << 32)
#define HT_REC_VTID_FLAGS_STATUS_OF(vtid, flags, status)                       \
  ((uint64_t)HT_SIDE_VTID_FLAGS_OF(vtid, flags) |                              \
   (uint64_t)(uint32_t)(status) << 32)
/* the low word of either is side's word, the high one vpid or status */
#define HT_REC_LOW(word) ((uint32_t)(word))
#define HT_REC_HIGH(word) ((uint32_t)((word) >> 32))

/* span_k's rec: span's seven words, the value (as int64_t's two's
 * complement), then the key: byte i of it is bits 8 * (i % 8) of word
 * HT_REC_KV_KEY + i / 8 (little-endian), NUL-terminated within its
 * HT_REC_KV_KEY_BYTES and NUL-padded. A key is at most HT_SCHEMA_KV_KEY_MAX
 * bytes (include/hoptrace/span.h's kv_key_, the traced messenger's
 * inline one); a longer one is a tag_i. */
enum { HT_REC_KV_VALUE = 7, HT_REC_KV_KEY = 8, HT_REC_KV_WORDS = 12 };
#define HT_REC_KV_KEY_BYTES (8 * (HT_REC_KV_WORDS - HT_REC_KV_KEY))
#define HT_SCHEMA_KV_KEY_MAX (HT_REC_KV_KEY_BYTES - 1)
/* span_r's rec: span_k's, then the side's end */
enum { HT_REC_R_END = 12, HT_REC_R_WORDS = 13 };

/* One argument struct per event: ht_rec_span, ht_rec_span_a, ... (and
 * the read-only events' for the tool) */
#define HT_SCHEMA_MEMBER(type, name) HT_SCHEMA_CTYPE_##type name HT_SCHEMA_DIM_##type;
#define HT_SCHEMA_STRUCT(event, fields)                                        \
  typedef struct ht_rec_##event { fields(HT_SCHEMA_MEMBER) } ht_rec_##event;
HT_SCHEMA_EVENTS(HT_SCHEMA_STRUCT)
HT_SCHEMA_READ_ONLY_EVENTS(HT_SCHEMA_STRUCT)
#undef HT_SCHEMA_STRUCT

/* flags: bits 0-3 the trace's (HT_FLAG_SAMPLED, HT_FLAG_DEBUG,
 * HT_FLAG_RANDOM), and which ends of the side were a frame: a client
 * starts at "cs" and ends at "cr", a server at "sr" and "ss"; a timed-out
 * call has no end frame.
 * ROOT_P: the side is its trace's root (parent 0), and at[HT_AT_PARENT]
 * holds instead the probability with which its trace was sampled, p *
 * 2^32 (HT_SAMPLE_P_ONE is 1; include/hoptrace/sampler.h says what each
 * sampler records). Without it a root's probability is unknown (a RATE
 * sampler's; hoptrace before 0.2.0). It costs no field: a root's parent
 * is always 0. Bit 0x20 is free. */
#define HT_SCHEMA_FLAG_ROOT_P 0x10u
#define HT_SCHEMA_FLAG_START_FRAME 0x40u
#define HT_SCHEMA_FLAG_END_FRAME 0x80u

#endif /* HOPTRACE_SCHEMA_H */
