/* HT_CONTROL_SOCKET: the control socket shared by the process's traced
 * messengers, opened by the first and closed by the last.
 * Must never: fail a messenger because the socket could not be opened
 * (tracing control is optional; the reason goes to stderr). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "hoptrace/control.h"
#include "hoptrace/error.h"
#include "control/control_env.h"

static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;
static ht_control *env_control;
static unsigned env_users;

void ht_shim_control_env_acquire(void) {
  pthread_mutex_lock(&env_lock);
  if (env_users++ == 0) {
    const char *path = getenv("HT_CONTROL_SOCKET");
    if (path != NULL && path[0] != '\0') {
      int rc = ht_control_open(path, &env_control);
      if (rc != 0)
        fprintf(stderr, "hoptrace: control socket %s: %s\n", path,
                ht_strerror(rc));
    }
  }
  pthread_mutex_unlock(&env_lock);
}

void ht_shim_control_env_release(void) {
  pthread_mutex_lock(&env_lock);
  if (env_users > 0 && --env_users == 0) {
    ht_control_close(env_control);
    env_control = NULL;
  }
  pthread_mutex_unlock(&env_lock);
}
