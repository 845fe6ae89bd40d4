/* A program built against the installed packages only: one trace of a
 * root span and two children, forced sampled, under the service named by
 * argv[1]. Prints "trace <id>", the provider's state and every hoptrace
 * library mapped into the process (the test checks that they are the
 * packaged ones). Exit 0 when the spans started and the provider loaded. */
#include <hoptrace.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void print_mapped_libraries(void) {
  FILE *maps = fopen("/proc/self/maps", "r");
  char line[4096], last[4096] = "";
  if (!maps)
    return;
  while (fgets(line, sizeof line, maps)) {
    const char *path = strchr(line, '/');
    /* a library's mappings are adjacent: print its path once */
    if (path && strstr(path, "/libhoptrace") && strcmp(path, last) != 0) {
      printf("mapped %s", path);
      snprintf(last, sizeof last, "%s", path);
    }
  }
  fclose(maps);
}

int main(int argc, char **argv) {
  const char *service = argc > 1 ? argv[1] : "pkg-consumer";
  ht_span_info root_info = {0}, child_info = {0};
  ht_span root, child;
  ht_span_init(&root);
  ht_span_init(&child);

  ht_tracing_init(); /* the static library's start-up; idempotent */
  root_info.name = "pkg_request";
  root_info.kind = HT_SPAN_SERVER;
  root_info.service = service;
  if (ht_span_start_root(&root, &root_info, HT_SAMPLE_YES) != 0)
    return 1;
  child_info.name = "pkg_step";
  child_info.kind = HT_SPAN_INTERNAL;
  child_info.service = service;
  for (int i = 0; i < 2; i++) {
    if (ht_span_start_child(&child, &root, &child_info) != 0)
      return 2;
    ht_span_kv_int(&child, "step", i);
    ht_span_finish(&child);
  }
  ht_span_finish(&root);

  printf("trace %016" PRIx64 "%016" PRIx64 "\nprovider %d\n", root.ctx.trace_id_hi,
         root.ctx.trace_id_lo, (int)ht_tracing_provider_state());
  print_mapped_libraries();
  return ht_tracing_provider_state() == HT_PROVIDER_LOADED ? 0 : 3;
}
