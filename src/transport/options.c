/* Messenger options: defaults and the versioned merge.
 * Must never read fields past the caller's opts->size: a caller built
 * against an older header has a shorter struct. */
#include <stddef.h>
#include <string.h>

#include "common/sized.h"
#include "hoptrace/error.h"
#include "transport/internal.h"

#define DEFAULT_QUEUE_BYTES (8u * 1024u * 1024u)
#define DEFAULT_QUEUE_MSGS 65536u
#define DEFAULT_TIMEOUT_MS 30000u
#define DEFAULT_MAX_INFLIGHT 4096u
#define DEFAULT_MAX_CONNECTIONS 1024u
#define DEFAULT_CONNECT_TIMEOUT_MS 5000u
#define DEFAULT_RECONNECT_MIN_MS 50u
#define DEFAULT_RECONNECT_MAX_MS 5000u
#define DEFAULT_FRAME_TIMEOUT_MS 30000u

/* 2.0's structs end here: a caller's size below is refused. Pinned to
 * the last 2.0 field, so appending a field does not move them. */
#define OPTIONS_SIZE_MIN                                                       \
  (offsetof(ht_messenger_options, frame_timeout_ms) + sizeof(uint32_t))
#define REQUEST_OPTIONS_SIZE_MIN                                               \
  (offsetof(ht_request_options, timeout_ms) + sizeof(uint32_t))

static void options_defaults(ht_messenger_options *opts) {
  memset(opts, 0, sizeof(*opts));
  opts->size = sizeof(*opts);
  opts->flavour = HT_MESSENGER_DEFAULT;
  opts->max_frame = HT_FRAME_DEFAULT_MAX;
  opts->write_queue_bytes = DEFAULT_QUEUE_BYTES;
  opts->write_queue_msgs = DEFAULT_QUEUE_MSGS;
  opts->request_timeout_ms = DEFAULT_TIMEOUT_MS;
  opts->max_inflight = DEFAULT_MAX_INFLIGHT;
  opts->max_connections = DEFAULT_MAX_CONNECTIONS;
  opts->connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
  opts->reconnect_min_ms = DEFAULT_RECONNECT_MIN_MS;
  opts->reconnect_max_ms = DEFAULT_RECONNECT_MAX_MS;
  opts->log_level = HT_LOG_WARN;
  opts->frame_timeout_ms = DEFAULT_FRAME_TIMEOUT_MS;
}

int ht_messenger_options_init_sized(ht_messenger_options *opts, size_t size) {
  ht_messenger_options all;
  options_defaults(&all);
  return ht_sized_fill(opts, size, &all, sizeof(all), OPTIONS_SIZE_MIN) == 0
             ? 0
             : HT_EINVAL;
}

int ht_request_options_init_sized(ht_request_options *ropts, size_t size) {
  ht_request_options all = {.size = sizeof(all)};
  return ht_sized_fill(ropts, size, &all, sizeof(all),
                       REQUEST_OPTIONS_SIZE_MIN) == 0
             ? 0
             : HT_EINVAL;
}

#define ZERO_TO_DEFAULT(field, value)                                          \
  do {                                                                         \
    if (dst->field == 0)                                                       \
      dst->field = (value);                                                    \
  } while (0)

/* dst = defaults overlaid with the part of src its caller knows. */
int ht_tr_options_merge(ht_messenger_options *dst,
                     const ht_messenger_options *src) {
  options_defaults(dst);
  if (src != NULL) {
    if (src->size < offsetof(ht_messenger_options, loop) + sizeof(src->loop))
      return HT_EINVAL;
    memcpy(dst, src, src->size < sizeof(*dst) ? src->size : sizeof(*dst));
    dst->size = sizeof(*dst);
  }
  ZERO_TO_DEFAULT(max_frame, HT_FRAME_DEFAULT_MAX);
  ZERO_TO_DEFAULT(write_queue_bytes, DEFAULT_QUEUE_BYTES);
  ZERO_TO_DEFAULT(write_queue_msgs, DEFAULT_QUEUE_MSGS);
  ZERO_TO_DEFAULT(request_timeout_ms, DEFAULT_TIMEOUT_MS);
  ZERO_TO_DEFAULT(max_inflight, DEFAULT_MAX_INFLIGHT);
  ZERO_TO_DEFAULT(max_connections, DEFAULT_MAX_CONNECTIONS);
  ZERO_TO_DEFAULT(connect_timeout_ms, DEFAULT_CONNECT_TIMEOUT_MS);
  ZERO_TO_DEFAULT(reconnect_min_ms, DEFAULT_RECONNECT_MIN_MS);
  ZERO_TO_DEFAULT(reconnect_max_ms, DEFAULT_RECONNECT_MAX_MS);
  ZERO_TO_DEFAULT(frame_timeout_ms, DEFAULT_FRAME_TIMEOUT_MS);
  if (dst->max_frame > HT_FRAME_HARD_MAX ||
      dst->reconnect_min_ms > dst->reconnect_max_ms)
    return HT_EINVAL;
  return 0;
}
