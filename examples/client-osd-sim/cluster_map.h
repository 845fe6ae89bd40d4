/* The static cluster map and placement: object -> placement group (hash)
 * -> an ordered set of OSDs (primary first), the same answer in every
 * process that reads the same map.
 *
 * Map file, one directive a line, '#' starts a comment:
 *   pg_num 64          placement groups (default 64)
 *   size 3             copies of each object (default 3, capped at #osds)
 *   min_size 2         copies that must succeed before a write is acked
 *                      (default: size, i.e. all replicas)
 *   osd 0 tcp://127.0.0.1:6800     one line per OSD, ids 0..n-1
 *
 * Placement is rendezvous hashing: the PG's set is the `size` OSDs with
 * the highest hash(pg, osd id). Never: depend on which OSDs are up; the
 * caller skips down ones (the first live member acts as primary). */
#ifndef SIM_CLUSTER_MAP_H
#define SIM_CLUSTER_MAP_H

#include <stddef.h>
#include <stdint.h>

#define SIM_MAX_OSDS 64
#define SIM_URL_MAX 256

typedef struct sim_map {
  unsigned pg_num;
  unsigned size;
  unsigned min_size;
  unsigned n_osds;
  char urls[SIM_MAX_OSDS][SIM_URL_MAX];
} sim_map;

/* Reads path into *m. 0, or -1 with a message in err (cap bytes). */
int sim_map_load(sim_map *m, const char *path, char *err, size_t cap);

/* The placement group of an object name. */
unsigned sim_map_pg(const sim_map *m, const char *name, size_t name_len);

/* Writes the ordered OSD set of pg into set[0..m->size); returns size. */
unsigned sim_map_set(const sim_map *m, unsigned pg, unsigned *set);

#endif
