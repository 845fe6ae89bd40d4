/* The recording benchmark's table (table.h). */
#include "table.h"

#include <stdio.h>
#include <string.h>

#include "bench_report.h"

/* Blkin (ceph/blkin on Debian's lttng-ust, callgrind) as DESIGN.md quotes
 * it, for when run.sh could not build it here. */
static const double blkin_quoted[2][4] = {
    /* instr, clocks, events, bytes */
    {9711.0, 5.0, 5.0, 326.0}, /* recorded */
    {715.0, -1.0, -1.0, -1.0}, /* provider loaded, no session */
};

/* Goals per two-sided hop (README, bench/recording). */
#define GOAL_HOP_INSTR 2900.0
#define GOAL_HOP_EVENTS 2.0
#define GOAL_HOP_CLOCKS 4.0
#define GOAL_IDLE_INSTR 1100.0
#define GOAL_MSG_KV_INSTR 3000.0

/* plain_kv: the plain messenger running traced_kv's handler (its
 * ht_request_kv_int records nothing on a plain request), the baseline of
 * the rows with a kv: the same application code on both sides */
enum { HOP, CODEC, TRACED, TRACED_KV, PLAIN, PLAIN_KV, BLKIN, N_ROWS };
static const char *const row_names[N_ROWS] = {"hop",   "codec",    "traced", "traced_kv",
                                              "plain", "plain_kv", "blkin"};
enum { REC, IDLE, N_MODES };
static const char *const mode_names[N_MODES] = {"rec", "idle"};
/* the library the hops ran over: libhoptrace.a, or libhoptrace.so
 * (rows "hop.so", ...), which reaches its thread-local state through the
 * GOT and calls across the PLT, as applications do */
enum { LIB_A, LIB_SO, N_LIBS };
static const char *const lib_labels[N_LIBS] = {"", " (.so)"};

typedef struct figures {
  int have;
  double instr, clocks, events, bytes, discarded, lost;
} figures;

static figures fig[N_LIBS][N_ROWS][N_MODES];
static char blkin_commit[48];

static int load(const char *path, bench_report *rep) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    perror(path);
    return -1;
  }
  char line[512], name[16], mode[8];
  figures x;
  while (fgets(line, sizeof(line), f) != NULL) {
    if (line[0] == '#') {
      bench_report_line(rep, "%s", line);
      continue;
    }
    if (sscanf(line, "blkin-commit %40s", blkin_commit) == 1)
      continue;
    if (sscanf(line, "%15s %7s %lf %lf %lf %lf %lf %lf", name, mode, &x.instr, &x.clocks,
               &x.events, &x.bytes, &x.discarded, &x.lost) != 8)
      continue;
    size_t len = strlen(name);
    int lib = len > 3 && strcmp(name + len - 3, ".so") == 0 ? LIB_SO : LIB_A;
    if (lib == LIB_SO)
      name[len - 3] = '\0';
    for (int r = 0; r < N_ROWS; r++)
      for (int m = 0; m < N_MODES; m++)
        if (strcmp(name, row_names[r]) == 0 && strcmp(mode, mode_names[m]) == 0) {
          x.have = 1;
          fig[lib][r][m] = x;
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
static void row(bench_report *rep, const char *label, double instr, double clocks,
                double events, double bytes, const char *goal, const char *result) {
  char i[32], c[32], e[32], b[32];
  num(i, sizeof(i), instr, 0);
  num(c, sizeof(c), clocks, 2);
  num(e, sizeof(e), events, 2);
  num(b, sizeof(b), bytes, 1);
  bench_report_line(rep, "%-56s %6s %6s %6s %6s  %-38s %s\n", label, i, c, e, b, goal,
                    result);
}

/* "met", or "missed: what" (each failed part named), or "INVALID" when
 * LTTng dropped anything: a session that lost events undercounts them. */
static void verdict(char *out, size_t cap, const figures *x, const char *const *parts,
                    const int *ok, int n) {
  if (x->discarded != 0 || x->lost != 0) {
    snprintf(out, cap, "INVALID (%.0f events discarded, %.0f packets lost)",
             x->discarded, x->lost);
    return;
  }
  size_t len = (size_t)snprintf(out, cap, "met");
  for (int i = 0; i < n; i++)
    if (!ok[i]) {
      if (strncmp(out, "met", 3) == 0)
        len = (size_t)snprintf(out, cap, "missed:");
      if (len < cap)
        len += (size_t)snprintf(out + len, cap - len, " %s", parts[i]);
    }
}

/* Blkin's figures: measured here, or quoted. */
static figures blkin(int mode) {
  if (fig[LIB_A][BLKIN][mode].have)
    return fig[LIB_A][BLKIN][mode];
  figures q = {1, blkin_quoted[mode][0], blkin_quoted[mode][1], blkin_quoted[mode][2],
               blkin_quoted[mode][3], 0, 0};
  return q;
}

static void blkin_rows(bench_report *rep) {
  char label[96];
  if (blkin_commit[0] != '\0')
    snprintf(label, sizeof(label), "Blkin, recorded (measured here, commit %.12s)",
             blkin_commit);
  else
    snprintf(label, sizeof(label), "Blkin, recorded (quoted: DESIGN.md, another machine)");
  figures r = blkin(REC), i = blkin(IDLE);
  char result[96];
  verdict(result, sizeof(result), &r, NULL, NULL, 0);
  row(rep, label, r.instr, r.clocks, r.events, r.bytes, "-",
      strcmp(result, "met") == 0 ? "-" : result);
  row(rep, "Blkin, provider loaded, no session", i.instr, i.clocks, -1, -1, "-", "-");
}

static void span_rows(bench_report *rep, int lib) {
  char result[160], label[96], goal[64];
  const figures *rec = &fig[lib][HOP][REC], *idle = &fig[lib][HOP][IDLE];
  const figures *codec = &fig[lib][CODEC][IDLE];
  double b_rec = blkin(REC).instr, b_idle = blkin(IDLE).instr;
  if (rec->have) {
    static const char *const parts[] = {"instr", "events", "clocks"};
    int ok[] = {rec->instr <= GOAL_HOP_INSTR, rec->events < GOAL_HOP_EVENTS + 0.005,
                rec->clocks <= GOAL_HOP_CLOCKS};
    verdict(result, sizeof(result), rec, parts, ok, 3);
    size_t len = strlen(result);
    snprintf(result + len, sizeof(result) - len, " (%.2fx Blkin)", rec->instr / b_rec);
    snprintf(goal, sizeof(goal), "instr <= %.0f, events <= %.0f, clocks <= %.0f",
             GOAL_HOP_INSTR, GOAL_HOP_EVENTS, GOAL_HOP_CLOCKS);
    snprintf(label, sizeof(label), "two-sided span hop, recorded%s", lib_labels[lib]);
    row(rep, label, rec->instr, rec->clocks, rec->events, rec->bytes, goal, result);
  }
  if (idle->have) {
    /* tracing's own share: the hop without its message's codec, which
     * Blkin's hop has no equivalent of */
    double own = codec->have ? idle->instr - codec->instr : -1;
    static const char *const parts[] = {"instr", "own share", "clocks"};
    int ok[] = {idle->instr <= GOAL_IDLE_INSTR, own >= 0 && own <= b_idle,
                idle->clocks == 0};
    verdict(result, sizeof(result), idle, parts, ok, 3);
    size_t len = strlen(result);
    snprintf(result + len, sizeof(result) - len, " (own share %.0f, %.2fx Blkin's)", own,
             own / b_idle);
    snprintf(goal, sizeof(goal), "instr <= %.0f, own <= %.0f, clocks 0", GOAL_IDLE_INSTR,
             b_idle);
    snprintf(label, sizeof(label), "two-sided span hop, no session recording%s",
             lib_labels[lib]);
    row(rep, label, idle->instr, idle->clocks, -1, -1, goal, result);
  }
  if (codec->have) {
    snprintf(label, sizeof(label), "  its envelope encode + decode alone%s",
             lib_labels[lib]);
    row(rep, label, codec->instr, codec->clocks, -1, -1, "-", "-");
  }
}

/* A messenger row above its plain baseline: instructions and clock reads. */
static void msg_row(bench_report *rep, const char *what, int lib, const figures *x,
                    const figures *plain, const char *goal, const char *result) {
  char label[96];
  snprintf(label, sizeof(label), "%s%s", what, lib_labels[lib]);
  row(rep, label, x->instr - plain->instr, x->clocks - plain->clocks, x->events, x->bytes,
      goal, result);
}

static void messenger_rows(bench_report *rep, int lib) {
  const figures *plain = &fig[lib][PLAIN][REC];
  if (!plain->have)
    return;
  /* a kv row's baseline runs its handler; plain's when that was not run */
  const figures *plain_kv = fig[lib][PLAIN_KV][REC].have ? &fig[lib][PLAIN_KV][REC] : plain;
  char result[128], goal[64];
  const figures *kv = &fig[lib][TRACED_KV][REC], *kv_idle = &fig[lib][TRACED_KV][IDLE];
  const figures *bare = &fig[lib][TRACED][REC];
  if (kv->have) {
    static const char *const parts[] = {"instr"};
    int ok[] = {kv->instr - plain_kv->instr <= GOAL_MSG_KV_INSTR};
    verdict(result, sizeof(result), kv, parts, ok, 1);
    snprintf(goal, sizeof(goal), "instr <= %.0f above plain", GOAL_MSG_KV_INSTR);
    msg_row(rep, "traced messenger + 1 handler kv, recorded, - plain", lib, kv, plain_kv,
            goal, result);
  }
  if (kv_idle->have) {
    static const char *const parts[] = {"clocks"};
    int ok[] = {kv_idle->clocks - plain_kv->clocks <= 0};
    verdict(result, sizeof(result), kv_idle, parts, ok, 1);
    msg_row(rep, "traced messenger + 1 kv, no session, - plain", lib, kv_idle, plain_kv,
            "clocks 0 above plain", result);
  }
  if (bare->have)
    msg_row(rep, "traced messenger (no kv), recorded, - plain", lib, bare, plain, "-", "-");
  char label[96];
  snprintf(label, sizeof(label), "plain messenger (baseline, absolute)%s", lib_labels[lib]);
  row(rep, label, plain->instr, plain->clocks, -1, -1, "-", "-");
  if (plain_kv != plain) {
    snprintf(label, sizeof(label), "plain messenger, kv handler (baseline)%s", lib_labels[lib]);
    row(rep, label, plain_kv->instr, plain_kv->clocks, -1, -1, "-", "-");
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
  bench_report_line(rep, "\n%-56s %6s %6s %6s %6s  %-38s %s\n", "per hop", "instr",
                    "clocks", "events", "bytes", "goal", "result");
  blkin_rows(rep);
  for (int lib = 0; lib < N_LIBS; lib++) {
    span_rows(rep, lib);
    messenger_rows(rep, lib);
  }
  bench_report_line(rep, "\n");
  for (int lib = 0; lib < N_LIBS; lib++)
    for (int r = 0; r < N_ROWS; r++)
      if (fig[lib][r][REC].have && fig[lib][r][REC].events >= 0)
        bench_report_line(rep, "LTTng, %s%s recorded: %.0f events discarded, %.0f packets "
                          "lost (native and callgrind sessions)\n", row_names[r],
                          lib_labels[lib], fig[lib][r][REC].discarded,
                          fig[lib][r][REC].lost);
  bench_report_close(rep);
  return 0;
}
