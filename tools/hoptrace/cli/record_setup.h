/* `hoptrace record`'s options (record_args.c) and the LTTng session it
 * sets up through the lttng command (record_setup.c), every command
 * within a bound. */
#ifndef HT_TOOL_RECORD_SETUP_H
#define HT_TOOL_RECORD_SETUP_H

#include <stddef.h>
#include <time.h>

#include "cli/flight.h"

#define MAX_PROCNAMES 16
/* --daemon-timeout's default with --flight: the whole set-up, and the
 * tear-down, each wait this long at most for the session daemon */
#define RECORD_DAEMON_MS 10000

typedef struct record_options {
  const char *name;
  const char *filter;
  const char *output;
  const char *live_url;
  const char *subbuf_size;
  const char *num_subbuf;
  char pids[1024];
  const char *procnames[MAX_PROCNAMES];
  int nprocnames;
  char **command;
  int force;      /* record into a non-empty -o DIR */
  int keep_going; /* a vanished daemon does not end COMMAND */
  int shared;     /* the session daemon that answers, not one of our own */
  int flight;     /* --flight: a snapshot session and its trigger (flight.h) */
  int daemon_ms;  /* --daemon-timeout; 0: each command within SPAWN_HELPER_MS */
  flight_options fo;
} record_options;

/* argv (after `record`) into o. 0, or -1 (said why, or usage wanted). */
int record_parse(int argc, char **argv, record_options *o);

/* The time the daemon is given to answer a run of lttng commands. */
typedef struct setup_budget {
  struct timespec until; /* CLOCK_MONOTONIC; ms 0: no bound but each command's */
  int ms;
  int stalled;       /* a command did not end in time: killed, the daemon not answering */
  int created;       /* sessions asked to be made (they may exist) */
  char step[256];    /* the command that overran */
} setup_budget;

/* Starts a budget of ms (0: none) from now. */
void setup_budget_start(setup_budget *b, int ms);

/* What is left of it, in ms (at least 1 while not overrun; 0 when spent;
 * SPAWN_HELPER_MS without a bound). */
int setup_budget_left(const setup_budget *b);

/* Runs `lttng --no-sessiond --quiet ARGS...` (args NULL-terminated, at
 * most 8) within what is left of b. 0, or -1 (said why; b->stalled when
 * it overran). */
int setup_lttng(setup_budget *b, const char *const *args);

/* One session, started: to disk (dir), live (url) or in memory (--flight,
 * snapshots to dir or to --relay). 0, or -1 (said why). */
int setup_session(setup_budget *b, const char *name, const record_options *o, const char *dir,
                  const char *url);

#endif
