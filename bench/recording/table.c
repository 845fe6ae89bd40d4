/* The recording benchmark's table (table.h). */
#include "table.h"

#include <stdio.h>
#include <string.h>

#include "bench_report.h"

/* Blkin (Ceph's Dapper on LTTng), measured elsewhere with
 * callgrind; quoted, not re-measured here. */
#define BLKIN_INSTR 9466.0
#define BLKIN_EVENTS 5.0
#define BLKIN_BYTES 328.0

/* Goals per hop: the span API's instructions; the traced messenger's
 * instructions above plain, events and bytes. */
#define GOAL_SPAN_INSTR 4700.0
#define GOAL_MSG_INSTR 3800.0
#define GOAL_MSG_EVENTS 2.0
#define GOAL_MSG_BYTES 130.0

enum { SPAN, TRACED, TRACED_KV, PLAIN, N_ROWS };
static const char *const row_names[N_ROWS] = {"span", "traced", "traced_kv", "plain"};
/* the library the hops ran over: libhoptrace.a (rows "span", ...) or
 * libhoptrace.so (rows "span.so", ...), which reaches its thread-local
 * state through the GOT and calls across the PLT, as applications do */
enum { LIB_A, LIB_SO, N_LIBS };
static const char *const lib_labels[N_LIBS] = {"", " (libhoptrace.so)"};
/* the per-event contexts of a session: none (as `hoptrace record` sets it
 * up), or the vpid and vtid it added before the events carried them */
static const char *const ctx_names[2] = {"none", "vpid,vtid"};

typedef struct figures {
  int have;
  double instr, events, bytes, discarded, lost;
} figures;

static figures fig[N_LIBS][N_ROWS][2];

static int load(const char *path, bench_report *rep) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    perror(path);
    return -1;
  }
  char line[512], name[16];
  int ctx;
  figures x;
  while (fgets(line, sizeof(line), f) != NULL) {
    if (line[0] == '#') {
      bench_report_line(rep, "%s", line);
      continue;
    }
    if (sscanf(line, "%15s %d %lf %lf %lf %lf %lf", name, &ctx, &x.instr, &x.events,
               &x.bytes, &x.discarded, &x.lost) != 7 || ctx < 0 || ctx > 1)
      continue;
    size_t len = strlen(name);
    int lib = len > 3 && strcmp(name + len - 3, ".so") == 0 ? LIB_SO : LIB_A;
    if (lib == LIB_SO)
      name[len - 3] = '\0';
    for (int r = 0; r < N_ROWS; r++)
      if (strcmp(name, row_names[r]) == 0) {
        x.have = 1;
        fig[lib][r][ctx] = x;
      }
  }
  fclose(f);
  return 0;
}

static void num(char *out, size_t cap, double v, int decimals) {
  if (v < 0)
    snprintf(out, cap, "-");
  else
    snprintf(out, cap, "%.*f", decimals, v);
}

/* One row; goal and result are text already decided. */
static void row(bench_report *rep, const char *label, const char *ctx, double instr,
                double events, double bytes, const char *goal, const char *result) {
  char i[32], e[32], b[32];
  num(i, sizeof(i), instr, 0);
  num(e, sizeof(e), events, 2);
  num(b, sizeof(b), bytes, 1);
  bench_report_line(rep, "%-46s %-10s %6s %6s %6s  %-40s %s\n", label, ctx, i, e, b,
                    goal, result);
}

/* "met", or "missed: what", or "INVALID" when LTTng dropped anything:
 * a session that lost events undercounts events and bytes. */
static void verdict(char *out, size_t cap, const figures *x, int instr_ok,
                    int events_ok, int bytes_ok) {
  if (x->discarded != 0 || x->lost != 0)
    snprintf(out, cap, "INVALID (%.0f events discarded, %.0f packets lost)",
             x->discarded, x->lost);
  else if (instr_ok && events_ok && bytes_ok)
    snprintf(out, cap, "met");
  else
    snprintf(out, cap, "missed:%s%s%s", instr_ok ? "" : " instr",
             events_ok ? "" : " events", bytes_ok ? "" : " bytes");
}

static void hoptrace_rows(bench_report *rep, int lib) {
  char result[128], label[96];
  for (int c = 0; c < 2; c++) {
    const figures *x = &fig[lib][SPAN][c];
    if (!x->have)
      continue;
    verdict(result, sizeof(result), x, x->instr <= GOAL_SPAN_INSTR, 1, 1);
    char goal[64];
    snprintf(goal, sizeof(goal), "instr <= %.0f", GOAL_SPAN_INSTR);
    snprintf(label, sizeof(label), "hoptrace span API%s", lib_labels[lib]);
    row(rep, label, ctx_names[c], x->instr, x->events, x->bytes, goal, result);
  }
  const figures *plain = &fig[lib][PLAIN][0];
  for (int c = 0; c < 2; c++) {
    const figures *x = &fig[lib][TRACED][c];
    if (!x->have || !plain->have)
      continue;
    double above = x->instr - plain->instr;
    /* a hop's events as the table shows them (2 decimals): the names a
     * process writes again once a second while in use (shim/README) add a
     * few events a second, not a hop's worth */
    verdict(result, sizeof(result), x, above <= GOAL_MSG_INSTR,
            x->events < GOAL_MSG_EVENTS + 0.005, x->bytes <= GOAL_MSG_BYTES);
    char goal[64];
    snprintf(goal, sizeof(goal), "instr <= %.0f, events <= %.0f, bytes <= %.0f",
             GOAL_MSG_INSTR, GOAL_MSG_EVENTS, GOAL_MSG_BYTES);
    snprintf(label, sizeof(label), "traced messenger above plain%s", lib_labels[lib]);
    row(rep, label, ctx_names[c], above, x->events, x->bytes, goal, result);
  }
  /* the same hop with one handler key-value: what the key-value's own
   * event adds (nothing else may) */
  const figures *kv = &fig[lib][TRACED_KV][0], *bare = &fig[lib][TRACED][0];
  if (kv->have && plain->have && bare->have) {
    snprintf(label, sizeof(label), "traced messenger + 1 handler kv, above plain%s",
             lib_labels[lib]);
    snprintf(result, sizeof(result), "the kv: +%.0f instr, +%.2f events, +%.1f bytes",
             kv->instr - bare->instr, kv->events - bare->events, kv->bytes - bare->bytes);
    row(rep, label, ctx_names[0], kv->instr - plain->instr, kv->events, kv->bytes, "-", result);
  }
  if (plain->have) {
    snprintf(label, sizeof(label), "plain messenger (baseline)%s", lib_labels[lib]);
    row(rep, label, "-", plain->instr, -1, -1, "-", "-");
  }
}

int table_write(const char *path) {
  bench_report *rep = bench_report_open("recording");
  if (rep == NULL)
    return 1;
  if (load(path, rep) != 0) {
    bench_report_close(rep);
    return 1;
  }
  bench_report_line(rep, "\n%-46s %-10s %6s %6s %6s  %-40s %s\n", "per hop", "contexts",
                    "instr", "events", "bytes", "goal", "result");
  row(rep, "Blkin (quoted)", "-", BLKIN_INSTR, BLKIN_EVENTS, BLKIN_BYTES, "-",
      "-");
  for (int lib = 0; lib < N_LIBS; lib++)
    hoptrace_rows(rep, lib);
  bench_report_line(rep, "\n");
  for (int lib = 0; lib < N_LIBS; lib++)
    for (int r = 0; r < N_ROWS; r++)
      for (int c = 0; c < 2; c++)
        if (fig[lib][r][c].have && r != PLAIN)
          bench_report_line(rep, "LTTng, %s hops%s, contexts %s: %.0f events "
                            "discarded, %.0f packets lost (native and callgrind "
                            "sessions)\n", row_names[r], lib_labels[lib],
                            ctx_names[c], fig[lib][r][c].discarded,
                            fig[lib][r][c].lost);
  if (fig[LIB_A][TRACED][0].have)
    bench_report_line(rep, "traced messenger, absolute: %.0f instructions a hop "
                           "(contexts none), %.0f (%s)\n", fig[LIB_A][TRACED][0].instr,
                      fig[LIB_A][TRACED][1].instr, ctx_names[1]);
  bench_report_close(rep);
  return 0;
}
