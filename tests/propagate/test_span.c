/* Spans through the event interface, with a recorder that keeps what it
 * is given: ids and parentage, sampled vs unsampled, remote policy,
 * annotations, key-values, status, finish. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "hoptrace/error.h"
#include "hoptrace/sampler.h"
#include "hoptrace/span.h"
#include "propagate/events.h"
#include "propagate/span_path.h"

typedef struct rec {
  char what[32];
  ht_trace_context ctx;
  char a[64], b[64];
  int64_t n;
} rec;

static rec log_[64];
static size_t nlog;

static rec *add(const char *what, const ht_trace_context *c) {
  assert_true(nlog < 64);
  rec *r = &log_[nlog++];
  memset(r, 0, sizeof(*r));
  snprintf(r->what, sizeof(r->what), "%s", what);
  r->ctx = *c;
  return r;
}

static void r_start(const ht_trace_context *c, const ht_span_info *i,
                    const void *desc) {
  assert_non_null(desc); /* the test's desc_ref always keeps one */
  rec *r = add("start", c);
  snprintf(r->a, sizeof(r->a), "%s", i->name);
  snprintf(r->b, sizeof(r->b), "%s|%s", i->service, i->endpoint);
  r->n = i->kind;
}
/* in_span: a mark the span's own record carries */
static void r_ann(const ht_trace_context *c, const char *name, int in_span) {
  snprintf(add(in_span ? "mark" : "ann", c)->a, 64, "%s", name);
}
static void r_kvs_(const ht_trace_context *c, const char *k, const char *v) {
  rec *r = add("kv_str", c);
  snprintf(r->a, 64, "%s", k);
  snprintf(r->b, 64, "%s", v);
}
static void r_kvi(const ht_trace_context *c, const char *k, int64_t v) {
  rec *r = add("kv_int", c);
  snprintf(r->a, 64, "%s", k);
  r->n = v;
}
static void r_kvs(const ht_trace_context *c, const ht_kv *kvs, size_t n) {
  rec *r = add("kvs", c);
  r->n = (int64_t)n;
  snprintf(r->a, 64, "%s", kvs[0].key);
}
static void r_status(const ht_trace_context *c, int32_t code, const char *m) {
  rec *r = add("status", c);
  r->n = code;
  snprintf(r->a, 64, "%s", m);
}
static void r_msg(const ht_trace_context *c, int dir, const char *ann,
                  uint32_t type, uint64_t seq, uint64_t size, const char *peer) {
  rec *r = add(dir ? "recv" : "send", c);
  r->n = (int64_t)(type * 1000000 + seq * 1000 + size);
  snprintf(r->a, 64, "%s", peer);
  snprintf(r->b, 64, "%s", ann);
}

/* Names kept by desc_ref / peer_ref: the test's own copies. */
static ht_span_info kept_info;
static char kept_name[64], kept_peer[64];

static const void *r_desc_ref(const ht_span_info *i) {
  snprintf(kept_name, sizeof(kept_name), "%s", i->name);
  kept_info = (ht_span_info){kept_name, i->kind, "", ""};
  return &kept_info;
}
static const void *r_peer_ref(const char *peer) {
  snprintf(kept_peer, sizeof(kept_peer), "%s", peer);
  return kept_peer;
}
/* A span API span's record ("end": its status, which marks it has in b,
 * e.g. "-s--" for "sr", and in a its key-value, whether its marks are
 * only its frames and which: "n=-7 b0 f0"), or the messenger's span side
 * ("side"). */
static void r_side(const ht_span_side *side) {
  if (side->marks != NULL) {
    rec *r = add("end", side->ctx);
    r->n = side->status;
    snprintf(r->a, sizeof(r->a), "%s=%lld b%d f%d",
             side->kv_key ? side->kv_key : "", (long long)side->kv_value,
             side->boundary, side->frames);
    assert_true(side->start != 0);
    for (int k = 0; k < HT_MARKS; k++) {
      r->b[k] = side->marks[k] != 0 ? "cssc"[k] : '-';
      assert_true(side->marks[k] == 0 || side->marks[k] >= side->start);
    }
    return;
  }
  rec *r = add("side", side->ctx);
  const ht_span_info *i = side->desc ? side->desc : &side->info;
  snprintf(r->a, 64, "%s", i->name);
  snprintf(r->b, 64, "%s", side->peer ? (const char *)side->peer : "-");
  r->n = side->status;
}

static const ht_event_ops recorder = {
    r_start, r_ann, r_kvs_, r_kvi, r_kvs, r_status, r_msg,
    r_side, r_desc_ref, r_peer_ref, NULL, NULL, NULL};

static void use(ht_sampler_kind kind, ht_sampler_kind root, int trust) {
  ht_sampling_config c;
  ht_sampling_config_default(&c);
  c.kind = kind;
  c.root_kind = root;
  c.trust_remote_debug = trust;
  assert_int_equal(ht_sampling_set(&c), 0);
}

static int setup(void **state) {
  (void)state;
  nlog = 0;
  ht_events_install(&recorder);
  use(HT_SAMPLER_ALWAYS, HT_SAMPLER_ALWAYS, 0);
  return 0;
}

static const ht_span_info info = {"op", HT_SPAN_CLIENT, "svc", "tcp://h:1"};

static void sampled_tree_has_exact_ids_and_parents(void **state) {
  (void)state;
  ht_span root, child, local, remote;
  ht_span_init(&root);
  ht_span_init(&child);
  ht_span_init(&local);
  ht_span_init(&remote);
  assert_int_equal(ht_span_start_root(&root, &info, HT_SAMPLE_DEFAULT), 0);
  assert_int_equal(ht_context_validate(&root.ctx), 0);
  assert_int_equal(root.ctx.parent_span_id, 0);
  assert_int_equal(root.ctx.flags, HT_FLAG_SAMPLED);
  assert_int_equal(ht_span_start_child(&child, &root, &info), 0);
  assert_int_equal(ht_span_start_local(&local, &child.ctx, &info), 0);
  assert_int_equal(ht_span_start_remote(&remote, &root.ctx, &info), 0);
  assert_int_equal(child.ctx.parent_span_id, root.ctx.span_id);
  assert_int_equal(local.ctx.parent_span_id, child.ctx.span_id);
  assert_int_equal(remote.ctx.parent_span_id, root.ctx.span_id);
  const ht_span *all[] = {&child, &local, &remote};
  for (int i = 0; i < 3; i++) {
    assert_int_equal(all[i]->ctx.trace_id_hi, root.ctx.trace_id_hi);
    assert_int_equal(all[i]->ctx.trace_id_lo, root.ctx.trace_id_lo);
    assert_true(all[i]->ctx.span_id != root.ctx.span_id);
  }
  assert_int_equal(nlog, 4);
  assert_string_equal(log_[0].what, "start");
  assert_string_equal(log_[0].a, "op");
  assert_string_equal(log_[0].b, "svc|tcp://h:1");
  assert_int_equal(log_[0].n, HT_SPAN_CLIENT);
  assert_int_equal(log_[1].ctx.span_id, child.ctx.span_id);
  ht_span_finish(&remote);
  ht_span_finish(&local);
  ht_span_finish(&child);
  ht_span_finish(&root);
  assert_int_equal(nlog, 8);
  assert_int_equal(log_[7].ctx.span_id, root.ctx.span_id);
}

static void annotations_kvs_status_and_messages_are_recorded(void **state) {
  (void)state;
  ht_span s;
  ht_span_init(&s);
  ht_span_start_root(&s, &(ht_span_info){NULL, HT_SPAN_SERVER, NULL, NULL}, 0);
  assert_string_equal(log_[0].b, "|"); /* NULL strings become "" */
  ht_span_annotate(&s, HT_ANN_SERVER_RECV);
  ht_span_annotate(&s, HT_ANN_SERVER_RECV); /* twice: an annotation */
  ht_span_annotate(&s, "s"); /* not a mark */
  ht_span_kv_str(&s, "k", "v");
  ht_span_kv_int(&s, "n", -7);
  ht_kv many[HT_KVS_MAX + 3];
  for (size_t i = 0; i < HT_KVS_MAX + 3; i++)
    many[i] = (ht_kv){"key", HT_KV_INT, NULL, (int64_t)i};
  ht_span_kvs(&s, many, HT_KVS_MAX + 3);
  ht_span_set_error(&s, HT_ETIMEDOUT, "timeout");
  ht_span_msg_send(&s, HT_MSG_REPLY, 5, 300, "p");
  ht_span_msg_recv(&s, HT_MSG_REQUEST, 6, 7, "q");
  ht_span_finish(&s);
  ht_span_finish(&s); /* idempotent */
  ht_span_annotate(&s, "late"); /* finished: nothing */
  /* the integer key-value goes with the span's record */
  const char *want[] = {"start", "mark", "ann", "ann", "kv_str", "kvs",
                        "kv_int", "status", "send", "recv", "end"};
  assert_int_equal(nlog, 11);
  for (size_t i = 0; i < 11; i++)
    assert_string_equal(log_[i].what, want[i]);
  assert_string_equal(log_[1].a, "sr");
  assert_string_equal(log_[2].a, "sr");
  assert_string_equal(log_[3].a, "s");
  assert_int_equal(log_[5].n, HT_KVS_MAX);
  assert_string_equal(log_[6].a, "ht.kvs_dropped");
  assert_int_equal(log_[6].n, 3);
  assert_int_equal(log_[7].n, HT_ETIMEDOUT);
  assert_int_equal(log_[8].n, 2005300);
  assert_string_equal(log_[8].b, ""); /* a message that makes no annotation */
  assert_int_equal(log_[10].n, HT_ETIMEDOUT); /* status carried to the end */
  assert_string_equal(log_[10].b, "-s--");     /* its one mark */
  assert_string_equal(log_[10].a, "n=-7 b0 f0"); /* "sr" twice: span_a */
}

/* A span whose marks are only its start and end (a client's "cs"/"cr", a
 * server's "sr"/"ss") may be written as a messenger side, with its first
 * integer key-value whose key fits; other key-values are events. */
static void boundary_marks_and_kept_key_value(void **state) {
  (void)state;
  static const char k31[] = "0123456789012345678901234567890";
  static const char k32[] = "01234567890123456789012345678901";
  ht_span c, sv, in;
  ht_span_init(&c);
  ht_span_init(&sv);
  ht_span_init(&in);
  ht_span_start_root(&c, &(ht_span_info){"op", HT_SPAN_CLIENT, "a", ""}, HT_SAMPLE_YES);
  ht_span_start_child(&sv, &c, &(ht_span_info){"op", HT_SPAN_SERVER, "b", ""});
  ht_span_start_child(&in, &c, &(ht_span_info){"op", HT_SPAN_INTERNAL, "a", ""});
  ht_span_annotate(&c, HT_ANN_CLIENT_SEND);
  ht_span_annotate(&sv, HT_ANN_SERVER_RECV);
  ht_span_kv_int(&sv, k32, 1); /* too long: at once */
  ht_span_kv_int(&sv, k31, 2); /* the first that fits: kept */
  ht_span_kv_int(&sv, "n", 3); /* a second: at once */
  ht_span_annotate(&sv, HT_ANN_SERVER_SEND);
  ht_span_finish(&sv);
  ht_span_finish(&in);
  ht_span_annotate(&c, HT_ANN_CLIENT_RECV);
  ht_span_finish(&c);
  assert_int_equal(nlog, 12);
  assert_string_equal(log_[5].what, "kv_int");
  assert_string_equal(log_[5].a, k32);
  assert_string_equal(log_[6].what, "kv_int");
  assert_string_equal(log_[6].a, "n");
  assert_string_equal(log_[8].what, "end");
  assert_string_equal(log_[8].a, "0123456789012345678901234567890=2 b1 f3");
  assert_string_equal(log_[9].a, "=0 b1 f0"); /* no marks */
  assert_string_equal(log_[11].a, "=0 b1 f3");
  assert_string_equal(log_[11].b, "c--c");

  /* a client's "sr" is read when given: its marks go apart */
  ht_span_start_root(&c, &(ht_span_info){"op", HT_SPAN_CLIENT, "a", ""}, HT_SAMPLE_YES);
  ht_span_annotate(&c, HT_ANN_SERVER_RECV);
  ht_span_finish(&c);
  assert_int_equal(nlog, 15);
  assert_string_equal(log_[14].a, "=0 b0 f0");
}

/* A caller built against 2.0's header: its span ends at prob_. The
 * key-value is recorded at once and nothing past its storage is
 * touched. */
static void a_2_0_span_keeps_no_key_value(void **state) {
  (void)state;
  union {
    ht_span s;
    unsigned char bytes[sizeof(ht_span)];
  } u;
  const size_t size = offsetof(ht_span, prob_) + sizeof(uint64_t);
  memset(&u, 0xab, sizeof(u));
  memset(&u, 0, size);
  u.s.size = size;
  assert_int_equal(ht_span_start_root(&u.s, &info, HT_SAMPLE_YES), 0);
  ht_span_annotate(&u.s, HT_ANN_CLIENT_SEND);
  ht_span_kv_int(&u.s, "n", 5);
  ht_span_finish(&u.s);
  assert_int_equal(nlog, 4);
  assert_string_equal(log_[2].what, "kv_int");
  assert_int_equal(log_[2].n, 5);
  assert_string_equal(log_[3].a, "=0 b1 f1");
  for (size_t i = size; i < sizeof(u); i++)
    assert_int_equal(u.bytes[i], 0xab);
}

static void unsampled_spans_record_nothing_but_carry_ids(void **state) {
  (void)state;
  use(HT_SAMPLER_NEVER, HT_SAMPLER_NEVER, 0);
  ht_span root, child;
  ht_span_init(&root);
  ht_span_init(&child);
  assert_int_equal(ht_span_start_root(&root, &info, HT_SAMPLE_DEFAULT), 0);
  assert_int_equal(ht_context_validate(&root.ctx), 0);
  assert_false(ht_span_is_sampled(&root));
  ht_span_start_child(&child, &root, &info);
  assert_int_equal(child.ctx.parent_span_id, root.ctx.span_id);
  ht_span_annotate(&child, "x");
  ht_span_kv_int(&child, "x", 1);
  ht_span_set_error(&child, -1, "x");
  ht_span_msg_send(&child, HT_MSG_REQUEST, 1, 1, "x");
  ht_span_finish(&child);
  ht_span_finish(&root);
  assert_int_equal(nlog, 0);
  /* A per-request hint still forces recording. */
  ht_span_start_root(&root, &info, HT_SAMPLE_DEBUG);
  assert_int_equal(root.ctx.flags, HT_FLAG_SAMPLED | HT_FLAG_DEBUG);
  assert_int_equal(nlog, 1);
}

static void remote_debug_follows_policy_and_is_counted(void **state) {
  (void)state;
  ht_sampling_stats before = {.size = sizeof(before)};
  ht_sampling_stats after = {.size = sizeof(after)};
  assert_int_equal(ht_sampling_get_stats(&before), 0);
  use(HT_SAMPLER_PARENT, HT_SAMPLER_NEVER, 0);
  ht_trace_context remote = {1, 2, 3, 0, HT_FLAG_SAMPLED | HT_FLAG_DEBUG};
  ht_span s;
  ht_span_init(&s);
  ht_span_start_remote(&s, &remote, &info);
  assert_int_equal(s.ctx.flags, 0); /* untrusted: refused, root NEVER */
  use(HT_SAMPLER_PARENT, HT_SAMPLER_NEVER, 1);
  ht_span_start_remote(&s, &remote, &info);
  assert_int_equal(s.ctx.flags, HT_FLAG_SAMPLED | HT_FLAG_DEBUG);
  remote.flags = HT_FLAG_SAMPLED;
  ht_span_start_remote(&s, &remote, &info);
  assert_int_equal(s.ctx.flags, HT_FLAG_SAMPLED);
  ht_span_start_root(&s, &info, HT_SAMPLE_DEFAULT);
  assert_int_equal(ht_sampling_get_stats(&after), 0);
  assert_int_equal(after.remote_received - before.remote_received, 3);
  assert_int_equal(after.remote_sampled - before.remote_sampled, 2);
  assert_int_equal(after.remote_dropped - before.remote_dropped, 1);
  assert_int_equal(after.remote_debug_refused - before.remote_debug_refused, 1);
  assert_int_equal(after.remote_debug_honoured - before.remote_debug_honoured, 1);
  assert_int_equal(after.traces_started - before.traces_started, 1);
  assert_int_equal(after.traces_dropped - before.traces_dropped, 1);
  assert_int_equal(after.config_changes - before.config_changes, 2);
}

/* W3C "random" is no sampling decision: a remote context's child keeps
 * it whatever the policy decides (plain modes, the stateful RATE, a DEBUG
 * honoured or refused), its own children too, and a root never invents
 * it; the header sent on says so again. */
static void random_flag_passes_to_children(void **state) {
  (void)state;
  static const char *in = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03";
  static const struct {
    ht_sampler_kind kind;
    int trust;
    uint32_t extra;
    const char *tail;
  } cases[] = {{HT_SAMPLER_PARENT, 0, 0, "-03"},
               {HT_SAMPLER_NEVER, 0, 0, "-02"},
               {HT_SAMPLER_RATE, 0, 0, "-03"},
               {HT_SAMPLER_PARENT, 1, HT_FLAG_DEBUG, "-03"},
               {HT_SAMPLER_PARENT, 0, HT_FLAG_DEBUG, "-02"}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    use(cases[i].kind, HT_SAMPLER_NEVER, cases[i].trust);
    ht_trace_context remote;
    assert_int_equal(ht_traceparent_parse(in, strlen(in), &remote), 0);
    remote.flags |= cases[i].extra;
    ht_span s, child;
    ht_span_init(&s);
    ht_span_init(&child);
    assert_int_equal(ht_span_start_remote(&s, &remote, &info), 0);
    assert_int_equal(ht_span_start_child(&child, &s, &info), 0);
    assert_true(child.ctx.flags & HT_FLAG_RANDOM);
    char out[HT_TRACEPARENT_LEN + 1];
    assert_int_equal(ht_traceparent_format(&child.ctx, out, sizeof(out)), 0);
    if (strcmp(out + HT_TRACEPARENT_LEN - 3, cases[i].tail) != 0)
      fail_msg("case %zu: %s, want flags %s", i, out, cases[i].tail);
    ht_span_finish(&child);
    ht_span_finish(&s);
  }
  ht_span root;
  ht_span_init(&root);
  use(HT_SAMPLER_ALWAYS, HT_SAMPLER_ALWAYS, 0);
  assert_int_equal(ht_span_start_root(&root, &info, HT_SAMPLE_DEBUG), 0);
  assert_false(root.ctx.flags & HT_FLAG_RANDOM);
  ht_span_finish(&root);
}

static void bad_arguments_are_errors_not_crashes(void **state) {
  (void)state;
  ht_span s, zero;
  ht_span_init(&s);
  memset(&zero, 0, sizeof(zero));
  assert_int_equal(ht_span_start_root(NULL, &info, 0), HT_EINVAL);
  assert_int_equal(ht_span_start_root(&s, NULL, 0), HT_EINVAL);
  assert_int_equal(ht_span_start_child(&s, NULL, &info), HT_EINVAL);
  assert_int_equal(ht_span_start_child(&s, &zero, &info), HT_EBADCONTEXT);
  ht_trace_context bad = {0, 0, 1, 0, HT_FLAG_SAMPLED};
  assert_int_equal(ht_span_start_remote(&s, &bad, &info), HT_EBADCONTEXT);
  assert_int_equal(ht_span_start_local(&s, &bad, &info), HT_EBADCONTEXT);
  ht_span_annotate(&s, "x"); /* zeroed by the failed start: no event */
  ht_span_annotate(NULL, "x");
  ht_span_finish(NULL);
  assert_int_equal(nlog, 0);
  assert_string_equal(ht_span_kind_name(HT_SPAN_CONSUMER), "consumer");
  assert_string_equal(ht_span_kind_name((ht_span_kind)77), "unknown");
}

static void no_recorder_installed_records_nothing(void **state) {
  (void)state;
  ht_events_install(NULL);
  ht_span s;
  ht_span_init(&s);
  ht_span_start_root(&s, &info, HT_SAMPLE_YES);
  ht_span_annotate(&s, "x");
  ht_span_finish(&s);
  assert_int_equal(nlog, 0);
}

/* The traced messenger's path: a quiet start, names and peer kept while at
 * hand, one event at the end with the status; nothing when unsampled. */
static void span_side_is_one_event_with_kept_names(void **state) {
  (void)state;
  ht_span s;
  ht_span_init(&s);
  ht_span_info op = {"op.read", HT_SPAN_CLIENT, "svc", ""};
  assert_int_equal(ht_span_start_root_quiet(&s, HT_SAMPLE_YES), 0);
  const void *desc = ht_span_desc_ref(&s, &op);
  const void *peer = ht_span_peer_ref(&s, "tcp://127.0.0.1:1");
  assert_non_null(desc);
  assert_non_null(peer);
  assert_null(ht_span_peer_ref(&s, "")); /* no peer: nothing to keep */
  ht_span_set_error(&s, -7, "bad");
  ht_span_finish_side(&s, desc, &(ht_span_info){0}, 0, peer, 3);
  assert_int_equal(nlog, 2); /* the status event, then the side */
  assert_string_equal(log_[1].what, "side");
  assert_string_equal(log_[1].a, "op.read");
  assert_string_equal(log_[1].b, "tcp://127.0.0.1:1");
  assert_int_equal(log_[1].n, -7);
  assert_int_equal(log_[1].ctx.span_id, s.ctx.span_id);
  ht_span_finish_side(&s, desc, &op, 0, peer, 3); /* finished: nothing */
  ht_span_annotate(&s, "late");
  assert_int_equal(nlog, 2);
  /* no desc: the info names it */
  ht_span_start_root_quiet(&s, HT_SAMPLE_YES);
  ht_span_finish_side(&s, NULL, &op, 0, NULL, 0);
  assert_string_equal(log_[2].a, "op.read");
  assert_string_equal(log_[2].b, "-");
  /* unsampled: ids, no references, no event */
  ht_span_start_root_quiet(&s, HT_SAMPLE_NO);
  assert_null(ht_span_desc_ref(&s, &op));
  assert_null(ht_span_peer_ref(&s, "tcp://127.0.0.1:1"));
  ht_span_finish_side(&s, NULL, &op, 0, NULL, 0);
  assert_int_equal(nlog, 3);
  /* a frame sent for a context with no span at hand */
  ht_context_record_frame(&s.ctx, 0, "cs", 1, 2, 3, NULL); /* unsampled */
  assert_int_equal(nlog, 3);
  ht_span_start_root_quiet(&s, HT_SAMPLE_YES);
  ht_context_record_frame(&s.ctx, 0, "cs", 1, 2, 3, NULL);
  assert_int_equal(nlog, 4);
  assert_string_equal(log_[3].what, "send");
  assert_string_equal(log_[3].b, "cs");
  assert_string_equal(log_[3].a, "");
  /* a quiet span keeps no marks: its annotations are events */
  ht_span_annotate(&s, "cs");
  assert_string_equal(log_[4].what, "ann");
}

/* The four marks, each once, all in the span's own record. */
static void marks_go_with_the_span(void **state) {
  (void)state;
  ht_span s;
  ht_span_init(&s);
  ht_span_start_root(&s, &info, HT_SAMPLE_YES);
  ht_span_annotate(&s, HT_ANN_CLIENT_SEND);
  ht_span_annotate(&s, HT_ANN_SERVER_RECV);
  ht_span_annotate(&s, HT_ANN_SERVER_SEND);
  ht_span_annotate(&s, HT_ANN_CLIENT_RECV);
  ht_span_finish(&s);
  assert_int_equal(nlog, 6);
  assert_string_equal(log_[5].what, "end");
  assert_string_equal(log_[5].b, "cssc");
  assert_int_equal(log_[5].n, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(sampled_tree_has_exact_ids_and_parents, setup),
      cmocka_unit_test_setup(annotations_kvs_status_and_messages_are_recorded, setup),
      cmocka_unit_test_setup(marks_go_with_the_span, setup),
      cmocka_unit_test_setup(boundary_marks_and_kept_key_value, setup),
      cmocka_unit_test_setup(a_2_0_span_keeps_no_key_value, setup),
      cmocka_unit_test_setup(unsampled_spans_record_nothing_but_carry_ids, setup),
      cmocka_unit_test_setup(remote_debug_follows_policy_and_is_counted, setup),
      cmocka_unit_test_setup(random_flag_passes_to_children, setup),
      cmocka_unit_test_setup(bad_arguments_are_errors_not_crashes, setup),
      cmocka_unit_test_setup(no_recorder_installed_records_nothing, setup),
      cmocka_unit_test_setup(span_side_is_one_event_with_kept_names, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
