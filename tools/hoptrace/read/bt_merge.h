/* A babeltrace2 sink that merges its upstreams by time the way the
 * reading process merges decoders (bt_parallel.c): the earliest head
 * first, ties to the lower port, each upstream taken as it comes. Unlike
 * flt.utils.muxer it accepts an upstream whose time goes back (a process
 * whose clock was set back): the muxer fails the whole graph on it, so
 * one decoder lost every stream while several decoders, whose merge
 * accepts it, read them all. */
#ifndef HT_TOOL_BT_MERGE_H
#define HT_TOOL_BT_MERGE_H

#include <babeltrace2/babeltrace.h>

/* Called with each message in merged order (still the sink's: not to be
 * kept); non-zero ends the graph (the sink says END). */
typedef int (*bt_merge_fn)(void *user, const bt_message *msg);

typedef struct bt_merge_params {
  uint64_t n_ports; /* input ports "in0".."in<n-1>", to connect in order */
  bt_merge_fn fn;
  void *user;
  /* an error an upstream left on the thread while saying OK is moved
   * here when *pending is NULL (else released): bt_graph.c's rule */
  const bt_error **pending;
} bt_merge_params;

/* Adds the sink named "sink" to graph. 0, or -1. params must outlive
 * the graph's run. */
int bt_merge_add(bt_graph *graph, const bt_merge_params *params,
                 const bt_component_sink **sink);

#endif
