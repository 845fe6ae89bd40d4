/* The merging sink (bt_merge.h): one message iterator per input port,
 * each upstream's current batch held until used. Must never drop or
 * reorder the messages of one upstream. */
#include "read/bt_merge.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "read/bt_decode.h"

typedef struct upstream {
  bt_message_iterator *it;
  bt_message_array_const msgs;
  uint64_t count, next;
  bool ended;
} upstream;

typedef struct merge {
  bt_merge_params p;
  upstream *up;
} merge;

static merge *merge_of(bt_self_component_sink *self) {
  return bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
}

static bt_component_class_initialize_method_status
merge_init(bt_self_component_sink *self, bt_self_component_sink_configuration *config,
           const bt_value *params, void *data) {
  (void)config, (void)params;
  const bt_merge_params *p = data;
  merge *m = calloc(1, sizeof(*m));
  if (m == NULL || (m->up = calloc(p->n_ports ? p->n_ports : 1, sizeof(*m->up))) == NULL) {
    free(m);
    return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
  }
  m->p = *p;
  bt_self_component_set_data(bt_self_component_sink_as_self_component(self), m);
  for (uint64_t i = 0; i < p->n_ports; i++) {
    char name[32];
    snprintf(name, sizeof(name), "in%llu", (unsigned long long)i);
    if (bt_self_component_sink_add_input_port(self, name, NULL, NULL) !=
        BT_SELF_COMPONENT_ADD_PORT_STATUS_OK)
      return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
  }
  return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

static bt_component_class_sink_graph_is_configured_method_status
merge_configured(bt_self_component_sink *self) {
  merge *m = merge_of(self);
  for (uint64_t i = 0; i < m->p.n_ports; i++)
    if (bt_message_iterator_create_from_sink_component(
            self, bt_self_component_sink_borrow_input_port_by_index(self, i), &m->up[i].it) !=
        BT_MESSAGE_ITERATOR_CREATE_FROM_SINK_COMPONENT_STATUS_OK)
      return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_ERROR;
  return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_OK;
}

static void merge_finalize(bt_self_component_sink *self) {
  merge *m = merge_of(self);
  if (m == NULL)
    return;
  for (uint64_t i = 0; i < m->p.n_ports; i++) {
    upstream *u = &m->up[i];
    for (; u->next < u->count; u->next++)
      bt_message_put_ref(u->msgs[u->next]);
    bt_message_iterator_put_ref(u->it);
  }
  free(m->up);
  free(m);
}

/* The time a message is merged at: an event's, a loss's beginning; a
 * message with no time (stream and packet bounds; an event whose time
 * does not fit int64 ns, which the decoder drops as malformed) goes at
 * once. */
static bool message_ns(const bt_message *msg, int64_t *ns) {
  const bt_clock_snapshot *snap;
  switch (bt_message_get_type(msg)) {
  case BT_MESSAGE_TYPE_EVENT:
    if (bt_message_event_borrow_stream_class_default_clock_class_const(msg) == NULL)
      return false;
    snap = bt_message_event_borrow_default_clock_snapshot_const(msg);
    break;
  case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
    if (bt_message_discarded_events_borrow_stream_class_default_clock_class_const(msg) == NULL)
      return false;
    snap = bt_message_discarded_events_borrow_beginning_default_clock_snapshot_const(msg);
    break;
  case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
    if (bt_message_discarded_packets_borrow_stream_class_default_clock_class_const(msg) == NULL)
      return false;
    snap = bt_message_discarded_packets_borrow_beginning_default_clock_snapshot_const(msg);
    break;
  default:
    return false;
  }
  return bt_snapshot_ns(snap, ns) == 0;
}

/* Gives u a batch when it has none. 0: it has one or has ended. */
static bt_component_class_sink_consume_method_status fill(merge *m, upstream *u) {
  if (u->ended || u->next < u->count)
    return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
  u->count = u->next = 0;
  bt_component_class_sink_consume_method_status rc;
  switch (bt_message_iterator_next(u->it, &u->msgs, &u->count)) {
  case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
    rc = BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
    break;
  case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
    u->ended = true;
    rc = BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
    break;
  case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
    rc = BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_AGAIN;
    break;
  case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
    return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_MEMORY_ERROR;
  default:
    return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
  }
  /* not failing, yet an error on the thread: the graph must not run on
   * with it (babeltrace2 aborts), the run reports it at the end */
  const bt_error *left = bt_current_thread_take_error();
  if (left != NULL && *m->p.pending == NULL)
    *m->p.pending = left;
  else if (left != NULL)
    bt_error_release(left);
  return rc;
}

/* Hands out messages, earliest head first, until an upstream's batch is
 * used up (the next call refills it: every upstream has its head while
 * the others are compared with it). */
static bt_component_class_sink_consume_method_status merge_consume(bt_self_component_sink *self) {
  merge *m = merge_of(self);
  for (uint64_t i = 0; i < m->p.n_ports; i++) {
    bt_component_class_sink_consume_method_status s = fill(m, &m->up[i]);
    if (s != BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK)
      return s;
  }
  for (;;) {
    upstream *best = NULL;
    int64_t best_ns = 0;
    for (uint64_t i = 0; i < m->p.n_ports; i++) {
      upstream *u = &m->up[i];
      if (u->next == u->count)
        continue;
      int64_t ns;
      if (!message_ns(u->msgs[u->next], &ns)) {
        best = u;
        break;
      }
      if (best == NULL || ns < best_ns)
        best = u, best_ns = ns;
    }
    if (best == NULL)
      return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
    const bt_message *msg = best->msgs[best->next++];
    int stop = m->p.fn(m->p.user, msg);
    bt_message_put_ref(msg);
    if (stop)
      return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
    if (best->next == best->count)
      return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
  }
}

int bt_merge_add(bt_graph *graph, const bt_merge_params *params,
                 const bt_component_sink **sink) {
  bt_component_class_sink *cls = bt_component_class_sink_create("hoptrace-merge", merge_consume);
  int rc = cls != NULL &&
                   bt_component_class_sink_set_initialize_method(cls, merge_init) ==
                       BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK &&
                   bt_component_class_sink_set_graph_is_configured_method(cls, merge_configured) ==
                       BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK &&
                   bt_component_class_sink_set_finalize_method(cls, merge_finalize) ==
                       BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK &&
                   bt_graph_add_sink_component_with_initialize_method_data(
                       graph, cls, "sink", NULL, (void *)params, BT_LOGGING_LEVEL_ERROR, sink) ==
                       BT_GRAPH_ADD_COMPONENT_STATUS_OK
               ? 0
               : -1;
  bt_component_class_sink_put_ref(cls);
  return rc;
}
