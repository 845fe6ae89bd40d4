/* The flight recorder's trigger and its notifications (flight_notify.h).
 * Must never: remove a trigger it did not register. */
#include "cli/flight_notify.h"

#include <lttng/lttng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fl_notify {
  struct lttng_condition *condition;
  struct lttng_action *action;
  struct lttng_trigger *trigger;
  struct lttng_notification_channel *channel;
  int registered, subscribed;
  char name[128];
};

void fl_notify_close(fl_notify *n) {
  if (n == NULL)
    return;
  if (n->subscribed)
    lttng_notification_channel_unsubscribe(n->channel, n->condition);
  if (n->channel != NULL)
    lttng_notification_channel_destroy(n->channel);
  if (n->registered)
    lttng_unregister_trigger(n->trigger);
  lttng_trigger_destroy(n->trigger);
  lttng_action_destroy(n->action);
  lttng_condition_destroy(n->condition);
  free(n);
}

static struct lttng_condition *event_condition(const char *event) {
  struct lttng_event_rule *rule = lttng_event_rule_user_tracepoint_create();
  if (rule == NULL)
    return NULL;
  struct lttng_condition *c = NULL;
  if (lttng_event_rule_user_tracepoint_set_name_pattern(rule, event) ==
      LTTNG_EVENT_RULE_STATUS_OK)
    c = lttng_condition_event_rule_matches_create(rule);
  lttng_event_rule_destroy(rule); /* the condition holds its own copy */
  return c;
}

fl_notify *fl_notify_open(const char *name, const char *event, char *err, size_t cap) {
  fl_notify *n = calloc(1, sizeof(*n));
  if (n == NULL) {
    snprintf(err, cap, "out of memory");
    return NULL;
  }
  snprintf(n->name, sizeof(n->name), "%s", name);
  n->condition = event_condition(event);
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

int fl_notify_next(fl_notify *n) {
  struct lttng_notification *note = NULL;
  enum lttng_notification_channel_status st =
      lttng_notification_channel_get_next_notification(n->channel, &note);
  switch (st) {
  case LTTNG_NOTIFICATION_CHANNEL_STATUS_OK: {
    int mine = note != NULL && ours(n, note);
    lttng_notification_destroy(note);
    return mine;
  }
  case LTTNG_NOTIFICATION_CHANNEL_STATUS_NOTIFICATIONS_DROPPED: return 2;
  case LTTNG_NOTIFICATION_CHANNEL_STATUS_INTERRUPTED: return 0;
  default: return -1;
  }
}
