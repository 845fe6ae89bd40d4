/* An OSD's object store: versioned objects in memory, or one file per
 * object under a directory (--data DIR).
 *
 * A write or delete carries the writer's version and is applied only if
 * it is newer than what is stored, so a late replica write (one that
 * timed out at the primary and arrived after a newer one) never rolls an
 * object back. Deletes leave a tombstone with their version.
 *
 * Thread-safe (one lock: the disk work of a simulator, not a database).
 * Never: block on anything but its own lock and the filesystem. */
#ifndef SIM_STORE_H
#define SIM_STORE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sim_store sim_store;

/* Checks a --data directory before it is used: it exists (or is created,
 * one level, mode 0755), is a directory, and a file can be created in it
 * (a probe file, removed at once). 0, or -1 with the reason in err
 * ("not a directory", "cannot create it: ...", "not writable: ..."). */
int sim_store_check_dir(const char *dir, char *err, size_t cap);

/* dir NULL: in memory. 0 or -1 (dir cannot be created). */
int sim_store_new(sim_store **out, const char *dir);
void sim_store_free(sim_store *s);

/* 0 applied, 1 ignored (stored version is newer or equal), -1 I/O error. */
int sim_store_put(sim_store *s, const char *name, size_t name_len,
                  uint64_t version, const uint8_t *data, size_t len);
int sim_store_delete(sim_store *s, const char *name, size_t name_len,
                     uint64_t version);

/* Looks an object up. *state is SIM_ABSENT/PRESENT/DELETED. With want_data
 * a present object's bytes are copied into *data (malloc'd, caller frees;
 * NULL for an empty object). 0, or -1 (I/O error or out of memory). */
int sim_store_get(sim_store *s, const char *name, size_t name_len,
                  int want_data, uint64_t *version, int *state,
                  uint8_t **data, size_t *len);

#endif
