/* Clock alignment across hosts from the RPCs between them. Every RPC
 * bounds the offset θ = server clock − client clock: ss − cr < θ < sr − cs
 * (a message is received after it is sent). Per host pair the bounds of
 * all RPCs are intersected for a line θ(x) = a + b·x (offset and drift,
 * x the lower-indexed host's time): the feasible (a, b) form a convex
 * polygon (clock_hull.c), its centroid is the estimate and its extremes
 * the bound. Hosts are joined through the tightest pairs (a minimum-width
 * spanning tree from a reference host), maps composed along the tree and
 * then refined jointly so that every pair's constraints hold.
 *
 * Never moves a clock silently: a pair whose RPCs no single line fits
 * (a clock step) is split into time windows and reported inconsistent,
 * and the host's map is then piecewise; near a step, where the RPCs
 * cannot tell which side a time is on, the bound covers both windows. A
 * host without an RPC path to the reference keeps its own clock and is
 * reported unaligned (bound INT64_MAX).
 *
 * The bounds hold for clocks that are linear within a window (constant
 * drift between steps). Known limits: a clock that wanders (slewed by
 * NTP) is split into windows once no line fits within the RPC latencies;
 * its error stays within about those latencies, but the bound, tight
 * where the line is pinched, can understate it. With sparse RPCs (about
 * one a second on a pair) two steps in quick succession, or a step a
 * ±1000 ppm drift can imitate, may be fitted as one line, and the bound
 * fails near it. A step seen only through a pair that is not a tree edge
 * is not in the host's map: it shows as that pair's broken points.
 *
 * Units: ns everywhere (int64 timestamps, any epoch per host); drift in
 * ppm. Limits: 256 hosts (more: clock_sync_host returns -1 and counts
 * them); drift at most ±1000 ppm (a clock off by more is broken; the
 * a-priori bound also keeps short fits finite); 1024 windows per pair (a
 * pair needing more is not used; a wandering clock needs one every few
 * minutes); a pair's RPCs within 46 days of its first (kept exact in
 * doubles; later ones are rejected).
 *
 * Memory: points are kept in buckets of 1 s of the lower-indexed host's
 * clock (whole seconds: the same buckets whatever order RPCs come in); a
 * bucket 8 s older than the newest is reduced to its two hulls (an RPC
 * arriving later still counts, exactly); past 1024 buckets in a pair,
 * neighbours merge to about twice the mean width. A pair thus holds some
 * 10,000–15,000 points (16 bytes each) however long the run; a step in
 * old data is located to within its merged bucket. */
#ifndef HT_TOOL_CLOCK_SYNC_H
#define HT_TOOL_CLOCK_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CLOCK_SYNC_MAX_HOSTS 256
#define CLOCK_SYNC_MAX_DRIFT_PPM 1000.0
#define CLOCK_SYNC_MAX_WINDOWS 1024

typedef struct clock_sync clock_sync;

clock_sync *clock_sync_new(void);
void clock_sync_free(clock_sync *cs);

/* Index of the host called name (copied on first sight; indices count up
 * from 0). -1 when out of memory or past CLOCK_SYNC_MAX_HOSTS (counted). */
int clock_sync_host(clock_sync *cs, const char *name);

/* One RPC: cs_ns and cr_ns on the client host's clock, sr_ns and ss_ns on
 * the server's. 0; same host for both: ignored (counted), 0; -1 when not
 * used: cr < cs or ss < sr, a bad host index, differences that overflow,
 * or out of memory (counted as rejected). RPCs may come in any order. */
int clock_sync_add_rpc(clock_sync *cs, int client_host, int server_host, int64_t cs_ns,
                       int64_t sr_ns, int64_t ss_ns, int64_t cr_ns);

/* Fits every pair, picks the reference (the host named, else the one with
 * the most RPC partners, ties to the smallest name), builds the tree,
 * composes and refines the maps. Call again after more RPCs: it redoes
 * everything from the kept points (linear in them). 0; -1 when the named
 * reference is unknown (the previous maps stay) or out of memory (no maps
 * until a solve succeeds). */
int clock_sync_solve(clock_sync *cs, const char *reference);

/* After a solve: host's local timestamp on the reference's clock; the
 * identity for an unaligned host or before any solve. No allocation. */
int64_t clock_sync_to_reference(const clock_sync *cs, int host, int64_t local_ns);
/* The most that mapping can be off by at that time (ns, rounded up):
 * per tree edge the distance from the map to the far end of the pair's
 * feasible interval (of both fits near a step), summed to the reference.
 * INT64_MAX when unaligned, or near a step where RPCs went one way only
 * (nothing bounds the clock there). No allocation. */
int64_t clock_sync_bound_ns(const clock_sync *cs, int host, int64_t local_ns);

typedef struct clock_sync_summary {
  int hosts, reference; /* reference: host index, -1 before a solve */
  int aligned;          /* hosts with a map, the reference included */
  int pairs, tree_edges;
  uint64_t rpcs, rejected, same_host, hosts_refused;
  /* A point is one message's constraint (an RPC gives two: request and
   * reply); old buckets keep only their hull points, which imply the
   * others, so a count of broken kept points of 0 means no RPC's
   * message arrives before it was sent under the maps. */
  size_t points;          /* kept points, all pairs */
  uint64_t violated_tree; /* kept points the tree's maps break */
  uint64_t violated;      /* kept points the final maps break: 0 when consistent */
  bool refined;           /* the tree broke some and the joint refinement ran */
  bool converged;         /* violated == 0: the final maps meet every pair's
                           * constraints (also when the tree's did) */
  int sweeps;             /* the refinement's passes over the constraints */
} clock_sync_summary;
void clock_sync_get_summary(const clock_sync *cs, clock_sync_summary *out);

typedef struct clock_sync_host_info {
  const char *name; /* owned by cs */
  bool reference, aligned;
  int parent;        /* tree parent, -1 for the reference and unaligned hosts */
  int segments;      /* pieces of the map: more than 1 after a step on the path */
  int64_t at_ns;     /* local time the following are given at */
  double offset_ns;  /* reference − local at at_ns */
  double drift_ppm;  /* d(reference − local)/d(local), ppm, there */
  int64_t bound_ns;  /* clock_sync_bound_ns there */
} clock_sync_host_info;
/* at_ns: a local time, or INT64_MIN for the middle of the host's RPCs.
 * 0, or -1 for a bad index. */
int clock_sync_get_host(const clock_sync *cs, int host, int64_t at_ns, clock_sync_host_info *out);

/* A host pair (a < b); offsets are θ = b's clock − a's clock at a time on
 * a's clock, ns; drift dθ/dt in ppm. */
typedef struct clock_sync_pair_info {
  int a, b;
  uint64_t rpcs, rejected;
  size_t points;       /* kept constraint points */
  int windows;         /* line fits: 1, more after a step, 0 when not fitted */
  bool fitted;         /* some window fits (the pair can be a tree edge) */
  bool inconsistent;   /* no single line fits all its RPCs */
  bool tree_edge;
  int64_t mid_ns;      /* a's clock: middle of the pair's data (of the window) */
  double offset_ns, offset_lo_ns, offset_hi_ns; /* estimate and bounds at mid_ns */
  double drift_ppm, drift_lo_ppm, drift_hi_ppm;
  double width_ns;     /* offset_hi − offset_lo: the tree's edge weight */
  int64_t span_lo_ns, span_hi_ns; /* a's clock: the data's span */
  uint64_t violated;   /* kept points the final maps break */
} clock_sync_pair_info;
int clock_sync_pair_count(const clock_sync *cs);
/* Pair i (0 <= i < count) as a whole (window: -1, the window at its middle
 * gives the numbers) or its window w. 0, or -1 for a bad index. */
int clock_sync_get_pair(const clock_sync *cs, int i, int window, clock_sync_pair_info *out);

/* The clock table, one line per pair then per host, after a summary line
 * and two comment lines (#) naming the columns:
 *   pair A B rpcs rejected offset_us [lo_us hi_us] drift_ppm [lo hi] width_us windows flags
 *     offset = B − A at the pair's mid time ("-" when unfitted); flags:
 *     tree (a tree edge), inconsistent (no single line: windows > 1 or
 *     too many), unfitted, violated=N (kept points the final maps break);
 *     then mid_ns=T: that middle time (A's clock, ns) for a fitted pair
 *   host NAME role parent offset_us drift_ppm bound_us segments
 *     role reference / aligned / unaligned; offset = reference − local at
 *     the middle of the host's RPCs; bound "inf" where nothing bounds
 *     it; parent "-" for none; an unaligned host's line ends "(not
 *     aligned: no RPC with the reference's component)" or "(not aligned:
 *     its RPCs with the reference's component fit no clock line)". */
void clock_sync_print(const clock_sync *cs, FILE *out);

#endif
