/* Fuzz target: the blocks decoder processes hand the reading process
 * (tools/hoptrace/read/event_block.c). First byte even: the rest is a block
 * as it could arrive damaged; every record event_block_next accepts must
 * lie inside the block with its strings terminated inside it (read
 * here). Odd: the rest describes events that are packed and read back,
 * and must come back equal. Both never crash, never read outside. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "read/event_block.h"

#define CAP 65536

static _Alignas(16) unsigned char block[CAP];

static void touch(const char *s, uint64_t *sum) {
  if (s != NULL)
    *sum += strlen(s);
}

static void parse_raw(const uint8_t *data, size_t size) {
  if (size < sizeof(event_block))
    return;
  size_t n = size < CAP ? size : CAP;
  memcpy(block, data, n);
  event_block *b = (event_block *)block;
  if (b->used > n) /* the reader checks this before parsing (bt_parallel.c) */
    b->used = (uint32_t)n;
  uint32_t at = 0, last = 0;
  const hop_event *ev = NULL;
  const event_record *r;
  uint64_t sum = 0;
  while ((r = event_block_next(b, &at, &ev)) != NULL) {
    FUZZ_CHECK(at > last && at <= b->used);
    FUZZ_CHECK((const unsigned char *)r >= block && (const unsigned char *)r + r->size <= block + n);
    last = at;
    if (r->type != EVENT_RECORD_EVENT)
      continue;
    touch(ev->procname, &sum);
    touch(ev->hostname, &sum);
    touch(ev->name, &sum);
    touch(ev->service, &sum);
    touch(ev->endpoint, &sum);
    touch(ev->message, &sum);
    touch(ev->key, &sum);
    touch(ev->str_value, &sum);
    touch(ev->annotation, &sum);
    touch(ev->peer, &sum);
    for (size_t i = 0; i < ev->n_kvs; i++) {
      touch(ev->kvs[i].key, &sum);
      touch(ev->kvs[i].str_value, &sum);
    }
  }
  (void)sum;
}

/* A string of the input (NULL, or up to 40 bytes with no 0 in it). */
static const char *str(reader *r, char *buf) {
  uint8_t n = byte(r);
  if (n == 0xff)
    return NULL;
  n %= 41;
  size_t i = 0;
  for (; i < n && r->left > 0; i++) {
    uint8_t c = byte(r);
    buf[i] = (char)(c ? c : 'x');
  }
  buf[i] = '\0';
  return buf;
}

static void same_str(const char *a, const char *b) {
  FUZZ_CHECK((a == NULL) == (b == NULL));
  FUZZ_CHECK(a == NULL || strcmp(a, b) == 0);
}

static void round_trip(const uint8_t *data, size_t size) {
  reader r = {data, size};
  static char text[16][48];
  static hop_event in[64];
  static hop_kv kvs[64][4];
  event_block *b = (event_block *)block;
  event_block_init(b);
  size_t n = 0;
  size_t cap = 256 + byte(&r) * 64u; /* small blocks fill up */
  while (r.left > 0 && n < 64) {
    hop_event *e = &in[n];
    memset(e, 0, sizeof(*e));
    e->kind = (hop_event_kind)(byte(&r) % 15);
    e->ts_ns = (int64_t)byte(&r) << 40;
    e->span_id = byte(&r);
    /* strings point into text[]: packing copies them, so reuse is fine
     * only after packing; each event gets fresh copies below */
    char *t = text[n % 16];
    e->procname = str(&r, t);
    e->name = e->procname != NULL ? strdup(e->procname) : NULL;
    e->peer = e->name;
    e->n_kvs = byte(&r) % 5;
    for (size_t k = 0; k < e->n_kvs; k++) {
      kvs[n][k] = (hop_kv){.key = e->name, .is_int = k & 1, .int_value = (int64_t)k,
                           .str_value = k & 1 ? NULL : e->name};
    }
    e->kvs = e->n_kvs ? kvs[n] : NULL;
    if (event_block_put_event(b, cap, e) != 0) {
      FUZZ_CHECK(event_record_size(e) > cap - b->used); /* refused: no room */
      free((void *)e->name);
      break;
    }
    n++;
  }
  uint32_t at = 0;
  const hop_event *ev;
  for (size_t i = 0; i < n; i++) {
    const event_record *rec = event_block_next(b, &at, &ev);
    FUZZ_CHECK(rec != NULL && rec->type == EVENT_RECORD_EVENT);
    FUZZ_CHECK(ev->kind == in[i].kind && ev->ts_ns == in[i].ts_ns && ev->span_id == in[i].span_id);
    same_str(ev->name, in[i].name);
    same_str(ev->peer, in[i].peer);
    FUZZ_CHECK(ev->n_kvs == in[i].n_kvs);
    for (size_t k = 0; k < ev->n_kvs; k++) {
      same_str(ev->kvs[k].key, in[i].kvs[k].key);
      same_str(ev->kvs[k].str_value, in[i].kvs[k].str_value);
      FUZZ_CHECK(ev->kvs[k].int_value == in[i].kvs[k].int_value);
    }
    free((void *)in[i].name);
  }
  FUZZ_CHECK(event_block_next(b, &at, &ev) == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  if (data[0] % 2 == 0)
    parse_raw(data + 1, size - 1);
  else
    round_trip(data + 1, size - 1);
  return 0;
}
