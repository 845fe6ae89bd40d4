/* Failed calls: a client span that never reached a server is
 * an ERROR span with its peer and error.type, owes no server span and
 * leaves its trace complete; a call answered (error reply or not) with no
 * server span is one its server never recorded; a server span is ERROR
 * only for a fault of its own (semconv.h's rule), in OTLP and Zipkin
 * alike. Events go through the assembler and the host check as the
 * pipeline's do; the exporters write to memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "assemble/assemble.h"
#include "assemble/host_health.h"
#include "output/otlp_map.h"
#include "output/output.h"
#include "otlp_attr_text.h"
#include "output/semconv.h"

#define MS 1000000ll

/* HT_* codes (include/hoptrace/error.h), as a trace carries them */
enum { ENOTCONN = -21, EIO = -22, EINVAL = -1, ETIMEDOUT = -14, ECONNRESET = -15,
       ENOHANDLER = -23, EUNKNOWN_TO_BUILD = -999 };

/* ---------------------------------------------------------------- outputs */

typedef struct text {
  char *data;
  size_t len;
  FILE *f;
  obuf *ob;
} text;

static void text_open(text *x) {
  x->data = NULL;
  x->len = 0;
  x->f = open_memstream(&x->data, &x->len);
  assert_non_null(x->f);
  x->ob = obuf_new(x->f);
  assert_non_null(x->ob);
}

static char *text_close(text *x) {
  assert_int_equal(obuf_flush(x->ob), 0);
  obuf_free(x->ob);
  fclose(x->f);
  return x->data;
}

/* The document a format writes for one trace. */
static char *export(const output_format *fmt, const trace *t) {
  text x;
  text_open(&x);
  output *o = fmt->open(x.ob, &(output_info){.follow = true});
  assert_non_null(o);
  fmt->trace(o, t);
  assert_int_equal(fmt->close(o, &(bt_source_stats){0}, &(assembler_stats){0}), 0);
  return text_close(&x);
}


static const char *otlp_attrs_of(const trace *t, const span *s, attrs *a) {
  a->text[0] = '\0';
  otlp_span_attrs(t, s, collect, a);
  return a->text;
}

/* ------------------------------------------------------ assembled traces */

typedef struct run {
  assembler *a;
  host_health *hosts;
  trace *traces[16];
  int n;
} run;

static void on_ready(void *user, const trace *t) {
  run *r = user;
  assert_true(r->n < 16);
  r->traces[r->n++] = (trace *)t; /* kept: assembler_keep_traces */
}

static void check(void *user, trace *t) { host_health_check(user, t); }

static void run_open(run *r) {
  memset(r, 0, sizeof(*r));
  r->a = assembler_new(on_ready, r, 0, 0);
  r->hosts = host_health_new();
  assert_non_null(r->a);
  assert_non_null(r->hosts);
  assembler_set_check(r->a, check, r->hosts);
  assembler_keep_traces(r->a);
}

static void run_close(run *r) {
  for (int i = 0; i < r->n; i++)
    assembler_release(r->a, r->traces[i]);
  assembler_free(r->a);
  host_health_free(r->hosts);
}

static trace *trace_of(run *r, uint64_t id) {
  for (int i = 0; i < r->n; i++)
    if (r->traces[i]->trace_lo == id)
      return r->traces[i];
  fail_msg("trace %llu never emitted", (unsigned long long)id);
  return NULL;
}

static void add(run *r, hop_event e) {
  host_health_event(r->hosts, &e);
  assert_int_equal(assembler_add(r->a, &e), 0);
}

/* A span side as the traced messenger writes it (schema 3): its status
 * and key-values first (events written before it), then the side, its
 * frames as its first and last annotation ("" when that end was none). */
typedef struct side {
  uint64_t trace, id, parent;
  int kind;
  const char *host, *service, *name, *peer, *first, *last;
  int64_t start, end;
  int32_t status;
  const char *message;
  const char *error_name; /* kv "error" (client, local failure) */
  bool peer_status;       /* kv "error.status" = status (an error reply) */
} side;

static hop_event base(const side *s, hop_event_kind kind, int64_t ts) {
  return (hop_event){.kind = kind, .ts_ns = ts, .trace_lo = s->trace, .span_id = s->id,
                     .parent_id = s->parent, .vpid = 7, .vtid = 7, .procname = "sim",
                     .hostname = s->host, .message = "", .peer = ""};
}

static void add_side(run *r, const side *s) {
  if (s->status != 0) {
    hop_event st = base(s, HOP_STATUS, s->end);
    st.status = s->status;
    st.message = s->message;
    add(r, st);
  }
  if (s->error_name != NULL) {
    hop_event kv = base(s, HOP_KV_STR, s->end);
    kv.key = "error";
    kv.str_value = s->error_name;
    add(r, kv);
  }
  if (s->peer_status) {
    hop_event kv = base(s, HOP_KV_INT, s->end);
    kv.key = "error.status";
    kv.int_value = s->status;
    add(r, kv);
  }
  hop_event e = base(s, HOP_SPAN_SIDE, s->end);
  e.start_ns = s->start;
  e.span_kind = s->kind;
  e.name = s->name;
  e.service = s->service;
  e.endpoint = "";
  e.peer = s->peer;
  e.status = s->status;
  e.annotation = s->first;
  e.end_annotation = s->last;
  add(r, e);
}

#define OSD_ADDR "tcp://10.0.0.2:6800"
#define CLIENT_ADDR "tcp://10.0.0.1:41000"

/* A whole RPC from host "cl" to host "osd": teaches the host check that
 * 10.0.0.2 is osd's. */
static void answered_rpc(run *r, uint64_t trace, int64_t t0) {
  add_side(r, &(side){trace, 1, 0, HOP_KIND_CLIENT, "cl", "client.0", "osd_write", OSD_ADDR,
                      "cs", "cr", t0, t0 + 10 * MS, 0, NULL, NULL, false});
  add_side(r, &(side){trace, 2, 1, HOP_KIND_SERVER, "osd", "osd.0", "osd_write", CLIENT_ADDR,
                      "sr", "ss", t0 + 1 * MS, t0 + 9 * MS, 0, NULL, NULL, false});
}

/* The call the traced messenger refused before encoding: no frame, no
 * server span. Its trace is complete, nothing is missing from osd, and
 * every export says ERROR ENOTCONN with the peer tried. */
static void refused_call_is_a_complete_error(void **state) {
  (void)state;
  run r;
  run_open(&r);
  answered_rpc(&r, 1, 0);
  add_side(&r, &(side){2, 1, 0, HOP_KIND_CLIENT, "cl", "client.0", "osd_write", OSD_ADDR,
                       "", "", 20 * MS, 20 * MS + 5000, ENOTCONN, "not connected",
                       "HT_ENOTCONN", false});
  assembler_flush(r.a);
  trace *t = trace_of(&r, 2);
  const span *s = t->spans[0];
  assert_false(span_reached_server(s));
  assert_false(t->incomplete);
  assert_int_equal(t->missing_spans, 0);
  assert_int_equal(assembler_get_stats(r.a)->incomplete_traces, 0);

  otlp_span_fields f;
  otlp_span_fields_get(s, &f);
  assert_int_equal(f.kind, 3);
  assert_int_equal(f.status_code, OTLP_STATUS_ERROR);
  assert_string_equal(f.status_message, "not connected");
  attrs a;
  assert_string_equal(otlp_attrs_of(t, s, &a),
                      "error=HT_ENOTCONN;rpc.system.name=hoptrace;rpc.method=osd_write;"
                      "server.address=10.0.0.2;server.port=6800;"
                      "network.peer.address=10.0.0.2;network.peer.port=6800;"
                      "error.type=ENOTCONN;");
  char *z = export(&output_zipkin, t);
  assert_non_null(strstr(z, "\"remoteEndpoint\":{\"ipv4\":\"10.0.0.2\",\"port\":6800}"));
  assert_non_null(strstr(z, "\"error\":\"not connected\",\"error.type\":\"ENOTCONN\","
                            "\"hoptrace.status\":\"-21\""));
  assert_null(strstr(z, "hoptrace.incomplete"));
  free(z);
  char *o = export(&output_otlp, t);
  assert_non_null(strstr(o, "\"status\":{\"code\":2,\"message\":\"not connected\"}"));
  assert_non_null(strstr(o, "{\"key\":\"error.type\",\"value\":{\"stringValue\":\"ENOTCONN\"}}"));
  free(o);
  run_close(&r);
}

/* A call that reached osd and was answered, error reply or not, with no
 * server span: osd never recorded it (its trace is incomplete, counted
 * against osd). A call that timed out after its request went out owes
 * nothing either: nobody knows whether the server saw it. */
static void answered_call_without_server_span_is_missing(void **state) {
  (void)state;
  run r;
  run_open(&r);
  answered_rpc(&r, 1, 0);
  add_side(&r, &(side){2, 1, 0, HOP_KIND_CLIENT, "cl", "client.0", "osd_write", OSD_ADDR,
                       "cs", "cr", 20 * MS, 30 * MS, EIO, "input/output error", NULL, true});
  add_side(&r, &(side){3, 1, 0, HOP_KIND_CLIENT, "cl", "client.0", "osd_write", OSD_ADDR,
                       "cs", "", 40 * MS, 50 * MS, ETIMEDOUT, "request timed out",
                       "HT_ETIMEDOUT", false});
  assembler_flush(r.a);
  trace *answered = trace_of(&r, 2), *timed_out = trace_of(&r, 3);
  assert_true(answered->incomplete);
  assert_int_equal(answered->missing_spans, 1);
  assert_string_equal(answered->missing_host, "osd");
  assert_false(timed_out->incomplete);
  attrs a;
  assert_string_equal(otlp_attrs_of(answered, answered->spans[0], &a),
                      "error.status=-22;rpc.system.name=hoptrace;rpc.method=osd_write;"
                      "rpc.status_code=EIO;server.address=10.0.0.2;server.port=6800;"
                      "network.peer.address=10.0.0.2;network.peer.port=6800;error.type=EIO;"
                      "hoptrace.incomplete=1 server span(s) missing from host osd;");
  assert_string_equal(otlp_attrs_of(timed_out, timed_out->spans[0], &a),
                      "error=HT_ETIMEDOUT;rpc.system.name=hoptrace;rpc.method=osd_write;"
                      "server.address=10.0.0.2;server.port=6800;"
                      "network.peer.address=10.0.0.2;network.peer.port=6800;"
                      "error.type=ETIMEDOUT;");
  run_close(&r);
}

static span server_span(int32_t status, const char *message, bool replied) {
  static annotation ann[] = {{100, "sr"}, {200, "ss"}};
  span s = {.id = 2, .parent_id = 1, .name = "osd_write", .service = "osd.0",
            .hostname = "osd", .start_ns = 100, .end_ns = 200, .clock_bound_ns = -1,
            .status_message = message, .vpid = 7, .status = status,
            .kind = HOP_KIND_SERVER, .started = true, .ended = true,
            .annotations = ann, .n_annotations = replied ? 2 : 1};
  return s;
}

/* A server span: ERROR for its own fault (an internal error reply, a
 * request dropped, no handler, a code unknown to this build), UNSET for
 * the caller's (an invalid request, the caller gone), its code still in
 * rpc.status_code when a reply went out. */
static void server_status_follows_the_rpc_conventions(void **state) {
  (void)state;
  trace t = {.trace_lo = 1};
  struct {
    int32_t status;
    bool replied, error;
    const char *attrs;
  } cases[] = {
      {0, true, false, "rpc.system.name=hoptrace;rpc.method=osd_write;rpc.status_code=OK;"},
      {EINVAL, true, false,
       "rpc.system.name=hoptrace;rpc.method=osd_write;rpc.status_code=EINVAL;error.type=EINVAL;"},
      {ECONNRESET, false, false,
       "rpc.system.name=hoptrace;rpc.method=osd_write;error.type=ECONNRESET;"},
      {404, true, false,
       "rpc.system.name=hoptrace;rpc.method=osd_write;rpc.status_code=404;error.type=404;"},
      {EIO, true, true,
       "rpc.system.name=hoptrace;rpc.method=osd_write;rpc.status_code=EIO;error.type=EIO;"},
      {ETIMEDOUT, false, true,
       "rpc.system.name=hoptrace;rpc.method=osd_write;error.type=ETIMEDOUT;"},
      {ENOHANDLER, true, true, "rpc.system.name=hoptrace;rpc.method=osd_write;"
                               "rpc.status_code=ENOHANDLER;error.type=ENOHANDLER;"},
      {503, true, true,
       "rpc.system.name=hoptrace;rpc.method=osd_write;rpc.status_code=503;error.type=503;"},
      {EUNKNOWN_TO_BUILD, true, true, "rpc.system.name=hoptrace;rpc.method=osd_write;"
                                      "rpc.status_code=-999;error.type=-999;"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    span s = server_span(cases[i].status, NULL, cases[i].replied);
    otlp_span_fields f;
    otlp_span_fields_get(&s, &f);
    assert_int_equal(f.kind, 2);
    assert_int_equal(f.status_code, cases[i].error ? OTLP_STATUS_ERROR : OTLP_STATUS_UNSET);
    assert_int_equal(f.status_message != NULL, cases[i].error);
    attrs a;
    assert_string_equal(otlp_attrs_of(&t, &s, &a), cases[i].attrs);
    span *ptrs[] = {&s};
    trace one = {.trace_lo = 1, .spans = ptrs, .n_spans = 1};
    char *z = export(&output_zipkin, &one);
    assert_int_equal(strstr(z, "\"error\":") != NULL, cases[i].error);
    /* the call failed: error.type, ERROR or not (the caller's fault) */
    assert_int_equal(strstr(z, "\"error.type\":") != NULL, cases[i].status != 0);
    free(z);
  }
  /* the description: the span's message, else the code's, else the number */
  span io = server_span(EIO, "disk gone", true);
  otlp_span_fields f;
  otlp_span_fields_get(&io, &f);
  assert_string_equal(f.status_message, "disk gone");
  io.status_message = NULL;
  otlp_span_fields_get(&io, &f);
  assert_string_equal(f.status_message, "input/output error");
  span odd = server_span(EUNKNOWN_TO_BUILD, NULL, true);
  otlp_span_fields_get(&odd, &f);
  assert_string_equal(f.status_message, "status -999");
}

/* A code this build does not know: error.type is the library's own name
 * for it (key-value "error"), not a number. */
static void unknown_code_takes_the_recorded_name(void **state) {
  (void)state;
  tag kv[] = {{.key = "error", .str_value = "HT_ENEWER"}};
  span s = {.id = 1, .name = "op", .kind = HOP_KIND_CLIENT, .status = -77, .tags = kv,
            .n_tags = 1, .started = true, .ended = true, .clock_bound_ns = -1, .vpid = -1};
  span_outcome o;
  span_outcome_get(&s, &o);
  assert_true(o.error);
  assert_string_equal(o.error_type, "ENEWER");
  assert_null(o.status_code);
  char buf[32];
  assert_string_equal(semconv_status_name(ENOTCONN, buf, sizeof(buf)), "ENOTCONN");
  assert_string_equal(semconv_status_name(0, buf, sizeof(buf)), "OK");
  assert_string_equal(semconv_status_name(-77, buf, sizeof(buf)), "-77");
}

/* ----------------------------------------------------------------- report */

/* The report of some traces (spans linked as the assembler links them). */
static char *report_of(trace **traces, size_t n) {
  text x;
  text_open(&x);
  output *o = output_report.open(x.ob, &(output_info){0});
  assert_non_null(o);
  for (size_t i = 0; i < n; i++)
    output_report.trace(o, traces[i]);
  assembler_stats st = {.traces = n};
  assert_int_equal(output_report.close(o, &(bt_source_stats){0}, &st), 0);
  return text_close(&x);
}

/* A section of the report: from its heading to the next blank line. */
static char *section(const char *report, const char *heading) {
  const char *p = strstr(report, heading);
  assert_non_null(p);
  const char *end = strstr(p, "\n\n");
  return strndup(p, end ? (size_t)(end - p) : strlen(p));
}

typedef struct hop {
  span client, server;
  span *cs_children[1], *all[2], *roots[1];
  annotation cann[2], sann[2];
  trace t;
} hop;

/* One traced call from `from` to `to`, answered (a server span) or not,
 * with the client's status; p: the root's sampling probability. */
static void make_hop(hop *h, uint64_t id, const char *from, const char *to, const char *op,
                     bool answered, int32_t status, double p) {
  memset(h, 0, sizeof(*h));
  h->cann[0] = (annotation){1000, "cs"};
  h->cann[1] = (annotation){9000, "cr"};
  h->sann[0] = (annotation){2000, "sr"};
  h->sann[1] = (annotation){8000, "ss"};
  h->client = (span){.id = 1, .name = op, .service = from, .kind = HOP_KIND_CLIENT,
                     .start_ns = 1000, .end_ns = 9000, .status = status,
                     .annotations = h->cann, .n_annotations = answered ? 2 : 1,
                     .started = true, .ended = true, .vpid = 1, .vtid = 1,
                     .clock_bound_ns = -1};
  h->server = (span){.id = 2, .parent_id = 1, .name = op, .service = to,
                     .kind = HOP_KIND_SERVER, .start_ns = 2000, .end_ns = 8000,
                     .annotations = h->sann, .n_annotations = 2, .started = true,
                     .ended = true, .vpid = 2, .vtid = 2, .clock_bound_ns = -1,
                     .parent = &h->client};
  h->all[0] = &h->client;
  h->all[1] = &h->server;
  h->roots[0] = &h->client;
  if (answered) {
    h->cs_children[0] = &h->server;
    h->client.children = h->cs_children;
    h->client.n_children = 1;
  }
  h->t = (trace){.trace_lo = id, .spans = h->all, .n_spans = answered ? 2 : 1,
                 .roots = h->roots, .n_roots = 1, .root_prob = (uint64_t)(p * 4294967296.0)};
}

/* The errors table lists the hops that failed, not every hop; "no
 * errors" when none did. The refused call is counted as never reaching
 * a server. */
static void report_lists_only_failing_hops(void **state) {
  (void)state;
  hop ok, timed_out, refused;
  make_hop(&ok, 1, "client", "osd.0", "osd_write", true, 0, 1);
  make_hop(&timed_out, 2, "osd.0", "osd.1", "replica_write", false, ETIMEDOUT, 1);
  make_hop(&refused, 3, "osd.0", "osd.2", "replica_write", false, ENOTCONN, 1);
  refused.cann[0] = (annotation){0}; /* no frame: no "cs" */
  refused.client.n_annotations = 0;
  trace *healthy[] = {&ok.t};
  char *r = report_of(healthy, 1);
  char *errors = section(r, "\nErrors and timeouts per hop");
  assert_string_equal(errors, "\nErrors and timeouts per hop: no errors (1 hop(s), none with an"
                              " error or a timeout on either side's status)");
  free(errors);
  free(r);
  trace *all[] = {&ok.t, &timed_out.t, &refused.t};
  r = report_of(all, 3);
  errors = section(r, "\nErrors and timeouts per hop");
  assert_non_null(strstr(errors, "the 1 of 2 hop(s) that had any"));
  assert_non_null(strstr(errors, "\n  osd.0 -> ? replica_write "));
  assert_null(strstr(errors, "client -> osd.0"));
  free(errors);
  assert_non_null(strstr(r, "client spans with no server span: 2\n"
                            "  of which never reached a server:  1 "));
  free(r);
}

static void tag_primary(hop *h, tag *kv, int64_t acked, int64_t planned) {
  kv[0] = (tag){.key = "sim.replicas", .is_int = true, .int_value = planned};
  kv[1] = (tag){.key = "sim.replicas_acked", .is_int = true, .int_value = acked};
  h->server.tags = kv;
  h->server.n_tags = 2;
}

/* Degraded writes per primary: from the primary's sim.replicas_acked and
 * sim.replicas, sampled and estimated by 1/p; one line without them. */
static void report_counts_degraded_writes(void **state) {
  (void)state;
  hop w[4];
  tag kv[4][2];
  make_hop(&w[0], 1, "client", "osd.0", "osd_write", true, 0, 0.25);
  make_hop(&w[1], 2, "client", "osd.0", "osd_write", true, 0, 0.25);
  make_hop(&w[2], 3, "client", "osd.0", "osd_write", true, 0, 0.25);
  make_hop(&w[3], 4, "client", "osd.1", "osd_write", true, 0, 0.5);
  tag_primary(&w[0], kv[0], 2, 2);
  tag_primary(&w[1], kv[1], 1, 2);
  tag_primary(&w[2], kv[2], 1, 2);
  tag_primary(&w[3], kv[3], 0, 2);
  trace *none[] = {&w[0].t};
  w[0].server.n_tags = 0;
  char *r = report_of(none, 1);
  assert_non_null(strstr(r, "\nDegraded writes per primary: none known (no server span carries"
                            " sim.replicas_acked and sim.replicas)\n"));
  free(r);
  w[0].server.n_tags = 2;
  trace *all[] = {&w[0].t, &w[1].t, &w[2].t, &w[3].t};
  r = report_of(all, 4);
  char *d = section(r, "\nDegraded writes per primary");
  assert_non_null(strstr(d, "acknowledged with N of M replicas, N < M"));
  assert_non_null(strstr(d, "\n  osd.0                               3         12         2"
                            "          8  1 of 2: 2\n"));
  assert_non_null(strstr(d, "\n  osd.1                               1          2         1"
                            "          2  0 of 2: 1"));
  free(d);
  free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(refused_call_is_a_complete_error),
      cmocka_unit_test(answered_call_without_server_span_is_missing),
      cmocka_unit_test(server_status_follows_the_rpc_conventions),
      cmocka_unit_test(unknown_code_takes_the_recorded_name),
      cmocka_unit_test(report_lists_only_failing_hops),
      cmocka_unit_test(report_counts_degraded_writes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
