/* Cluster map file parser and rendezvous placement (see cluster_map.h).
 * Never: keep state beyond the sim_map, or consult liveness. */
#include "cluster_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_proto.h"

static int parse_line(sim_map *m, char *line, char *err, size_t cap) {
  char *hash = strchr(line, '#');
  if (hash != NULL)
    *hash = '\0';
  char key[32], val[SIM_URL_MAX];
  unsigned id;
  if (sscanf(line, " osd %u %255s", &id, val) == 2) {
    if (id >= SIM_MAX_OSDS) {
      snprintf(err, cap, "osd id %u out of range (max %d)", id, SIM_MAX_OSDS - 1);
      return -1;
    }
    snprintf(m->urls[id], SIM_URL_MAX, "%s", val);
    if (id + 1 > m->n_osds)
      m->n_osds = id + 1;
    return 0;
  }
  int n = sscanf(line, " %31s %255s", key, val);
  if (n <= 0)
    return 0; /* blank or comment */
  char *end = NULL;
  unsigned long v = n == 2 ? strtoul(val, &end, 10) : 0;
  if (n != 2 || *end != '\0' || v == 0 || v > 1u << 20) {
    snprintf(err, cap, "bad line: %s", line);
    return -1;
  }
  if (strcmp(key, "pg_num") == 0)
    m->pg_num = (unsigned)v;
  else if (strcmp(key, "size") == 0)
    m->size = (unsigned)v;
  else if (strcmp(key, "min_size") == 0)
    m->min_size = (unsigned)v;
  else {
    snprintf(err, cap, "unknown directive: %s", key);
    return -1;
  }
  return 0;
}

int sim_map_load(sim_map *m, const char *path, char *err, size_t cap) {
  memset(m, 0, sizeof(*m));
  m->pg_num = 64;
  m->size = 3;
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    snprintf(err, cap, "cannot open map %s", path);
    return -1;
  }
  char line[512];
  int rc = 0;
  while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
    line[strcspn(line, "\r\n")] = '\0';
    rc = parse_line(m, line, err, cap);
  }
  fclose(f);
  if (rc != 0)
    return -1;
  for (unsigned i = 0; i < m->n_osds; i++) {
    if (m->urls[i][0] == '\0') {
      snprintf(err, cap, "map %s lacks osd %u", path, i);
      return -1;
    }
  }
  if (m->n_osds == 0) {
    snprintf(err, cap, "map %s lists no osd", path);
    return -1;
  }
  if (m->size > m->n_osds)
    m->size = m->n_osds;
  if (m->min_size == 0 || m->min_size > m->size)
    m->min_size = m->size;
  return 0;
}

unsigned sim_map_pg(const sim_map *m, const char *name, size_t name_len) {
  return (unsigned)(sim_hash(name, name_len, 0) % m->pg_num);
}

unsigned sim_map_set(const sim_map *m, unsigned pg, unsigned *set) {
  uint64_t score[SIM_MAX_OSDS];
  for (unsigned i = 0; i < m->n_osds; i++) {
    uint64_t key[2] = {pg, i};
    score[i] = sim_hash(key, sizeof(key), 0x5eed);
  }
  /* selection of the `size` best: n_osds is small */
  unsigned n = 0;
  while (n < m->size) {
    unsigned best = SIM_MAX_OSDS;
    for (unsigned i = 0; i < m->n_osds; i++) {
      int taken = 0;
      for (unsigned j = 0; j < n; j++)
        taken |= set[j] == i;
      if (!taken && (best == SIM_MAX_OSDS || score[i] > score[best]))
        best = i;
    }
    set[n++] = best;
  }
  return n;
}
