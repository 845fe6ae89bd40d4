/* The flight recorder's trigger and its notifications (flight_notify.h).
 * Must never: remove a trigger it did not register. */
#include "cli/flight_notify.h"

#include <lttng/lttng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/ctl_bounded.h"

struct fl_notify {
  struct lttng_condition *condition;
  struct lttng_action *action;
  struct lttng_trigger *trigger;
  struct lttng_notification_channel *channel;
  int registered, subscribed;
  char name[128];
};

/* ask: unsubscribe and unregister (each a command the daemon answers) */
static void release(fl_notify *n, int ask) {
  if (n == NULL)
    return;
  if (n->subscribed && ask)
    lttng_notification_channel_unsubscribe(n->channel, n->condition);
  if (n->channel != NULL) /* closes our end: nothing waits on the daemon */
    lttng_notification_channel_destroy(n->channel);
  if (n->registered && ask)
    lttng_unregister_trigger(n->trigger);
  lttng_trigger_destroy(n->trigger);
  lttng_action_destroy(n->action);
  lttng_condition_destroy(n->condition);
  free(n);
}

void fl_notify_close(fl_notify *n) { release(n, 1); }

void fl_notify_abandon(fl_notify *n) { release(n, 0); }

/* Asks the tracer to send the event's field (an array's element at
 * index >= 0) with each notification: which trace fired, and why. */
static void capture(struct lttng_condition *c, const char *field, int index) {
  struct lttng_event_expr *e = lttng_event_expr_event_payload_field_create(field);
  if (e != NULL && index >= 0) {
    struct lttng_event_expr *el = lttng_event_expr_array_field_element_create(e, (unsigned)index);
    if (el == NULL) {
      lttng_event_expr_destroy(e);
      return;
    }
    e = el;
  }
  if (e != NULL && lttng_condition_event_rule_matches_append_capture_descriptor(c, e) !=
                       LTTNG_CONDITION_STATUS_OK)
    lttng_event_expr_destroy(e);
}

static struct lttng_condition *event_condition(const char *event, int capture_fields) {
  struct lttng_event_rule *rule = lttng_event_rule_user_tracepoint_create();
  if (rule == NULL)
    return NULL;
  struct lttng_condition *c = NULL;
  if (lttng_event_rule_user_tracepoint_set_name_pattern(rule, event) ==
      LTTNG_EVENT_RULE_STATUS_OK)
    c = lttng_condition_event_rule_matches_create(rule);
  lttng_event_rule_destroy(rule); /* the condition holds its own copy */
  if (c != NULL && capture_fields) { /* descriptors 0, 1, 2 (read back in this order) */
    capture(c, "ids", 0);
    capture(c, "ids", 1);
    capture(c, "why", -1);
  }
  return c;
}

fl_notify *fl_notify_open(const char *name, const char *event, int capture_fields, char *err,
                          size_t cap) {
  fl_notify *n = calloc(1, sizeof(*n));
  if (n == NULL) {
    snprintf(err, cap, "out of memory");
    return NULL;
  }
  snprintf(n->name, sizeof(n->name), "%s", name);
  n->condition = event_condition(event, capture_fields);
  n->action = lttng_action_notify_create();
  if (n->condition == NULL || n->action == NULL ||
      (n->trigger = lttng_trigger_create(n->condition, n->action)) == NULL) {
    snprintf(err, cap, "cannot make a trigger on %s", event);
    goto fail;
  }
  enum lttng_error_code rc = lttng_register_trigger_with_name(n->trigger, name);
  if (rc != LTTNG_OK) {
    snprintf(err, cap, "registering trigger %s: %s", name, lttng_strerror(-(int)rc));
    goto fail;
  }
  n->registered = 1;
  n->channel = lttng_notification_channel_create(lttng_session_daemon_notification_endpoint);
  if (n->channel == NULL) {
    snprintf(err, cap, "cannot open the session daemon's notification channel");
    goto fail;
  }
  if (lttng_notification_channel_subscribe(n->channel, n->condition) !=
      LTTNG_NOTIFICATION_CHANNEL_STATUS_OK) {
    snprintf(err, cap, "cannot subscribe to trigger %s's notifications", name);
    goto fail;
  }
  n->subscribed = 1;
  return n;
fail:
  fl_notify_close(n);
  return NULL;
}

/* A notification of ours: a trigger of another recorder with the same
 * condition notifies every subscriber of that condition. */
static int ours(const fl_notify *n, struct lttng_notification *note) {
  const struct lttng_trigger *t = lttng_notification_get_trigger(note);
  const char *name = NULL;
  if (t == NULL || lttng_trigger_get_name(t, &name) != LTTNG_TRIGGER_STATUS_OK)
    return 1;
  return name != NULL && strcmp(name, n->name) == 0;
}

long long fl_notify_tracer_discarded(fl_notify *n) {
  struct lttng_error_query *q = lttng_error_query_condition_create(n->trigger);
  struct lttng_error_query_results *res = NULL;
  long long total = -1;
  unsigned count = 0;
  if (q != NULL &&
      lttng_error_query_execute(q, lttng_session_daemon_command_endpoint, &res) == LTTNG_OK &&
      lttng_error_query_results_get_count(res, &count) == LTTNG_ERROR_QUERY_RESULTS_STATUS_OK) {
    total = 0;
    for (unsigned i = 0; i < count; i++) {
      const struct lttng_error_query_result *r = NULL;
      uint64_t v = 0;
      if (lttng_error_query_results_get_result(res, &r, i) ==
              LTTNG_ERROR_QUERY_RESULTS_STATUS_OK &&
          lttng_error_query_result_get_type(r) == LTTNG_ERROR_QUERY_RESULT_TYPE_COUNTER &&
          lttng_error_query_result_counter_get_value(r, &v) ==
              LTTNG_ERROR_QUERY_RESULT_STATUS_OK)
        total += (long long)v;
    }
  }
  lttng_error_query_results_destroy(res);
  lttng_error_query_destroy(q);
  return total;
}

/* The captured value at index, if an unsigned integer. */
static int captured(const struct lttng_event_field_value *vals, unsigned i, uint64_t *v) {
  const struct lttng_event_field_value *el = NULL;
  return lttng_event_field_value_array_get_element_at_index(vals, i, &el) ==
             LTTNG_EVENT_FIELD_VALUE_STATUS_OK &&
         el != NULL &&
         lttng_event_field_value_unsigned_int_get_value(el, v) == LTTNG_EVENT_FIELD_VALUE_STATUS_OK;
}

static void read_note(struct lttng_notification *notification, fl_note *note) {
  const struct lttng_evaluation *ev = lttng_notification_get_evaluation(notification);
  const struct lttng_event_field_value *vals = NULL;
  *note = (fl_note){0};
  if (ev == NULL || lttng_evaluation_event_rule_matches_get_captured_values(ev, &vals) !=
                        LTTNG_EVALUATION_EVENT_RULE_MATCHES_STATUS_OK)
    return;
  uint64_t why = 0;
  note->has_trace = captured(vals, 0, &note->trace_hi) && captured(vals, 1, &note->trace_lo);
  note->has_why = captured(vals, 2, &why);
  note->why = (unsigned)why;
}

int fl_notify_next(fl_notify *n, fl_note *note) {
  struct lttng_notification *notification = NULL;
  enum lttng_notification_channel_status st =
      lttng_notification_channel_get_next_notification(n->channel, &notification);
  switch (st) {
  case LTTNG_NOTIFICATION_CHANNEL_STATUS_OK: {
    int mine = notification != NULL && ours(n, notification);
    if (mine)
      read_note(notification, note);
    lttng_notification_destroy(notification);
    return mine;
  }
  case LTTNG_NOTIFICATION_CHANNEL_STATUS_NOTIFICATIONS_DROPPED: return 2;
  case LTTNG_NOTIFICATION_CHANNEL_STATUS_INTERRUPTED: return 0;
  default: return -1;
  }
}

/* The tracers' count read and the trigger removed, on a thread given
 * up after ms: its closing frees what it holds if it ever returns. */
typedef struct closing {
  fl_notify *n;
  long long discarded;
} closing;

static int close_job(void *arg) {
  closing *c = arg;
  c->discarded = fl_notify_tracer_discarded(c->n);
  fl_notify_close(c->n);
  return 0;
}

static void close_late(void *arg, int rc) {
  (void)rc;
  free(arg);
}

/* 0 (the count in *discarded), or -1: the daemon did not answer within
 * ms (said; the trigger may remain). */
int fl_notify_close_bounded(fl_notify *n, int ms, long long *discarded) {
  closing *c = calloc(1, sizeof(*c));
  int rc = 0;
  *discarded = -1;
  if (c == NULL) {
    fl_notify_abandon(n);
    return 0;
  }
  c->n = n;
  if (ctl_bounded(close_job, c, close_late, ms, &rc) != 0) {
    fprintf(stderr, "hoptrace: flight recorder: the session daemon did not answer within "
                    "%d s while the trigger was removed: given up\n", ms / 1000);
    return -1;
  }
  *discarded = c->discarded;
  free(c);
  return 0;
}

/* Registering the trigger and subscribing to it, on a thread given up
 * after ms (flight_start's doc). */
typedef struct opening {
  char name[128], event[256], err[256];
  int trace_ids;
  fl_notify *n;
} opening;

static int open_job(void *arg) {
  opening *op = arg;
  op->n = fl_notify_open(op->name, op->event, op->trace_ids, op->err, sizeof(op->err));
  return op->n != NULL ? 0 : -1;
}

static void open_late(void *arg, int rc) {
  opening *op = arg;
  if (rc == 0) /* the daemon answered after all: said left behind already */
    fl_notify_abandon(op->n);
  free(op);
}

fl_notify *fl_notify_open_bounded(const char *name, const char *event, int trace_ids, int ms,
                                  int *stalled) {
  opening *op = calloc(1, sizeof(*op));
  int rc = -1;
  if (op == NULL) {
    fprintf(stderr, "hoptrace: flight recorder: out of memory\n");
    return NULL;
  }
  snprintf(op->name, sizeof(op->name), "%s", name);
  snprintf(op->event, sizeof(op->event), "%s", event);
  op->trace_ids = trace_ids;
  if (ctl_bounded(open_job, op, open_late, ms, &rc) != 0) {
    *stalled = 1; /* op is the waiting thread's now */
    return NULL;
  }
  fl_notify *n = op->n;
  if (n == NULL)
    fprintf(stderr, "hoptrace: flight recorder: %s\n", op->err);
  free(op);
  return n;
}
