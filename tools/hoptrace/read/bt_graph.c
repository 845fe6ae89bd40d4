/* The babeltrace2 graph, in this process: CTF sources (src.ctf.fs, one
 * per trace directory; src.ctf.lttng-live, one per URL) -> a sink that
 * decodes hoptrace events (bt_decode.h) and reports discarded events and
 * packets: a simple sink behind flt.utils.muxer (live) or alone (one
 * stream), the merging sink of bt_merge.h for several streams of files; bt_source_run and bt_source_run_many
 * (bt_source.h). Must never parse CTF itself, nor fork or share a graph
 * between threads (libbabeltrace2 makes no promise for that: decoding in
 * parallel is bt_parallel.c's, in processes). */
#include "read/bt_source.h"

#include <babeltrace2/babeltrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "read/bt_decode.h"
#include "read/bt_merge.h"
#include "read/live_watch.h"
#include "read/trace_dirs.h"

typedef struct run_state {
  const bt_source_callbacks *cb;
  void *user;
  bt_source_stats *stats;
  bt_decoder *decoder;
  bt_message_iterator *iterator;
  live_watch *watch; /* live input: a relay that stops answering */
  int stopped_by_callback;
  /* what each source reads, by its component name: "src<i>" reads
   * dirs[i] (a trace directory), "live<i>" inputs[i] (a URL) */
  char **dirs;
  size_t n_dirs;
  const char *const *inputs;
  size_t n_inputs;
  /* an error a source left on the thread while its iterator still said
   * OK (src.ctf.fs 2.0 returns the messages before a decoding error, the
   * error next time): kept here, as bt_graph_run_once must not be
   * called with an error on the thread (babeltrace2 aborts) */
  const bt_error *pending;
  bt_merge_params merge; /* the merging sink's, which keeps a pointer */
} run_state;

/* The host whose stream lost something: its trace's `hostname`. */
static const char *stream_hostname(const bt_stream *stream) {
  const bt_value *v = bt_trace_borrow_environment_entry_value_by_name_const(
      bt_stream_borrow_trace_const(stream), "hostname");
  return v != NULL && bt_value_is_string(v) ? bt_value_string_get(v) : "";
}

static void discarded(run_state *st, const bt_message *msg, int packets) {
  uint64_t count = 0;
  int64_t begin = 0, end = 0;
  hop_loss loss = {0};
  if (packets) {
    bt_message_discarded_packets_get_count(msg, &count);
    st->stats->discarded_packets += count ? count : 1;
    loss.packets = count ? count : 1;
    loss.hostname = stream_hostname(bt_message_discarded_packets_borrow_stream_const(msg));
    count = 0; /* events inside lost packets: unknown */
  } else {
    loss.hostname = stream_hostname(bt_message_discarded_events_borrow_stream_const(msg));
    if (bt_message_discarded_events_get_count(msg, &count) !=
        BT_PROPERTY_AVAILABILITY_AVAILABLE)
      count = 0;
    st->stats->discarded_events += count;
    /* a time past int64 ns is unknown (0), as without a clock */
    if (bt_message_discarded_events_borrow_stream_class_default_clock_class_const(msg)) {
      (void)bt_snapshot_ns(
          bt_message_discarded_events_borrow_beginning_default_clock_snapshot_const(msg), &begin);
      (void)bt_snapshot_ns(
          bt_message_discarded_events_borrow_end_default_clock_snapshot_const(msg), &end);
    }
  }
  loss.events = count;
  loss.begin_ns = begin;
  loss.end_ns = end;
  if (st->cb->on_discarded != NULL)
    st->cb->on_discarded(st->user, &loss);
}

static int handle(run_state *st, const bt_message *msg) {
  switch (bt_message_get_type(msg)) {
  case BT_MESSAGE_TYPE_EVENT: {
    st->stats->events++;
    hop_event ev;
    int rc = bt_decoder_decode(st->decoder, msg, &ev);
    if (rc == BT_DECODE_FOREIGN_NAME)
      st->stats->foreign_names++;
    else if (rc < 0)
      st->stats->malformed_events++;
    if (rc < 0 && ev.kind == HOP_MALFORMED) /* its trace is told it lost a part */
      return st->cb->on_event(st->user, &ev);
    if (rc <= 0)
      return 0;
    st->stats->hop_events++;
    return st->cb->on_event(st->user, &ev);
  }
  case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
    discarded(st, msg, 0);
    return 0;
  case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
    discarded(st, msg, 1);
    return 0;
  default:
    return 0;
  }
}

static bt_graph_simple_sink_component_initialize_func_status
sink_init(bt_message_iterator *iterator, void *data) {
  ((run_state *)data)->iterator = iterator;
  return BT_GRAPH_SIMPLE_SINK_COMPONENT_INITIALIZE_FUNC_STATUS_OK;
}

/* The merging sink's callback: handle, and stop when the callback says. */
static int merged(void *user, const bt_message *msg) {
  run_state *st = user;
  if (handle(st, msg) == 0)
    return 0;
  st->stopped_by_callback = 1;
  return 1;
}

/* Files with several streams: every source port into the merging sink,
 * in order (bt_merge.h: a stream whose time goes back is read, not
 * refused as the muxer refuses it). */
static int merge_files(bt_graph *graph, const bt_component_source **srcs, size_t n,
                       run_state *st) {
  uint64_t ports = 0;
  for (size_t i = 0; i < n; i++)
    ports += bt_component_source_get_output_port_count(srcs[i]);
  st->merge = (bt_merge_params){ports, merged, st, &st->pending};
  const bt_component_sink *sink;
  if (bt_merge_add(graph, &st->merge, &sink) != 0)
    return -1;
  uint64_t k = 0;
  for (size_t i = 0; i < n; i++)
    for (uint64_t j = 0; j < bt_component_source_get_output_port_count(srcs[i]); j++, k++)
      if (bt_graph_connect_ports(graph,
                                 bt_component_source_borrow_output_port_by_index_const(srcs[i], j),
                                 bt_component_sink_borrow_input_port_by_index_const(sink, k),
                                 NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
        return -1;
  return 0;
}

static bt_graph_simple_sink_component_consume_func_status
sink_consume(bt_message_iterator *iterator, void *data) {
  run_state *st = data;
  bt_message_array_const msgs;
  uint64_t count;
  switch (bt_message_iterator_next(iterator, &msgs, &count)) {
  case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
    break;
  case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
    return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
  case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
    return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
  case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
    return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
  default:
    return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
  }
  live_watch_leave(st->watch); /* our callbacks may wait (a full output): no stall */
  const bt_error *left = bt_current_thread_take_error();
  if (left != NULL && st->pending == NULL)
    st->pending = left;
  else if (left != NULL)
    bt_error_release(left);
  int stop = 0;
  for (uint64_t i = 0; i < count; i++) {
    if (!stop && handle(st, msgs[i]) != 0)
      stop = 1;
    bt_message_put_ref(msgs[i]);
  }
  live_watch_enter(st->watch);
  if (stop) {
    st->stopped_by_callback = 1;
    return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
  }
  return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

static const bt_component_class_source *source_class(const char *plugin_name,
                                                     const char *cls_name,
                                                     const bt_plugin **plugin) {
  if (bt_plugin_find(plugin_name, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE,
                     plugin) != BT_PLUGIN_FIND_STATUS_OK)
    return NULL;
  return bt_plugin_borrow_source_component_class_by_name_const(*plugin, cls_name);
}

/* The deepest cause (index 0: causes are appended as the error rises)
 * of the thread's babeltrace2 error, in a static buffer; the error is
 * cleared. */
static const char *root_cause(void) {
  static char why[256];
  const bt_error *e = bt_current_thread_take_error();
  uint64_t n = e != NULL ? bt_error_get_cause_count(e) : 0;
  snprintf(why, sizeof(why), "%s",
           n > 0 ? bt_error_cause_get_message(bt_error_borrow_cause_by_index(e, 0))
                 : "babeltrace2 error");
  if (e != NULL)
    bt_error_release(e);
  return why;
}

/* Adds one source with params {inputs: [input], extra...}. */
static int add_source(bt_graph *graph, const bt_component_class_source *cls,
                      const char *name, const char *input, int live,
                      const bt_component_source **src, char *err, size_t err_len) {
  bt_value *params = bt_value_map_create();
  bt_value *inputs = NULL;
  int rc = -1;
  if (params == NULL || bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) ||
      bt_value_array_append_string_element(inputs, input))
    goto out;
  if (live && bt_value_map_insert_string_entry(params, "session-not-found-action", "end"))
    goto out;
  /* the plugin's own log lines would name a decoder's link directory:
   * its error's first cause goes into our message instead */
  if (bt_graph_add_source_component(graph, cls, name, params,
                                    live ? BT_LOGGING_LEVEL_ERROR : BT_LOGGING_LEVEL_NONE,
                                    src) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
    snprintf(err, err_len, "cannot open %s as an LTTng trace: %s", input, root_cause());
    goto out;
  }
  rc = 0;
out:
  bt_value_put_ref(params);
  return rc;
}

/* Connects every output port of src to a fresh input port of the muxer.
 * lttng-live adds its ports later, on the first run: the muxer takes
 * them through the graph's port-added handling of src.ctf.lttng-live,
 * which creates exactly one output port "out" up front. */
static int connect_to_muxer(bt_graph *graph, const bt_component_source *src,
                            const bt_component_filter *muxer) {
  uint64_t ports = bt_component_source_get_output_port_count(src);
  for (uint64_t i = 0; i < ports; i++) {
    const bt_port_output *out_port =
        bt_component_source_borrow_output_port_by_index_const(src, i);
    uint64_t in_count = bt_component_filter_get_input_port_count(muxer);
    const bt_port_input *in_port =
        bt_component_filter_borrow_input_port_by_index_const(muxer, in_count - 1);
    if (bt_graph_connect_ports(graph, out_port, in_port, NULL) !=
        BT_GRAPH_CONNECT_PORTS_STATUS_OK)
      return -1;
  }
  return 0;
}

static const bt_component_filter *add_muxer(bt_graph *graph, const bt_plugin *utils) {
  const bt_component_class_filter *muxer_cls =
      bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer");
  const bt_component_filter *muxer = NULL;
  if (muxer_cls == NULL ||
      bt_graph_add_filter_component(graph, muxer_cls, "muxer", NULL, BT_LOGGING_LEVEL_ERROR,
                                    &muxer) != BT_GRAPH_ADD_COMPONENT_STATUS_OK)
    return NULL;
  return muxer;
}

/* The file sources: one per trace directory below each input. */
static int add_file_sources(bt_graph *graph, const bt_component_class_source *cls,
                            const char *const *inputs, size_t n_inputs, run_state *st,
                            const bt_component_source ***srcs, size_t *n,
                            char *err, size_t err_len) {
  char **dirs = NULL;
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < n_inputs; i++) {
    size_t before = *n;
    rc = bt_find_trace_dirs(inputs[i], &dirs, n, 0);
    if (rc != 0)
      snprintf(err, err_len, "%s: %s", inputs[i], bt_trace_dirs_error(rc));
    if (rc == 0 && *n == before) {
      snprintf(err, err_len, "%s: no CTF trace (no metadata file) found", inputs[i]);
      rc = -1;
    }
  }
  st->stats->trace_dirs = *n;
  if (rc == 0 && *n > 0 && (*srcs = calloc(*n, sizeof(**srcs))) == NULL)
    rc = -1;
  for (size_t i = 0; rc == 0 && i < *n; i++) {
    char name[32];
    snprintf(name, sizeof(name), "src%zu", i);
    rc = add_source(graph, cls, name, dirs[i], 0, &(*srcs)[i], err, err_len);
  }
  st->dirs = dirs; /* to name the one that fails (failure) */
  st->n_dirs = *n;
  return rc != 0 || *n == 0 ? -1 : 0;
}

/* The live sources: one per session URL, all into the muxer. */
static int add_live_sources(bt_graph *graph, const bt_component_class_source *cls,
                            const char *const *inputs, size_t n_inputs,
                            const bt_component_source ***srcs, char *err, size_t err_len) {
  if ((*srcs = calloc(n_inputs, sizeof(**srcs))) == NULL)
    return -1;
  for (size_t i = 0; i < n_inputs; i++) {
    char name[32];
    snprintf(name, sizeof(name), "live%zu", i);
    if (add_source(graph, cls, name, inputs[i], 1, &(*srcs)[i], err, err_len) != 0)
      return -1;
  }
  return 0;
}

/* sources -> muxer -> sink (live), sources -> merging sink (files); a
 * single stream goes straight to the sink (nothing to merge). */
static int build_graph(bt_graph *graph, const char *const *inputs, size_t n_inputs,
                       run_state *st, const bt_plugin **plugins, char *err, size_t err_len) {
  int live = strncmp(inputs[0], "net://", 6) == 0;
  if (bt_plugin_find("utils", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE,
                     &plugins[0]) != BT_PLUGIN_FIND_STATUS_OK) {
    snprintf(err, err_len, "babeltrace2 'utils' plugin not found (install babeltrace2)");
    return -1;
  }
  const bt_component_class_source *cls =
      source_class("ctf", live ? "lttng-live" : "fs", &plugins[1]);
  if (cls == NULL) {
    snprintf(err, err_len, "babeltrace2 'ctf' plugin not found (install babeltrace2)");
    return -1;
  }
  const bt_component_source **srcs = NULL;
  size_t n = 0;
  st->inputs = inputs;
  st->n_inputs = n_inputs;
  if (live) {
    n = n_inputs;
    if (add_live_sources(graph, cls, inputs, n_inputs, &srcs, err, err_len) != 0) {
      free(srcs);
      return -1;
    }
  } else if (add_file_sources(graph, cls, inputs, n_inputs, st, &srcs, &n, err, err_len) != 0) {
    free(srcs);
    return -1;
  }
  const bt_port_output *upstream = NULL;
  if (!live && (n > 1 || bt_component_source_get_output_port_count(srcs[0]) > 1)) {
    int rc = merge_files(graph, srcs, n, st);
    free(srcs);
    if (rc != 0)
      snprintf(err, err_len, "cannot connect %s to the merging sink", inputs[0]);
    return rc;
  }
  if (!live) {
    upstream = bt_component_source_borrow_output_port_by_index_const(srcs[0], 0);
  } else {
    const bt_component_filter *muxer = add_muxer(graph, plugins[0]);
    int rc = muxer != NULL ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
      rc = connect_to_muxer(graph, srcs[i], muxer);
    if (rc != 0) {
      snprintf(err, err_len, "cannot connect %s to the muxer", inputs[0]);
      free(srcs);
      return -1;
    }
    upstream = bt_component_filter_borrow_output_port_by_index_const(muxer, 0);
  }
  free(srcs);
  const bt_component_sink *sink;
  if (bt_graph_add_simple_sink_component(graph, "sink", sink_init, sink_consume,
                                         NULL, st, &sink) != BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
      bt_graph_connect_ports(graph, upstream,
                             bt_component_sink_borrow_input_port_by_index_const(sink, 0),
                             NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
    snprintf(err, err_len, "cannot create the sink");
    return -1;
  }
  return 0;
}

/* What source `name` ("src<i>", "live<i>") reads, NULL when none. */
static const char *source_path(const run_state *st, const char *name) {
  char *end;
  if (name == NULL)
    return NULL;
  if (strncmp(name, "src", 3) == 0 && name[3] >= '0' && name[3] <= '9') {
    unsigned long i = strtoul(name + 3, &end, 10);
    return *end == '\0' && i < st->n_dirs ? st->dirs[i] : NULL;
  }
  if (strncmp(name, "live", 4) == 0 && name[4] >= '0' && name[4] <= '9') {
    unsigned long i = strtoul(name + 4, &end, 10);
    return *end == '\0' && i < st->n_inputs ? st->inputs[i] : NULL;
  }
  return NULL;
}

/* The input a cause of a babeltrace2 error came from: the first
 * (deepest) cause raised by one of our sources or its iterators. */
static const char *failed_source(const run_state *st, const bt_error *e) {
  uint64_t n = e != NULL ? bt_error_get_cause_count(e) : 0;
  for (uint64_t i = 0; i < n; i++) {
    const bt_error_cause *c = bt_error_borrow_cause_by_index(e, i);
    const char *name = NULL;
    switch (bt_error_cause_get_actor_type(c)) {
    case BT_ERROR_CAUSE_ACTOR_TYPE_COMPONENT:
      name = bt_error_cause_component_actor_get_component_name(c);
      break;
    case BT_ERROR_CAUSE_ACTOR_TYPE_MESSAGE_ITERATOR:
      name = bt_error_cause_message_iterator_actor_get_component_name(c);
      break;
    default:
      break;
    }
    const char *path = source_path(st, name);
    if (path != NULL)
      return path;
  }
  return NULL;
}

/* The graph failed: err names the trace directory (or URL) whose source
 * raised the error, found below its input so its path begins with the
 * input's, and the deepest cause; the error a source left before comes
 * first. Several inputs read as one must say which one is damaged. */
static void failure(run_state *st, char *err, size_t err_len) {
  const bt_error *now = bt_current_thread_take_error();
  const bt_error *e = st->pending != NULL ? st->pending : now;
  const char *path = failed_source(st, e);
  if (path == NULL && e != now)
    path = failed_source(st, now);
  const char *why = e != NULL && bt_error_get_cause_count(e) > 0
                        ? bt_error_cause_get_message(bt_error_borrow_cause_by_index(e, 0))
                        : "babeltrace2 graph error";
  if (path != NULL)
    snprintf(err, err_len, "reading %s failed: %s", path, why);
  else
    snprintf(err, err_len, "reading %s%s failed: %s", st->inputs[0],
             st->n_inputs > 1 ? " (and the other inputs)" : "", why);
  if (now != NULL)
    bt_error_release(now);
}

static void nap_100ms(void) {
  struct timespec ts = {0, 100 * 1000 * 1000};
  nanosleep(&ts, NULL);
}

int bt_source_run(const char *input, const bt_source_callbacks *callbacks,
                  void *user, bt_source_stats *stats, atomic_int *stop,
                  char *err, size_t err_len) {
  return bt_source_run_many(&input, 1, callbacks, user, stats, stop, err, err_len);
}

int bt_source_run_many(const char *const *inputs, size_t n_inputs,
                       const bt_source_callbacks *callbacks, void *user,
                       bt_source_stats *stats, atomic_int *stop, char *err,
                       size_t err_len) {
  *stats = (bt_source_stats){0};
  run_state st = {.cb = callbacks, .user = user, .stats = stats,
                  .decoder = bt_decoder_new()};
  const bt_plugin *plugins[2] = {NULL, NULL};
  bt_graph *graph = bt_graph_create(0);
  int rc = -1;
  if (graph == NULL || st.decoder == NULL) {
    snprintf(err, err_len, "out of memory");
    goto out;
  }
  /* a live source may wait on its relay from its creation on */
  if (strncmp(inputs[0], "net://", 6) == 0 &&
      (st.watch = live_watch_start(graph, inputs, n_inputs, stop)) == NULL) {
    snprintf(err, err_len, "out of memory");
    goto out;
  }
  live_watch_enter(st.watch);
  int built = build_graph(graph, inputs, n_inputs, &st, plugins, err, err_len);
  live_watch_leave(st.watch);
  if (built != 0 && live_watch_stalled(st.watch))
    goto stalled;
  if (built != 0)
    goto out;
  for (;;) {
    if (stop != NULL && *stop)
      break;
    live_watch_enter(st.watch);
    bt_graph_run_once_status status = bt_graph_run_once(graph);
    live_watch_leave(st.watch);
    if (live_watch_stalled(st.watch))
      goto stalled;
    if (stop != NULL && *stop) /* a source the watch cut fails: no error of its own */
      break;
    if (status == BT_GRAPH_RUN_ONCE_STATUS_END)
      break;
    if (status == BT_GRAPH_RUN_ONCE_STATUS_AGAIN) {
      if (callbacks->on_idle != NULL)
        callbacks->on_idle(user);
      nap_100ms();
      continue;
    }
    if (status != BT_GRAPH_RUN_ONCE_STATUS_OK) {
      if (st.stopped_by_callback)
        break;
      failure(&st, err, err_len);
      goto out;
    }
  }
  if (st.pending != NULL && !st.stopped_by_callback && !(stop != NULL && *stop)) {
    /* a source's error, though the graph ended */
    failure(&st, err, err_len);
    goto out;
  }
  rc = 0;
  goto out;
stalled:
  snprintf(err, err_len, "the relay of %s%s stalled: no answer for %d s (stopped or "
           "unreachable); what it held after that was not read", inputs[0],
           n_inputs > 1 ? " (or of another input)" : "", LIVE_STALL_MS / 1000);
out:
  for (size_t i = 0; i < st.n_dirs; i++)
    free(st.dirs[i]);
  free(st.dirs);
  if (st.pending != NULL)
    bt_error_release(st.pending);
  live_watch_enter(st.watch); /* the teardown detaches from the relay: it may wait */
  bt_graph_put_ref(graph);
  live_watch_stop(st.watch);
  bt_plugin_put_ref(plugins[0]);
  bt_plugin_put_ref(plugins[1]);
  bt_decoder_free(st.decoder);
  bt_current_thread_clear_error();
  return rc;
}
