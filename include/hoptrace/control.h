/* Runtime control of a running process's tracing: a local Unix socket
 * that changes the sampler and reports settings and counters.
 *
 * The socket file is created with owner-only permissions (0600) and every
 * connection's peer credentials are checked (same user id as the process,
 * or root): no other user can use it. Never a TCP port.
 *
 * With HT_CONTROL_SOCKET=/path in the environment, the first traced
 * messenger of the process opens the socket there and the last one to
 * close removes it. ht_control_open does the same explicitly.
 *
 * Protocol: one command per line (at most HT_CONTROL_LINE_MAX bytes,
 * printable ASCII), one answer line per command, "ok ..." or
 * "error <NAME> <message>". Commands:
 *   status                     settings and counters as key=value pairs
 *   sample R                   sampler=ratio ratio=R (roots and remote
 *                              contexts alike), 0 <= R <= 1
 *   sampler KIND [key=value..] KIND always|never|ratio|rate|parent, then
 *                              settings (keys of ht_sampling_config_set)
 *   set key=value [key=value..] change settings, keep the kind
 *   trust-debug on|off [RATE]  honour remote DEBUG flags (RATE per second)
 *   help                       the command list
 *   quit                       close the connection
 * A change is all or nothing: on any error nothing is applied.
 * Several clients are served at once (an idle one delays nobody); a
 * command whose client has already hung up is not run, so a client that
 * gave up on its answer does not see its command applied later.
 * `hoptrace ctl [--timeout SECONDS] SOCKET COMMAND...` is the
 * command-line client (one bounded deadline for connect and answer; it
 * sends only to a listener of its own user or root). Another user's
 * connection is answered "error EPERM refused: ..." and closed.
 */
#ifndef HOPTRACE_CONTROL_H
#define HOPTRACE_CONTROL_H

#include <stddef.h>

#include "hoptrace/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HT_CONTROL_LINE_MAX 256

typedef struct ht_control ht_control;

/* Creates the socket at path (copied) and serves it on a thread of its
 * own. An existing socket file nobody listens on is replaced; anything
 * else at path gives HT_EEXIST. Errors: HT_EINVAL (NULL or a path too
 * long for a Unix socket), HT_EEXIST, HT_EACCES (a directory not
 * searchable or writable, another user's stale socket in a sticky
 * directory), HT_EIO (other failures), HT_ENOMEM. */
HT_API int ht_control_open(const char *path, ht_control **out);

/* Stops serving (connected clients are disconnected), removes the socket
 * file and frees c. NULL is fine. Not from the control thread. */
HT_API void ht_control_close(ht_control *c);

/* Executes one command line (len bytes, no newline needed) and writes
 * the answer line, NUL-terminated and without newline, into reply (cap
 * >= HT_CONTROL_REPLY_MIN bytes, else HT_ENOSPC). Returns 0 for an "ok"
 * answer, 1 for "quit", or the negative code of an "error" answer. The
 * socket uses this; an application may call it from its own admin path.
 * Any thread. */
#define HT_CONTROL_REPLY_MIN 1024
HT_API int ht_control_execute(const char *line, size_t len, char *reply,
                              size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* HOPTRACE_CONTROL_H */
