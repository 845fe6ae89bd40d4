/* libcurl POST (http.h). Only http and https, no redirects followed (a
 * collector that redirects is misconfigured: its message is shown). */
#include "ship/http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <zlib.h>

struct ship_http {
  CURL *curl;
  struct curl_slist *headers;
  int gzip;
  http_result *reply; /* the post in progress */
  http_abort_fn abort_fn;
  void *abort_arg;
  char errbuf[CURL_ERROR_SIZE];
};

static size_t on_body(char *data, size_t size, size_t n, void *arg) {
  ship_http *h = arg;
  http_result *r = h->reply;
  size_t len = size * n, keep = HTTP_REPLY_MAX - r->body_len;
  if (len < keep)
    keep = len;
  if (keep > 0) {
    uint8_t *b = realloc(r->body, r->body_len + keep + 1);
    if (b == NULL)
      return len; /* the reply's text is lost, not the post's outcome */
    memcpy(b + r->body_len, data, keep);
    r->body = b;
    r->body_len += keep;
    b[r->body_len] = '\0';
  }
  return len;
}

static size_t on_header(char *data, size_t size, size_t n, void *arg) {
  ship_http *h = arg;
  size_t len = size * n;
  static const char name[] = "retry-after:";
  if (h->reply != NULL && len > sizeof(name) - 1 &&
      strncasecmp(data, name, sizeof(name) - 1) == 0) {
    size_t v = len - (sizeof(name) - 1);
    if (v >= sizeof(h->reply->retry_after))
      v = sizeof(h->reply->retry_after) - 1;
    memcpy(h->reply->retry_after, data + sizeof(name) - 1, v);
    char *r = h->reply->retry_after;
    while (v > 0 && (r[v - 1] == '\r' || r[v - 1] == '\n'))
      v--;
    h->reply->retry_after[v] = '\0';
  }
  return len;
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un) {
  (void)dt, (void)dn, (void)ut, (void)un;
  ship_http *h = arg;
  return h->abort_fn != NULL && h->abort_fn(h->abort_arg) ? 1 : 0;
}

void ship_http_set_abort(ship_http *h, http_abort_fn fn, void *arg) {
  h->abort_fn = fn;
  h->abort_arg = arg;
}

ship_http *ship_http_new(const ship_config *c, char *err, size_t cap) {
  static int curl_ready; /* one thread sets up, before any post */
  if (!curl_ready && curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
    snprintf(err, cap, "libcurl cannot start");
    return NULL;
  }
  curl_ready = 1;
  ship_http *h = calloc(1, sizeof(*h));
  if (h == NULL || (h->curl = curl_easy_init()) == NULL) {
    free(h);
    snprintf(err, cap, "libcurl cannot start");
    return NULL;
  }
  h->gzip = c->gzip;
  const char *type = c->format == SHIP_OTLP_PROTO ? "Content-Type: application/x-protobuf"
                                                  : "Content-Type: application/json";
  struct curl_slist *l = curl_slist_append(NULL, type);
  if (l && c->gzip)
    l = curl_slist_append(l, "Content-Encoding: gzip");
  if (l)
    l = curl_slist_append(l, "Expect:"); /* no 100-continue round trip */
  for (int i = 0; l && i < c->n_headers; i++)
    l = curl_slist_append(l, c->headers[i]);
  if (l == NULL) {
    snprintf(err, cap, "out of memory");
    ship_http_free(h);
    return NULL;
  }
  h->headers = l;
  CURL *k = h->curl;
  curl_easy_setopt(k, CURLOPT_URL, c->url);
  curl_easy_setopt(k, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(k, CURLOPT_HTTPHEADER, h->headers);
  curl_easy_setopt(k, CURLOPT_TIMEOUT_MS, c->timeout_ms);
  curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(k, CURLOPT_USERAGENT, "hoptrace");
  curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(k, CURLOPT_WRITEDATA, h);
  curl_easy_setopt(k, CURLOPT_ERRORBUFFER, h->errbuf);
  curl_easy_setopt(k, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(k, CURLOPT_HEADERDATA, h);
  curl_easy_setopt(k, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(k, CURLOPT_XFERINFODATA, h);
  curl_easy_setopt(k, CURLOPT_NOPROGRESS, 0L);
  if (c->ca_file[0])
    curl_easy_setopt(k, CURLOPT_CAINFO, c->ca_file);
  return h;
}

void ship_http_free(ship_http *h) {
  if (h == NULL)
    return;
  curl_slist_free_all(h->headers);
  if (h->curl)
    curl_easy_cleanup(h->curl);
  free(h);
}

/* gzip of data (malloc'd), NULL when out of memory. */
static uint8_t *gzip(const void *data, size_t len, size_t *out_len) {
  z_stream z;
  memset(&z, 0, sizeof(z));
  if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return NULL;
  uLong bound = deflateBound(&z, (uLong)len);
  uint8_t *out = malloc(bound);
  if (out != NULL) {
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)bound;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
      free(out);
      out = NULL;
    }
    *out_len = z.total_out;
  }
  deflateEnd(&z);
  return out;
}

void ship_http_post(ship_http *h, const void *data, size_t len, http_result *r) {
  memset(r, 0, sizeof(*r));
  uint8_t *packed = NULL;
  if (h->gzip) {
    size_t n = 0;
    if ((packed = gzip(data, len, &n)) == NULL) {
      snprintf(r->error, sizeof(r->error), "gzip: out of memory");
      return;
    }
    data = packed;
    len = n;
  }
  h->reply = r;
  curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, data);
  curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
  h->errbuf[0] = '\0';
  CURLcode rc = curl_easy_perform(h->curl);
  if (rc != CURLE_OK)
    snprintf(r->error, sizeof(r->error), "%s",
             h->errbuf[0] ? h->errbuf : curl_easy_strerror(rc));
  else
    curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &r->status);
  h->reply = NULL;
  free(packed);
}
