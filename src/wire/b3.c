/* B3 single header <-> ht_trace_context (openzipkin b3-propagation).
 * Must never: read past `len`, write anything on error. */
#include <string.h>

#include "common/hex.h"
#include "hoptrace/context.h"
#include "hoptrace/error.h"

static int parse_sampling(char c, ht_b3_sampling *out) {
  switch (c) {
  case '0': *out = HT_B3_SAMPLING_DENY; return 0;
  case '1': *out = HT_B3_SAMPLING_ACCEPT; return 0;
  case 'd': *out = HT_B3_SAMPLING_DEBUG; return 0;
  default: return HT_EBADHEADER;
  }
}

static uint32_t flags_for(ht_b3_sampling sampling) {
  switch (sampling) {
  case HT_B3_SAMPLING_ACCEPT: return HT_FLAG_SAMPLED;
  case HT_B3_SAMPLING_DEBUG: return HT_FLAG_SAMPLED | HT_FLAG_DEBUG;
  default: return 0;
  }
}

/* "{trace}-{span}" plus what follows, trace 16 or 32 digits. */
static int parse_ids(const char *text, size_t len, ht_trace_context *ctx,
                     size_t *used) {
  size_t trace_digits = 0;
  while (trace_digits < len && text[trace_digits] != '-')
    trace_digits++;
  if (trace_digits != 16 && trace_digits != 32)
    return HT_EBADHEADER;
  if (len < trace_digits + 1 + 16)
    return HT_EBADHEADER;
  uint64_t hi = 0, lo, span;
  if (trace_digits == 32 && !ht_hex_parse_u64(text, 16, &hi))
    return HT_EBADHEADER;
  if (!ht_hex_parse_u64(text + trace_digits - 16, 16, &lo) ||
      !ht_hex_parse_u64(text + trace_digits + 1, 16, &span))
    return HT_EBADHEADER;
  *ctx = (ht_trace_context){.trace_id_hi = hi, .trace_id_lo = lo,
                            .span_id = span};
  *used = trace_digits + 1 + 16;
  return 0;
}

int ht_b3_parse(const char *text, size_t len, ht_trace_context *out,
                ht_b3_sampling *sampling) {
  if (text == NULL || out == NULL)
    return HT_EINVAL;
  ht_trace_context ctx = {0};
  ht_b3_sampling state = HT_B3_SAMPLING_ABSENT;
  if (len == 1) { /* sampling state alone */
    if (parse_sampling(text[0], &state) != 0)
      return HT_EBADHEADER;
  } else {
    size_t at;
    int rc = parse_ids(text, len, &ctx, &at);
    if (rc != 0)
      return rc;
    if (at < len) { /* "-{state}" */
      if (len - at < 2 || text[at] != '-' ||
          parse_sampling(text[at + 1], &state) != 0)
        return HT_EBADHEADER;
      at += 2;
    }
    if (at < len) { /* "-{parent}" */
      if (len - at != 17 || text[at] != '-' ||
          !ht_hex_parse_u64(text + at + 1, 16, &ctx.parent_span_id))
        return HT_EBADHEADER;
    }
    if ((ctx.trace_id_hi | ctx.trace_id_lo) == 0 || ctx.span_id == 0)
      return HT_EBADCONTEXT;
  }
  ctx.flags = flags_for(state);
  *out = ctx;
  if (sampling != NULL)
    *sampling = state;
  return 0;
}

ht_b3_sampling ht_b3_sampling_of(const ht_trace_context *ctx) {
  if (ctx == NULL)
    return HT_B3_SAMPLING_ABSENT;
  if (ctx->flags & HT_FLAG_DEBUG)
    return HT_B3_SAMPLING_DEBUG;
  return (ctx->flags & HT_FLAG_SAMPLED) ? HT_B3_SAMPLING_ACCEPT
                                        : HT_B3_SAMPLING_DENY;
}

static char sampling_char(ht_b3_sampling sampling) {
  switch (sampling) {
  case HT_B3_SAMPLING_DENY: return '0';
  case HT_B3_SAMPLING_ACCEPT: return '1';
  default: return 'd';
  }
}

int ht_b3_format(const ht_trace_context *ctx, ht_b3_sampling sampling,
                 char *buf, size_t cap, size_t *len) {
  if (ctx == NULL || buf == NULL || sampling > HT_B3_SAMPLING_DEBUG)
    return HT_EINVAL;
  if (ht_context_validate(ctx) != 0)
    return HT_EBADCONTEXT;
  char tmp[HT_B3_MAX_LEN + 1];
  size_t n = 0;
  if (ctx->trace_id_hi != 0) {
    ht_hex_format_u64(ctx->trace_id_hi, 16, tmp);
    n += 16;
  }
  ht_hex_format_u64(ctx->trace_id_lo, 16, tmp + n);
  n += 16;
  tmp[n++] = '-';
  ht_hex_format_u64(ctx->span_id, 16, tmp + n);
  n += 16;
  if (sampling != HT_B3_SAMPLING_ABSENT) {
    tmp[n++] = '-';
    tmp[n++] = sampling_char(sampling);
    if (ctx->parent_span_id != 0) {
      tmp[n++] = '-';
      ht_hex_format_u64(ctx->parent_span_id, 16, tmp + n);
      n += 16;
    }
  }
  if (cap < n + 1)
    return HT_ENOSPC;
  memcpy(buf, tmp, n);
  buf[n] = '\0';
  if (len != NULL)
    *len = n;
  return 0;
}
