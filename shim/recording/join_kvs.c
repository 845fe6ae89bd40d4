/* Builds the vectored key-value event's fields from an ht_kv array.
 * Must never: write past HT_KVS_TEXT_MAX + 1 bytes of text, or leave a
 * 0x1f inside a part (it is the separator). */
#include "recording/recorder.h"

#define SEP '\x1f'

/* Appends part (with a leading separator unless first) to buf at *len. */
static void append(char *buf, size_t *len, const char *part, int first) {
  if (!first && *len < HT_KVS_TEXT_MAX)
    buf[(*len)++] = SEP;
  for (const char *p = part; *p && *len < HT_KVS_TEXT_MAX; p++)
    buf[(*len)++] = *p == SEP ? '?' : *p;
  buf[*len] = '\0';
}

void ht_recorder_join_kvs(const ht_kv *kvs, size_t n, char *keys, char *strs,
                          uint8_t *types, int64_t *ints, ht_tp_kvs *out) {
  size_t klen = 0, slen = 0;
  if (n > HT_KVS_MAX)
    n = HT_KVS_MAX;
  keys[0] = strs[0] = '\0';
  for (size_t i = 0; i < n; i++) {
    int is_int = kvs[i].type == HT_KV_INT;
    append(keys, &klen, kvs[i].key ? kvs[i].key : "", i == 0);
    append(strs, &slen, is_int || !kvs[i].str ? "" : kvs[i].str, i == 0);
    types[i] = is_int ? 1 : 0;
    ints[i] = is_int ? kvs[i].i64 : 0;
  }
  out->count = (uint16_t)n;
  out->keys = keys;
  out->keys_len = (uint16_t)klen;
  out->types = types;
  out->ints = ints;
  out->strs = strs;
  out->strs_len = (uint16_t)slen;
}
