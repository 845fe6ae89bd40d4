/* The gateway's HTTP side on libmicrohttpd: PUT, GET and DELETE of
 * /BUCKET/OBJECT, each as a server span (kind SERVER, named by the
 * method) whose OSD request is its child, answered with a W3C
 * `traceresponse` naming that span.
 *
 * One thread per connection (libmicrohttpd's own), at most max_conns of
 * them; a connection idle for idle_timeout seconds is closed; a body
 * above max_body is refused from its Content-Length (413), and a body
 * without one (chunked) closes the connection as soon as it grows past it.
 *
 * Never: keep a span open past its request (the completion callback
 * finishes it if the connection died), or copy an unbounded body. */
#include <microhttpd.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>

#include "gateway.h"
#include "hoptrace/error.h"
#include "hoptrace/traced.h"
#include "sim_proto.h"

struct gw_http {
  struct MHD_Daemon *d;
  gw_http_cfg cfg;
  gw_osd *osd;
  gw_stats *st;
  char endpoint[64];
  char procname[16]; /* the main thread's name (prctl's 16 bytes) */
};

typedef struct gw_req {
  ht_span span;
  int refused;  /* answered from the headers alone (400, 405, 413) */
  int answered; /* a response is queued */
  uint8_t *body;
  size_t len, cap;
} gw_req;

/* Object names: "BUCKET/KEY", URL-safe characters only, no empty part. */
static int name_ok(const char *url) {
  const char *p = url + 1, *slash = strchr(p, '/');
  size_t n = strlen(p);
  if (url[0] != '/' || slash == NULL || slash == p || n > SIM_NAME_MAX || p[n - 1] == '/' ||
      strstr(p, "//") != NULL)
    return 0;
  return strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~-/") == n;
}

static enum MHD_Result respond(gw_http *h, struct MHD_Connection *conn, gw_req *r,
                               unsigned status, const void *body, size_t len) {
  struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)body,
                                                              MHD_RESPMEM_MUST_COPY);
  if (resp == NULL)
    return MHD_NO;
  char tr[HT_TRACEPARENT_LEN + 1];
  if (ht_traceparent_format(&r->span.ctx, tr, sizeof(tr)) == 0)
    MHD_add_response_header(resp, "traceresponse", tr);
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
    MHD_add_response_header(resp, "Allow", "PUT, GET, DELETE");
  ht_span_kv_int(&r->span, "http.response.status_code", status);
  if (status >= 500)
    ht_span_set_error(&r->span, (int32_t)status, len ? (const char *)body : "server error");
  atomic_fetch_add(status >= 500 ? &h->st->status_5xx
                   : status >= 400 ? &h->st->status_4xx : &h->st->status_2xx, 1);
  enum MHD_Result rc = MHD_queue_response(conn, status, resp);
  r->answered = 1;
  MHD_destroy_response(resp);
  ht_span_annotate(&r->span, HT_ANN_SERVER_SEND);
  ht_span_finish(&r->span);
  return rc;
}

static unsigned status_of(int rc) {
  return rc == HT_ETIMEDOUT ? MHD_HTTP_GATEWAY_TIMEOUT : MHD_HTTP_SERVICE_UNAVAILABLE;
}

/* The whole request is in: one OSD operation, its span a child of ours. */
static enum MHD_Result serve(gw_http *h, struct MHD_Connection *conn, gw_req *r,
                             const char *method, const char *url) {
  const char *op = method[0] == 'P' ? SIM_OP_WRITE : method[0] == 'G' ? SIM_OP_READ
                                                                      : SIM_OP_DELETE;
  ht_envelope *reply = NULL;
  ht_trace_context prev = ht_context_restore(&r->span.ctx);
  int rc = gw_osd_call(h->osd, op, url + 1, r->body, r->len, &reply);
  ht_context_restore(&prev);
  if (rc != 0) {
    const char *why = ht_strerror(rc);
    return respond(h, conn, r, status_of(rc), why, strlen(why));
  }
  sim_obj_reply o;
  enum MHD_Result res;
  if (sim_reply_decode(reply->payload, reply->payload_len, &o) != 0)
    res = respond(h, conn, r, MHD_HTTP_BAD_GATEWAY, "malformed OSD reply", 19);
  else if (method[0] == 'P')
    res = respond(h, conn, r, MHD_HTTP_OK, "", 0);
  else if (method[0] == 'D')
    res = respond(h, conn, r, MHD_HTTP_NO_CONTENT, "", 0);
  else if (o.state != SIM_PRESENT)
    res = respond(h, conn, r, MHD_HTTP_NOT_FOUND, "no such object\n", 15);
  else
    res = respond(h, conn, r, MHD_HTTP_OK, o.data, o.data_len);
  ht_message_free(reply);
  return res;
}

/* The trace headers, counting traceparent fields (several: malformed). */
static enum MHD_Result count_tp(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value) {
  (void)kind, (void)value;
  if (strcasecmp(key, "traceparent") == 0)
    (*(unsigned *)cls)++;
  return MHD_YES;
}

static gw_req *begin(gw_http *h, struct MHD_Connection *conn, const char *method) {
  /* libmicrohttpd names its threads "MHD-…"; traces are filtered by
   * procname (the thread's name), e.g. run-sim.sh's "sim-*": the
   * connection thread that records the server span takes the process's */
  static _Thread_local int named;
  if (!named)
    named = 1, prctl(PR_SET_NAME, h->procname, 0, 0, 0);
  gw_req *r = calloc(1, sizeof(*r));
  if (r == NULL)
    return NULL;
  atomic_fetch_add(&h->st->requests, 1);
  unsigned n_tp = 0;
  MHD_get_connection_values(conn, MHD_HEADER_KIND, count_tp, &n_tp);
  ht_span_info info = {method, HT_SPAN_SERVER, h->cfg.service, h->endpoint};
  gw_span_start(&r->span, &info, MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "traceparent"),
                n_tp, MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "b3"), h->st);
  ht_span_annotate(&r->span, HT_ANN_SERVER_RECV);
  return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *data, size_t *data_size, void **con_cls) {
  gw_http *h = cls;
  gw_req *r = *con_cls;
  (void)version;
  if (r == NULL) { /* the headers: decide what can be decided now */
    if ((r = *con_cls = begin(h, conn, method)) == NULL)
      return MHD_NO;
    ht_span_kvs(&r->span, (ht_kv[]){{"http.request.method", HT_KV_STR, method, 0},
                                    {"url.path", HT_KV_STR, url, 0}}, 2);
    if (strcmp(method, "PUT") != 0 && strcmp(method, "GET") != 0 &&
        strcmp(method, "DELETE") != 0)
      return r->refused = 1, respond(h, conn, r, MHD_HTTP_METHOD_NOT_ALLOWED, "", 0);
    if (!name_ok(url))
      return r->refused = 1, respond(h, conn, r, MHD_HTTP_BAD_REQUEST, "bad object path\n", 16);
    const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    if (cl != NULL && strtoull(cl, NULL, 10) > h->cfg.max_body) {
      atomic_fetch_add(&h->st->too_large, 1);
      return r->refused = 1, respond(h, conn, r, MHD_HTTP_CONTENT_TOO_LARGE, "body too large\n", 15);
    }
    return MHD_YES;
  }
  if (*data_size > 0) { /* a piece of the body */
    size_t n = *data_size;
    *data_size = 0;
    if (r->refused)
      return MHD_YES; /* libmicrohttpd skips the body after an early answer */
    if (n > h->cfg.max_body - r->len) {
      /* a body without a length (chunked) grew too large: libmicrohttpd
       * takes no answer in mid-upload, so the connection is closed */
      atomic_fetch_add(&h->st->too_large, 1);
      ht_span_set_error(&r->span, HT_EFRAMETOOBIG, "HTTP body over --max-body: connection closed");
      return MHD_NO;
    }
    if (r->len + n > r->cap) {
      size_t cap = r->cap ? r->cap : 4096;
      while (cap < r->len + n)
        cap *= 2;
      cap = cap > h->cfg.max_body ? h->cfg.max_body : cap;
      uint8_t *p = realloc(r->body, cap);
      if (p == NULL)
        return MHD_NO;
      r->body = p, r->cap = cap;
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    return MHD_YES;
  }
  return r->refused ? MHD_YES : serve(h, conn, r, method, url);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode why) {
  gw_req *r = *con_cls;
  (void)cls, (void)conn, (void)why;
  if (r == NULL)
    return;
  if (!r->answered)
    ht_span_set_error(&r->span, HT_ECONNRESET, "HTTP connection ended before the answer");
  ht_span_finish(&r->span); /* idempotent: only a span never answered */
  free(r->body);
  free(r);
  *con_cls = NULL;
}

/* libmicrohttpd's messages (a refused connection, a bad request line)
 * through the simulator's log: rate-limited, so a flood of them cannot
 * flood stderr. A trailing newline is dropped (the log adds its own). */
static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
  char msg[256];
  vsnprintf(msg, sizeof(msg), fmt, ap);
  msg[strcspn(msg, "\n")] = '\0';
  sim_log_line(cls, HT_LOG_WARN, msg);
}

int gw_http_start(gw_http **out, const gw_http_cfg *cfg, gw_osd *osd, gw_stats *st,
                  unsigned *port) {
  gw_http *h = calloc(1, sizeof(*h));
  if (h == NULL)
    return -1;
  h->cfg = *cfg, h->osd = osd, h->st = st;
  prctl(PR_GET_NAME, h->procname, 0, 0, 0); /* the caller's: main's */
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)cfg->port)};
  if (inet_pton(AF_INET, cfg->bind, &sa.sin_addr) != 1) {
    fprintf(stderr, "sim-gateway: --bind must be an IPv4 address, not '%s'\n", cfg->bind);
    free(h);
    return -1;
  }
  h->d = MHD_start_daemon(
      MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
          MHD_USE_ERROR_LOG,
      0, NULL, NULL, on_request, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
      MHD_OPTION_CONNECTION_LIMIT, cfg->max_conns, MHD_OPTION_CONNECTION_TIMEOUT,
      cfg->idle_timeout, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536,
      MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log,
      cfg->log, MHD_OPTION_END);
  if (h->d == NULL) {
    fprintf(stderr, "sim-gateway: cannot listen on %s:%u\n", cfg->bind, cfg->port);
    free(h);
    return -1;
  }
  *port = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT)->port;
  snprintf(h->endpoint, sizeof(h->endpoint), "http://%s:%u", cfg->bind, *port);
  *out = h;
  return 0;
}

void gw_http_stop(gw_http *h) {
  MHD_stop_daemon(h->d);
  free(h);
}
