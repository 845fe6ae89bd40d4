/* One control connection's line reader: received bytes in, whole lines
 * out, in a fixed buffer (never more than one line plus its newline is
 * held). Internal to libhoptrace; one per connection, so connections
 * served together never see each other's bytes. */
#ifndef HT_SHIM_CONTROL_READER_H
#define HT_SHIM_CONTROL_READER_H

#include <stddef.h>

#include "hoptrace/control.h"

typedef struct ht_ctl_reader {
  char buf[HT_CONTROL_LINE_MAX + 2];
  size_t start, have; /* unread bytes are buf[start..have) */
} ht_ctl_reader;

void ht_ctl_reader_init(ht_ctl_reader *r);

/* Where to put received bytes and how many fit (0: a line too long is
 * pending; ht_ctl_reader_next says so). Moves unread bytes to the front:
 * lines returned before are no longer valid. */
char *ht_ctl_reader_space(ht_ctl_reader *r, size_t *room);
void ht_ctl_reader_commit(ht_ctl_reader *r, size_t n);

/* 1 and the next whole line (without its newline, valid until the next
 * ht_ctl_reader_space), 0 when no whole line is there yet, -1 when the
 * buffer is full without a newline (the line is too long). */
int ht_ctl_reader_next(ht_ctl_reader *r, const char **line, size_t *len);

/* At end of input: the last line without newline (1), or 0 if none. */
int ht_ctl_reader_rest(ht_ctl_reader *r, const char **line, size_t *len);

#endif /* HT_SHIM_CONTROL_READER_H */
