/* W3C traceparent <-> ht_trace_context. Follows the Trace Context
 * recommendation's parsing rules. Must never: read past `len`. */
#include <string.h>

#include "common/hex.h"
#include "hoptrace/context.h"
#include "hoptrace/error.h"

#define W3C_SAMPLED 0x01u
#define W3C_RANDOM 0x02u /* Level 2: the trace id's right 7 bytes are random */

/* HTTP optional whitespace (RFC 9110 OWS) around a field value. */
static int is_ows(char c) { return c == ' ' || c == '\t'; }

/* Offsets in "vv-<32>-<16>-ff". */
enum { TRACE_AT = 3, SPAN_AT = 36, FLAGS_AT = 53 };

int ht_traceparent_parse(const char *text, size_t len, ht_trace_context *out) {
  if (text == NULL || out == NULL)
    return HT_EINVAL;
  /* The W3C test suite sends the header with leading/trailing OWS, which
   * is not part of the field value; whitespace inside is refused below. */
  while (len > 0 && is_ows(text[0])) {
    text++;
    len--;
  }
  while (len > 0 && is_ows(text[len - 1]))
    len--;
  if (len < HT_TRACEPARENT_LEN)
    return HT_EBADHEADER;
  uint64_t version, hi, lo, span, flags;
  if (!ht_hex_parse_u64(text, 2, &version) || version == 0xff)
    return HT_EBADHEADER;
  if (version == 0 && len != HT_TRACEPARENT_LEN)
    return HT_EBADHEADER;
  /* Future versions may append fields, always after a '-'. */
  if (len > HT_TRACEPARENT_LEN && text[HT_TRACEPARENT_LEN] != '-')
    return HT_EBADHEADER;
  if (text[2] != '-' || text[SPAN_AT - 1] != '-' || text[FLAGS_AT - 1] != '-')
    return HT_EBADHEADER;
  if (!ht_hex_parse_u64(text + TRACE_AT, 16, &hi) ||
      !ht_hex_parse_u64(text + TRACE_AT + 16, 16, &lo) ||
      !ht_hex_parse_u64(text + SPAN_AT, 16, &span) ||
      !ht_hex_parse_u64(text + FLAGS_AT, 2, &flags))
    return HT_EBADHEADER;
  if ((hi | lo) == 0 || span == 0)
    return HT_EBADCONTEXT;
  *out = (ht_trace_context){
      .trace_id_hi = hi,
      .trace_id_lo = lo,
      .span_id = span,
      .parent_span_id = 0,
      .flags = ((flags & W3C_SAMPLED) ? HT_FLAG_SAMPLED : 0u) |
               ((flags & W3C_RANDOM) ? HT_FLAG_RANDOM : 0u),
  };
  return 0;
}

int ht_traceparent_format(const ht_trace_context *ctx, char *buf, size_t cap) {
  if (ctx == NULL || buf == NULL)
    return HT_EINVAL;
  if (ht_context_validate(ctx) != 0)
    return HT_EBADCONTEXT;
  if (cap < HT_TRACEPARENT_LEN + 1)
    return HT_ENOSPC;
  bool sampled = (ctx->flags & (HT_FLAG_SAMPLED | HT_FLAG_DEBUG)) != 0;
  unsigned w3c = (sampled ? W3C_SAMPLED : 0u) |
                 ((ctx->flags & HT_FLAG_RANDOM) ? W3C_RANDOM : 0u);
  memcpy(buf, "00-", 3);
  ht_hex_format_u64(ctx->trace_id_hi, 16, buf + TRACE_AT);
  ht_hex_format_u64(ctx->trace_id_lo, 16, buf + TRACE_AT + 16);
  buf[SPAN_AT - 1] = '-';
  ht_hex_format_u64(ctx->span_id, 16, buf + SPAN_AT);
  buf[FLAGS_AT - 1] = '-';
  ht_hex_format_u64(w3c, 2, buf + FLAGS_AT);
  buf[HT_TRACEPARENT_LEN] = '\0';
  return 0;
}
