/* Versioned object store of an OSD (see store.h): a chained hash table in
 * memory, or files under a directory. Never: apply an older version over
 * a newer one, leak an entry on any path. */
#include "store.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim_proto.h"

#define BUCKETS 4096

typedef struct entry {
  struct entry *next;
  uint64_t version;
  int state;
  uint8_t *data;
  size_t len;
  size_t name_len;
  char name[]; /* name_len bytes */
} entry;

struct sim_store {
  pthread_mutex_t lock;
  char *dir; /* NULL: memory */
  entry *buckets[BUCKETS];
};

int sim_store_check_dir(const char *dir, char *err, size_t cap) {
  struct stat st;
  if (stat(dir, &st) != 0) {
    if (errno != ENOENT || mkdir(dir, 0755) != 0) {
      snprintf(err, cap, "cannot create it: %s", strerror(errno));
      return -1;
    }
    if (stat(dir, &st) != 0) {
      snprintf(err, cap, "cannot stat it: %s", strerror(errno));
      return -1;
    }
  }
  if (!S_ISDIR(st.st_mode)) {
    snprintf(err, cap, "not a directory");
    return -1;
  }
  char probe[4200];
  snprintf(probe, sizeof(probe), "%s/.sim-osd-probe.%d", dir, (int)getpid());
  int fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || write(fd, "x", 1) != 1) {
    snprintf(err, cap, "not writable: %s", strerror(errno));
    if (fd >= 0) {
      close(fd);
      unlink(probe);
    }
    return -1;
  }
  close(fd);
  unlink(probe);
  return 0;
}

int sim_store_new(sim_store **out, const char *dir) {
  sim_store *s = calloc(1, sizeof(*s));
  if (s == NULL)
    return -1;
  if (dir != NULL) {
    if ((mkdir(dir, 0755) != 0 && errno != EEXIST) || (s->dir = strdup(dir)) == NULL) {
      free(s);
      return -1;
    }
  }
  pthread_mutex_init(&s->lock, NULL);
  *out = s;
  return 0;
}

void sim_store_free(sim_store *s) {
  if (s == NULL)
    return;
  for (size_t i = 0; i < BUCKETS; i++) {
    entry *e = s->buckets[i];
    while (e != NULL) {
      entry *next = e->next;
      free(e->data);
      free(e);
      e = next;
    }
  }
  pthread_mutex_destroy(&s->lock);
  free(s->dir);
  free(s);
}

/* --- memory */

static entry **slot_of(sim_store *s, const char *name, size_t name_len) {
  entry **p = &s->buckets[sim_hash(name, name_len, 0) % BUCKETS];
  while (*p != NULL && ((*p)->name_len != name_len || memcmp((*p)->name, name, name_len) != 0))
    p = &(*p)->next;
  return p;
}

static int mem_apply(sim_store *s, const char *name, size_t name_len, uint64_t version,
                     int state, const uint8_t *data, size_t len) {
  entry **p = slot_of(s, name, name_len);
  if (*p != NULL && (*p)->version >= version)
    return 1;
  uint8_t *copy = NULL;
  if (len > 0 && (copy = malloc(len)) == NULL)
    return -1;
  if (len > 0)
    memcpy(copy, data, len);
  if (*p == NULL) {
    entry *e = calloc(1, sizeof(*e) + name_len);
    if (e == NULL) {
      free(copy);
      return -1;
    }
    memcpy(e->name, name, name_len);
    e->name_len = name_len;
    *p = e;
  }
  free((*p)->data);
  (*p)->data = copy;
  (*p)->len = len;
  (*p)->version = version;
  (*p)->state = state;
  return 0;
}

/* --- directory: file = u64 version | u8 state | data */

static void file_path(const sim_store *s, const char *name, size_t name_len, char *out,
                      size_t cap) {
  size_t n = (size_t)snprintf(out, cap, "%s/", s->dir);
  for (size_t i = 0; i < name_len && n + 4 < cap; i++) {
    unsigned char c = (unsigned char)name[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
        c == '_' || c == '-')
      out[n++] = (char)c;
    else
      n += (size_t)snprintf(out + n, cap - n, "%%%02x", c);
  }
  out[n] = '\0';
}

static int file_read(const char *path, uint64_t *version, int *state, uint8_t **data,
                     size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    *version = 0;
    *state = SIM_ABSENT;
    return errno == ENOENT ? 0 : -1;
  }
  uint8_t hdr[SIM_REPLY_HDR];
  sim_obj_reply r;
  int rc = -1;
  if (fread(hdr, 1, sizeof(hdr), f) == sizeof(hdr) && sim_reply_decode(hdr, sizeof(hdr), &r) == 0) {
    *version = r.version;
    *state = r.state;
    rc = 0;
    if (data != NULL) {
      fseek(f, 0, SEEK_END);
      long size = ftell(f) - (long)sizeof(hdr);
      fseek(f, (long)sizeof(hdr), SEEK_SET);
      *data = NULL;
      *len = size > 0 ? (size_t)size : 0;
      if (*len > 0 && ((*data = malloc(*len)) == NULL || fread(*data, 1, *len, f) != *len)) {
        free(*data);
        *data = NULL;
        rc = -1;
      }
    }
  }
  fclose(f);
  return rc;
}

static int file_apply(sim_store *s, const char *name, size_t name_len, uint64_t version,
                      int state, const uint8_t *data, size_t len) {
  char path[4096], tmp[4200];
  file_path(s, name, name_len, path, sizeof(path));
  uint64_t have;
  int have_state;
  if (file_read(path, &have, &have_state, NULL, NULL) != 0)
    return -1;
  if (have_state != SIM_ABSENT && have >= version)
    return 1;
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (f == NULL)
    return -1;
  uint8_t hdr[SIM_REPLY_HDR];
  sim_obj_reply r = {version, state, NULL, 0};
  sim_reply_encode(hdr, sizeof(hdr), &r);
  int ok = fwrite(hdr, 1, sizeof(hdr), f) == sizeof(hdr) &&
           (len == 0 || fwrite(data, 1, len, f) == len);
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, path) != 0) {
    remove(tmp);
    return -1;
  }
  return 0;
}

/* --- API */

static int apply(sim_store *s, const char *name, size_t name_len, uint64_t version, int state,
                 const uint8_t *data, size_t len) {
  pthread_mutex_lock(&s->lock);
  int rc = s->dir ? file_apply(s, name, name_len, version, state, data, len)
                  : mem_apply(s, name, name_len, version, state, data, len);
  pthread_mutex_unlock(&s->lock);
  return rc;
}

int sim_store_put(sim_store *s, const char *name, size_t name_len, uint64_t version,
                  const uint8_t *data, size_t len) {
  return apply(s, name, name_len, version, SIM_PRESENT, data, len);
}

int sim_store_delete(sim_store *s, const char *name, size_t name_len, uint64_t version) {
  return apply(s, name, name_len, version, SIM_DELETED, NULL, 0);
}

static int mem_get(sim_store *s, const char *name, size_t name_len, int want_data,
                   uint64_t *version, int *state, uint8_t **data, size_t *len) {
  entry *e = *slot_of(s, name, name_len);
  *version = e ? e->version : 0;
  *state = e ? e->state : SIM_ABSENT;
  if (!want_data)
    return 0;
  *data = NULL;
  *len = 0;
  if (e == NULL || e->state != SIM_PRESENT || e->len == 0)
    return 0;
  if ((*data = malloc(e->len)) == NULL)
    return -1;
  memcpy(*data, e->data, e->len);
  *len = e->len;
  return 0;
}

int sim_store_get(sim_store *s, const char *name, size_t name_len, int want_data,
                  uint64_t *version, int *state, uint8_t **data, size_t *len) {
  pthread_mutex_lock(&s->lock);
  int rc;
  if (s->dir != NULL) {
    char path[4096];
    file_path(s, name, name_len, path, sizeof(path));
    if (want_data)
      *data = NULL, *len = 0;
    rc = file_read(path, version, state, want_data ? data : NULL, len);
  } else {
    rc = mem_get(s, name, name_len, want_data, version, state, data, len);
  }
  pthread_mutex_unlock(&s->lock);
  return rc;
}
