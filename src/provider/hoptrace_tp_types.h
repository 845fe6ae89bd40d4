/* Argument types of the `hoptrace` provider's events, apart from the LTTng
 * headers so that code which must not pull those in can use them too. */
#ifndef HOPTRACE_TP_TYPES_H
#define HOPTRACE_TP_TYPES_H

#include <stdint.h>

/* The vectored key-value event's arguments, already joined. */
typedef struct ht_tp_kvs {
  uint16_t count;
  const char *keys;
  uint16_t keys_len;
  const uint8_t *types;
  const int64_t *ints;
  const char *strs;
  uint16_t strs_len;
} ht_tp_kvs;

#endif
