/* Shared benchmark report writer: machine, commit, figures. */
#include "bench_report.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

struct bench_report {
  FILE *file;
  char path[1024];
};

uint64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void cpu_model(char *out, size_t cap) {
  snprintf(out, cap, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f == NULL)
    return;
  char line[512];
  while (fgets(line, sizeof(line), f)) {
    if (strncmp(line, "model name", 10) == 0) {
      char *colon = strchr(line, ':');
      if (colon != NULL) {
        snprintf(out, cap, "%s", colon + 2);
        out[strcspn(out, "\n")] = '\0';
      }
      break;
    }
  }
  fclose(f);
}

static void commit_id(char *out, size_t cap) {
  snprintf(out, cap, "unknown");
  FILE *p = popen("git -C " HT_SOURCE_DIR " describe --always --dirty 2>/dev/null", "r");
  if (p == NULL)
    return;
  if (fgets(out, (int)cap, p) != NULL)
    out[strcspn(out, "\n")] = '\0';
  pclose(p);
}

bench_report *bench_report_open(const char *name) {
  bench_report *r = calloc(1, sizeof(*r));
  if (r == NULL)
    return NULL;
  snprintf(r->path, sizeof(r->path), "%s/bench/results/%s.txt", HT_SOURCE_DIR, name);
  r->file = fopen(r->path, "w");
  if (r->file == NULL) {
    perror(r->path);
    free(r);
    return NULL;
  }
  struct utsname u;
  uname(&u);
  char cpu[256], commit[128], when[64];
  cpu_model(cpu, sizeof(cpu));
  commit_id(commit, sizeof(commit));
  time_t now = time(NULL);
  strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  bench_report_line(r, "# hoptrace benchmark: %s\n", name);
  bench_report_line(r, "# date: %s  commit: %s\n", when, commit);
  bench_report_line(r, "# machine: %s %s %s, %ld cpus, %s\n", u.sysname,
                    u.release, u.machine, sysconf(_SC_NPROCESSORS_ONLN), cpu);
  return r;
}

void bench_report_line(bench_report *report, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  if (report != NULL && report->file != NULL) {
    va_start(ap, fmt);
    vfprintf(report->file, fmt, ap);
    va_end(ap);
  }
}

void bench_report_close(bench_report *report) {
  if (report == NULL)
    return;
  fclose(report->file);
  printf("results written to %s\n", report->path);
  free(report);
}
