/* HT_CONTROL_SOCKET: one control socket per process, shared by the
 * traced messengers. Internal to libhoptrace. */
#ifndef HT_SHIM_CONTROL_ENV_H
#define HT_SHIM_CONTROL_ENV_H

/* Opens the socket named by HT_CONTROL_SOCKET on the first call (if
 * set), counts a user. Never fails the messenger: a socket that cannot
 * be opened is reported on stderr. */
void ht_shim_control_env_acquire(void);
/* Drops a user; the last one closes the socket. */
void ht_shim_control_env_release(void);

#endif /* HT_SHIM_CONTROL_ENV_H */
