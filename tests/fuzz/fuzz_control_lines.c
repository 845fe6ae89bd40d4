/* Fuzz target: the control socket's line reader (control_reader.c) with
 * several connections at once, as the socket thread serves them: the
 * input's first byte says how many (1..8); then each step is a byte
 * naming a connection (low bits) and whether it ends (0x80), a length
 * byte, and that many bytes received on it. Every whole line is run with
 * ht_control_execute, as the socket does.
 * Invariants: each connection yields exactly the lines of its own bytes,
 * in order, whatever the interleaving; the room offered is what one line
 * plus newline leaves; a line too long is reported exactly when the
 * buffer holds HT_CONTROL_LINE_MAX + 2 bytes without a newline (the
 * connection then ends, as on the socket); at the end a last line
 * without newline comes out whole; every answer is "ok" or "error".
 * Each input starts from the default sampler configuration. */
#include <string.h>

#include "control/control_reader.h"
#include "fuzz_target.h"
#include "hoptrace/error.h"
#include "hoptrace/sampler.h"

#define CONNS 8
#define BUF (HT_CONTROL_LINE_MAX + 2)

typedef struct conn {
  ht_ctl_reader r;
  char pending[BUF]; /* the model: bytes since the last newline */
  size_t pending_len;
  int open;
} conn;

static void execute(const char *line, size_t len) {
  char reply[HT_CONTROL_REPLY_MIN];
  int rc = ht_control_execute(line, len, reply, sizeof(reply));
  FUZZ_CHECK(strnlen(reply, sizeof(reply)) < sizeof(reply));
  FUZZ_CHECK(strncmp(reply, rc >= 0 ? "ok" : "error ", rc >= 0 ? 2 : 6) == 0);
}

/* Feeds bytes; returns 0 while the connection stays open. */
static int feed(conn *c, const uint8_t *data, size_t n) {
  while (n > 0) {
    size_t room;
    char *at = ht_ctl_reader_space(&c->r, &room);
    FUZZ_CHECK(room == BUF - c->pending_len);
    size_t take = n < room ? n : room;
    memcpy(at, data, take);
    ht_ctl_reader_commit(&c->r, take);
    const char *line;
    size_t len;
    int got;
    for (size_t i = 0; i < take; i++) { /* the model splits the same bytes */
      if (data[i] != '\n') {
        FUZZ_CHECK(c->pending_len < BUF);
        c->pending[c->pending_len++] = (char)data[i];
        continue;
      }
      got = ht_ctl_reader_next(&c->r, &line, &len);
      FUZZ_CHECK(got == 1 && len == c->pending_len);
      FUZZ_CHECK(memcmp(line, c->pending, len) == 0);
      execute(line, len);
      c->pending_len = 0;
    }
    got = ht_ctl_reader_next(&c->r, &line, &len);
    FUZZ_CHECK(got == (c->pending_len == BUF ? -1 : 0));
    if (got < 0)
      return -1; /* the socket answers "line too long" and hangs up */
    data += take;
    n -= take;
  }
  return 0;
}

static void finish(conn *c) {
  const char *line;
  size_t len;
  int got = ht_ctl_reader_rest(&c->r, &line, &len);
  FUZZ_CHECK(got == (c->pending_len > 0));
  if (got) {
    FUZZ_CHECK(len == c->pending_len && memcmp(line, c->pending, len) == 0);
    execute(line, len);
  }
  FUZZ_CHECK(ht_ctl_reader_rest(&c->r, &line, &len) == 0);
  c->open = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  reader in = {data, size};
  conn conns[CONNS];
  int k = 1 + byte(&in) % CONNS;
  for (int i = 0; i < k; i++) {
    ht_ctl_reader_init(&conns[i].r);
    conns[i].pending_len = 0;
    conns[i].open = 1;
  }
  ht_sampling_config defaults;
  ht_sampling_config_default(&defaults);
  FUZZ_CHECK(ht_sampling_set(&defaults) == 0);
  while (in.left > 0) {
    uint8_t op = byte(&in);
    conn *c = &conns[(op & 0x7f) % k];
    size_t n = byte(&in);
    n = n < in.left ? n : in.left;
    if (c->open && feed(c, in.p, n) != 0)
      c->open = 0;
    in.p += n;
    in.left -= n;
    if (c->open && (op & 0x80))
      finish(c);
  }
  for (int i = 0; i < k; i++)
    if (conns[i].open)
      finish(&conns[i]);
  FUZZ_CHECK(ht_sampling_set(&defaults) == 0);
  return 0;
}
