/* The posting half of a push: encoded batches wait in a queue capped in
 * bytes and are POSTed by a thread of their own, so that reading and
 * encoding go on while a post waits, with retries (retry.h). When the
 * queue is full, sender_put waits for room (back-pressure: a file input
 * can wait) or, with drop_when_full (a live input cannot: LTTng would
 * discard in its ring buffers instead, uncounted by us), drops the batch
 * and counts it. */
#ifndef HT_SHIP_SENDER_H
#define HT_SHIP_SENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "ship/config.h"
#include "ship/counts.h"

#define SHIP_SHUTDOWN_MS 5000 /* after SIGINT/SIGTERM: flushing for at most this */

typedef struct sender sender;

typedef struct sender_options {
  const ship_config *cfg;
  size_t queue_bytes;  /* the cap (one batch is taken whatever its size) */
  bool drop_when_full; /* else sender_put waits */
  int summary_every_s; /* 0: none */
  int retry_for_s;     /* a batch is not retried beyond this since its first post */
  /* No post accepted for this many seconds of posting (0: never): the
   * collector is taken for dead; what is queued and what comes later is
   * dropped unsent (dropped_dead) and on_give_up (may be NULL) is called
   * once, on the sending thread. */
  int give_up_s;
  void (*on_give_up)(void);
  int (*interrupted)(void);  /* nonzero: the run was interrupted (may be NULL) */
  void (*idle)(void *arg);   /* on the sender's thread when nothing is queued, */
  void *idle_arg;            /* every 100 ms at least (time-cut batches) */
  const char *url_shown;     /* the URL for messages, without credentials */
} sender_options;

/* NULL with the reason in err. The thread runs from here on. */
sender *sender_new(const sender_options *o, char *err, size_t cap);
/* Queues data (malloc'd, taken) holding spans spans. Any thread. */
void sender_put(sender *s, void *data, size_t len, size_t spans);
/* Counts spans read, or dropped before they could be queued. */
void sender_read(sender *s, size_t spans);
void sender_drop_encode(sender *s, size_t spans);
/* Counts invalid UTF-8 sequences a batch wrote as U+FFFD (utf8.h). */
void sender_replaced(sender *s, uint64_t sequences);
/* Posts what is queued (for at most SHIP_SHUTDOWN_MS once interrupted),
 * stops the thread, prints the summary (unless quiet and nothing was
 * lost), frees s. *out: the final counts. */
void sender_finish(sender *s, bool quiet, ship_counts *out);

#endif
