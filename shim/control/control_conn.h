/* One connection of the control socket: its lines executed and answered
 * without ever blocking the thread that serves every connection.
 * Internal to libhoptrace. */
#ifndef HT_SHIM_CONTROL_CONN_H
#define HT_SHIM_CONTROL_CONN_H

#include <stdint.h>

#include "control/control_reader.h"

typedef struct ht_ctl_conn {
  int fd; /* -1: a free slot */
  uint64_t active_ms; /* when it last sent something (monotonic) */
  ht_ctl_reader reader;
} ht_ctl_conn;

/* Sends one answer line without waiting; 0 when all of it went out. */
int ht_ctl_conn_send(int fd, const char *text);

/* Reads what fd has and runs its whole lines. 0: keep the connection,
 * -1: it is over (EOF, error, quit, a line too long, a client that does
 * not read its answers, or a client that has gone). */
int ht_ctl_conn_ready(ht_ctl_conn *c, uint64_t now_ms);

#endif /* HT_SHIM_CONTROL_CONN_H */
