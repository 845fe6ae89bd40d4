/* Per-resource spill of the OTLP file (otlp_groups.h). Each group's obuf
 * writes through a cookie stream that appends to the shared spill file
 * and records where each piece went. */
#include "output/otlp_groups.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/otlp_map.h"
#include "util/grow.h"

typedef struct piece {
  off_t off;
  size_t len;
} piece;

typedef struct group {
  otlp_groups *g;
  uint64_t hash;
  char *service, *hostname, *procname;
  int32_t vpid;
  char *head;         /* the block's opening, rendered once */
  unsigned long long head_replaced; /* its invalid UTF-8 (obuf.h) */
  FILE *file;         /* cookie stream into the spill file */
  obuf *buf;
  piece *pieces;
  size_t n_pieces, cap_pieces;
  bool first;
} group;

struct otlp_groups {
  int fd;
  off_t end;
  int err; /* first spill error */
  group groups[OTLP_GROUPS_MAX];
  size_t n;
};

otlp_groups *otlp_groups_new(void) {
  const char *dir = getenv("TMPDIR");
  char path[4096];
  snprintf(path, sizeof(path), "%s/hoptrace-otlp.XXXXXX", dir && dir[0] ? dir : "/tmp");
  otlp_groups *g = calloc(1, sizeof(*g));
  if (g == NULL)
    return NULL;
  g->fd = mkostemp(path, O_CLOEXEC);
  if (g->fd < 0) {
    int err = errno;
    free(g);
    errno = err;
    return NULL;
  }
  unlink(path); /* gone with the process, whatever ends it */
  return g;
}

static ssize_t spill_write(void *cookie, const char *buf, size_t n) {
  group *gr = cookie;
  otlp_groups *g = gr->g;
  if (ht_grow(&gr->pieces, &gr->cap_pieces, gr->n_pieces + 1, sizeof(piece), 16) != 0) {
    errno = ENOMEM;
    return -1;
  }
  size_t done = 0;
  while (done < n) {
    ssize_t w = pwrite(g->fd, buf + done, n - done, g->end + (off_t)done);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      if (g->err == 0)
        g->err = errno;
      return -1;
    }
    done += (size_t)w;
  }
  gr->pieces[gr->n_pieces++] = (piece){g->end, n};
  g->end += (off_t)n;
  return (ssize_t)n;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static int same(const char *a, const char *b) {
  return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static char *render_head(const span *s, void (*head)(obuf *, const span *),
                         unsigned long long *replaced) {
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  obuf *b = mem ? obuf_new(mem) : NULL;
  if (b != NULL) {
    head(b, s);
    obuf_flush(b);
    *replaced = b->replaced;
    obuf_free(b);
  }
  if (mem != NULL)
    fclose(mem);
  return text;
}

static void group_free(group *gr) {
  obuf_free(gr->buf);
  if (gr->file)
    fclose(gr->file);
  free(gr->service);
  free(gr->hostname);
  free(gr->procname);
  free(gr->head);
  free(gr->pieces);
}

obuf *otlp_groups_buf(otlp_groups *g, const span *s, void (*head)(obuf *, const span *),
                      bool **first) {
  uint64_t h = otlp_resource_hash(s);
  for (size_t i = 0; i < g->n; i++) {
    group *gr = &g->groups[i];
    if (gr->hash == h && gr->vpid == s->vpid && same(gr->service, s->service) &&
        same(gr->hostname, s->hostname) && same(gr->procname, s->procname)) {
      *first = &gr->first;
      return gr->buf;
    }
  }
  if (g->n == OTLP_GROUPS_MAX)
    return NULL;
  group *gr = &g->groups[g->n];
  *gr = (group){.g = g, .hash = h, .vpid = s->vpid, .first = true};
  gr->service = dup_or_null(s->service);
  gr->hostname = dup_or_null(s->hostname);
  gr->procname = dup_or_null(s->procname);
  gr->head = render_head(s, head, &gr->head_replaced);
  cookie_io_functions_t io = {.write = spill_write};
  gr->file = gr->head ? fopencookie(gr, "w", io) : NULL;
  if (gr->file != NULL)
    setvbuf(gr->file, NULL, _IONBF, 0); /* the obuf is the buffer */
  gr->buf = gr->file ? obuf_new(gr->file) : NULL;
  if ((s->service && !gr->service) || (s->hostname && !gr->hostname) ||
      (s->procname && !gr->procname) || gr->buf == NULL) {
    group_free(gr);
    return NULL;
  }
  g->n++;
  *first = &gr->first;
  return gr->buf;
}

/* A group's pieces back from the spill file into out. */
static int copy_back(otlp_groups *g, group *gr, obuf *out, char *block) {
  for (size_t i = 0; i < gr->n_pieces; i++) {
    size_t done = 0;
    while (done < gr->pieces[i].len) {
      size_t want = gr->pieces[i].len - done;
      if (want > OBUF_BYTES)
        want = OBUF_BYTES;
      ssize_t r = pread(g->fd, block, want, gr->pieces[i].off + (off_t)done);
      if (r <= 0) {
        if (r < 0 && errno == EINTR)
          continue;
        if (g->err == 0)
          g->err = r < 0 ? errno : EIO;
        return -1;
      }
      ob_write(out, block, (size_t)r);
      done += (size_t)r;
    }
  }
  return 0;
}

int otlp_groups_finish(otlp_groups *g, obuf *out, const char *tail, bool *any) {
  char *block = malloc(OBUF_BYTES);
  int rc = block ? 0 : -1;
  if (block == NULL)
    g->err = ENOMEM;
  for (size_t i = 0; i < g->n && rc == 0; i++) {
    group *gr = &g->groups[i];
    if (obuf_flush(gr->buf) != 0) {
      rc = -1;
      break;
    }
    ob_puts(out, *any ? ",\n" : "\n");
    *any = true;
    ob_puts(out, gr->head);
    /* the replacements the summary counts happened in the group's buffers */
    out->replaced += gr->head_replaced + gr->buf->replaced;
    rc = copy_back(g, gr, out, block);
    ob_puts(out, tail);
  }
  free(block);
  if (rc != 0 && !out->error) { /* the output is not whole: say why */
    out->error = true;
    out->err = g->err ? g->err : EIO;
  }
  otlp_groups_free(g);
  return rc;
}

void otlp_groups_free(otlp_groups *g) {
  if (g == NULL)
    return;
  for (size_t i = 0; i < g->n; i++)
    group_free(&g->groups[i]);
  close(g->fd);
  free(g);
}
