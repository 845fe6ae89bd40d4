/* capture.json: the counters `hoptrace record --flight` writes beside a
 * host's snapshots (triggers fired, snapshots taken, coalesced,
 * rate-limited, dropped, the daemon's dropped notifications, failed
 * snapshots, trigger-to-snapshot latency). Read for the report's capture
 * section; the tool never trusts it for what the traces themselves say. */
#ifndef HT_TOOL_CAPTURE_JSON_H
#define HT_TOOL_CAPTURE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CAPTURE_JSON_MAX_FILES 64

typedef struct capture_counts {
  char path[512];
  /* -1: absent from the file */
  int64_t triggers_fired, snapshots, coalesced, rate_limited, dropped,
      daemon_dropped, tracer_discarded, snapshot_failures;
  double p50_ms, p99_ms; /* trigger to snapshot; < 0: absent */
} capture_counts;

typedef struct capture_files {
  capture_counts files[CAPTURE_JSON_MAX_FILES];
  size_t n;
  size_t unreadable; /* capture.json files found that did not parse */
} capture_files;

/* The capture.json files in each input directory and the directories
 * below it, 2 levels deep (a host's subdirectory; a relay's host). */
void capture_files_find(const char *const *inputs, size_t n_inputs, capture_files *out);

/* One file's text: 0, or -1 when it holds no counter at all. */
int capture_json_parse(const char *text, capture_counts *out);

#endif
