/* The control connection's line reader (see control_reader.h).
 * Must never: write outside its buffer, allocate, or hand out a line
 * longer than HT_CONTROL_LINE_MAX + 1 bytes. */
#include "control/control_reader.h"

#include <string.h>

void ht_ctl_reader_init(ht_ctl_reader *r) { r->start = r->have = 0; }

char *ht_ctl_reader_space(ht_ctl_reader *r, size_t *room) {
  if (r->start > 0) {
    memmove(r->buf, r->buf + r->start, r->have - r->start);
    r->have -= r->start;
    r->start = 0;
  }
  *room = sizeof(r->buf) - r->have;
  return r->buf + r->have;
}

void ht_ctl_reader_commit(ht_ctl_reader *r, size_t n) {
  size_t room = sizeof(r->buf) - r->have;
  r->have += n < room ? n : room;
}

int ht_ctl_reader_next(ht_ctl_reader *r, const char **line, size_t *len) {
  const char *p = r->buf + r->start;
  size_t avail = r->have - r->start;
  const char *nl = memchr(p, '\n', avail);
  if (nl == NULL)
    return avail == sizeof(r->buf) ? -1 : 0;
  *line = p;
  *len = (size_t)(nl - p);
  r->start += *len + 1;
  return 1;
}

int ht_ctl_reader_rest(ht_ctl_reader *r, const char **line, size_t *len) {
  if (r->have == r->start)
    return 0;
  *line = r->buf + r->start;
  *len = r->have - r->start;
  r->start = r->have;
  return 1;
}
