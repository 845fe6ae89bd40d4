/* Uses the installed headers and library: the generated version header
 * agrees with the library, then parse a traceparent, frame an envelope
 * carrying it, read it back. Exit 0 on success. */
#include <hoptrace.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  if (strcmp(ht_version(), HT_VERSION_STRING) != 0 ||
      ht_version_number() != HT_VERSION_NUMBER) {
    printf("installed hoptrace: headers %s, library %s\n", HT_VERSION_STRING,
           ht_version());
    return 5;
  }
  ht_trace_context ctx;
  const char *tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  if (ht_traceparent_parse(tp, strlen(tp), &ctx) != 0)
    return 1;
  ht_envelope env = {.type = HT_MSG_REQUEST, .operation = "op", .has_trace = true,
                     .trace = ctx, .payload = "hi", .payload_len = 2};
  unsigned char frame[128];
  size_t len, used;
  if (ht_frame_encode(&env, frame, sizeof(frame), &len) != 0)
    return 2;
  ht_frame_reader *reader;
  if (ht_frame_reader_new(0, &reader) != 0)
    return 3;
  ht_envelope out;
  int rc = ht_frame_reader_feed(reader, frame, len, &used, &out);
  int ok = rc == 0 && ht_context_equal(&out.trace, &ctx) && out.payload_len == 2;
  ht_frame_reader_free(reader);
  printf("installed hoptrace %s: %s\n", ht_version(),
         ok ? "ok" : ht_strerror(rc));
  return ok ? 0 : 4;
}
