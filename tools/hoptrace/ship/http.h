/* One HTTP POST at a time through libcurl, the connection kept between
 * posts; the body gzipped (zlib) when the config says so. */
#ifndef HT_SHIP_HTTP_H
#define HT_SHIP_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "ship/config.h"

typedef struct ship_http ship_http;

#define HTTP_REPLY_MAX 65536 /* the reply's bytes kept; the rest is dropped */

typedef struct http_result {
  long status;          /* HTTP status; 0: no reply (error says why) */
  char error[256];      /* transport error, "" when a reply came */
  uint8_t *body;        /* the reply (at most HTTP_REPLY_MAX bytes), malloc'd */
  size_t body_len;
  char retry_after[64]; /* the Retry-After header's value, "" when none */
} http_result;

/* Asked while a post is in progress (at least once a second): nonzero
 * aborts it (a shutdown whose time is up). */
typedef int (*http_abort_fn)(void *arg);

/* NULL when libcurl cannot start (err says why). */
ship_http *ship_http_new(const ship_config *c, char *err, size_t cap);
void ship_http_free(ship_http *h);
void ship_http_set_abort(ship_http *h, http_abort_fn fn, void *arg);
/* POSTs data with the format's content type. r->body is the caller's. */
void ship_http_post(ship_http *h, const void *data, size_t len, http_result *r);

#endif
