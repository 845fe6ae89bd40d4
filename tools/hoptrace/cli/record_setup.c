/* The session `hoptrace record` sets up (record_setup.h): its channels,
 * events and filter, through the lttng command, within the budget's
 * bound. */
#include "cli/record_setup.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli/spawn.h"
#include "hoptrace_schema.h"

void setup_budget_start(setup_budget *b, int ms) {
  *b = (setup_budget){.ms = ms};
  clock_gettime(CLOCK_MONOTONIC, &b->until);
  b->until.tv_sec += ms / 1000;
  b->until.tv_nsec += (long)(ms % 1000) * 1000000;
  if (b->until.tv_nsec >= 1000000000)
    b->until.tv_sec++, b->until.tv_nsec -= 1000000000;
}

int setup_budget_left(const setup_budget *b) {
  if (b->ms == 0)
    return SPAWN_HELPER_MS;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  long long left = (long long)(b->until.tv_sec - now.tv_sec) * 1000 +
                   (b->until.tv_nsec - now.tv_nsec) / 1000000;
  return left <= 0 ? 0 : left > b->ms ? b->ms : left < 1 ? 1 : (int)left;
}

int setup_lttng(setup_budget *b, const char *const *args) {
  char *argv[12] = {"lttng", "--no-sessiond", "--quiet"};
  int n = 3;
  for (; *args != NULL && n < 11; args++)
    argv[n++] = (char *)*args;
  argv[n] = NULL;
  if (strcmp(argv[3], "create") == 0)
    b->created++;
  int left = setup_budget_left(b), rc = left > 0 ? spawn_bounded(argv, left, 1) : SPAWN_OVERRAN;
  if (rc == SPAWN_OVERRAN && !b->stalled) {
    size_t used = (size_t)snprintf(b->step, sizeof(b->step), "lttng");
    for (int i = 3; argv[i] != NULL && used < sizeof(b->step); i++)
      used += (size_t)snprintf(b->step + used, sizeof(b->step) - used, " %s", argv[i]);
    b->stalled = 1;
  }
  return rc == 0 ? 0 : -1;
}

/* The filter the session applies: the user's, and the procnames named. */
static void session_filter(const record_options *o, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  if (o->filter != NULL)
    n += (size_t)snprintf(buf + n, cap - n, "(%s)%s", o->filter, o->nprocnames ? " && (" : "");
  for (int i = 0; i < o->nprocnames && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s$ctx.procname == \"%s\"", i ? " || " : "",
                          o->procnames[i]);
  if (o->filter != NULL && o->nprocnames && n < cap)
    snprintf(buf + n, cap - n, ")");
}

/* The events that name a process's ids. Any process can write them
 * with any vpid field; LTTng's vpid context says who wrote them, so they
 * get a channel of their own with that context (a few events a second:
 * the spans' channel stays without contexts, at its cost). */
#define NAME_EVENTS "hoptrace:process,hoptrace:desc,hoptrace:peer"

/* Every other event of the schema, named (not `hoptrace:*` with an
 * exclusion: lttng-sessiond 2.13 crashed on that in a session with a
 * trigger). */
#define EVENT_NAME(event, fields) "hoptrace:" #event,
static const char *const schema_events[] = {HT_SCHEMA_EVENTS(EVENT_NAME)};
#undef EVENT_NAME

static void span_events(char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof(schema_events) / sizeof(schema_events[0]); i++) {
    const char *e = schema_events[i];
    char item[64];
    snprintf(item, sizeof(item), "%s,", e);
    if (strstr(NAME_EVENTS ",", item) == NULL && n < cap)
      n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? "," : "", e);
  }
}

static int names_channel(setup_budget *b, const char *sess, const record_options *o,
                         const char *mode, const char *flt) {
  char sub[64], num[64];
  /* a process names at most 2^16 ids; its names come again each second */
  uint64_t sb = 256 << 10;
  unsigned nb = 4;
  if (o->flight)
    flight_names_geometry(o->fo.names_bytes, &sb, &nb);
  snprintf(sub, sizeof(sub), "--subbuf-size=%llu", (unsigned long long)sb);
  snprintf(num, sizeof(num), "--num-subbuf=%u", nb);
  const char *const channel[] = {"enable-channel", sess, "--userspace", "--buffers-uid", sub,
                                 num, "hoptrace_names", mode, NULL};
  const char *const context[] = {"add-context", sess, "--userspace",
                                 "--channel=hoptrace_names", "--type=vpid", NULL};
  const char *const events[] = {"enable-event", sess, "--userspace",
                                "--channel=hoptrace_names", NAME_EVENTS, flt, NULL};
  return setup_lttng(b, channel) != 0 || setup_lttng(b, context) != 0 ||
                 setup_lttng(b, events) != 0
             ? -1
             : 0;
}

int setup_session(setup_budget *b, const char *name, const record_options *o, const char *dir,
                  const char *url) {
  char where[PATH_MAX + 32], sess[256], sub[64], num[64], filter[4096], flt[4200];
  if (o->flight) {
    /* in memory only; a snapshot goes where the session's output says */
    if (o->fo.relay_url != NULL)
      snprintf(where, sizeof(where), "--set-url=%s", o->fo.relay_url);
    else
      snprintf(where, sizeof(where), "--output=%s", dir);
    if (setup_lttng(b, (const char *[]){"create", name, "--snapshot", where, NULL}) != 0)
      return -1;
  } else if (url != NULL) {
    snprintf(where, sizeof(where), "--set-url=%s", url);
    if (setup_lttng(b, (const char *[]){"create", name, "--live", where, NULL}) != 0)
      return -1;
  } else {
    snprintf(where, sizeof(where), "--output=%s", dir);
    if (setup_lttng(b, (const char *[]){"create", name, where, NULL}) != 0)
      return -1;
  }
  snprintf(sess, sizeof(sess), "--session=%s", name);
  snprintf(sub, sizeof(sub), "--subbuf-size=%s", o->subbuf_size);
  snprintf(num, sizeof(num), "--num-subbuf=%s", o->num_subbuf);
  if (o->flight) {
    uint64_t sb;
    unsigned nb;
    flight_geometry(o->fo.ring_bytes, &sb, &nb);
    snprintf(sub, sizeof(sub), "--subbuf-size=%llu", (unsigned long long)sb);
    snprintf(num, sizeof(num), "--num-subbuf=%u", nb);
  }
  /* on disk, a packet a second: what a vanished daemon takes with it; a
   * snapshot flushes the packets itself */
  const char *timer = url != NULL || o->flight ? NULL : "--switch-timer=1000000";
  const char *mode = o->flight ? "--overwrite" : NULL;
  if (setup_lttng(b, (const char *[]){"enable-channel", sess, "--userspace", "--buffers-uid",
                                      sub, num, "hoptrace", mode ? mode : timer, NULL}) != 0)
    return -1;
  if (o->pids[0] != '\0') {
    char vpid[1100];
    snprintf(vpid, sizeof(vpid), "--vpid=%s", o->pids);
    if (setup_lttng(b, (const char *[]){"track", sess, "--userspace", vpid, NULL}) != 0)
      return -1;
  }
  session_filter(o, filter, sizeof(filter));
  snprintf(flt, sizeof(flt), "--filter=%s", filter);
  char events[512];
  span_events(events, sizeof(events));
  if (setup_lttng(b, (const char *[]){"enable-event", sess, "--userspace", "--channel=hoptrace",
                                      events, filter[0] ? flt : NULL, NULL}) != 0 ||
      names_channel(b, sess, o, mode ? mode : timer, filter[0] ? flt : NULL) != 0 ||
      setup_lttng(b, (const char *[]){"start", name, NULL}) != 0)
    return -1;
  return 0;
}
