/* `hoptrace diff`'s output: text whose first line names the culprit, or
 * the same figures as JSON (diff_stats.h). */
#ifndef HT_TOOL_DIFF_PRINT_H
#define HT_TOOL_DIFF_PRINT_H

#include "diff/diff_stats.h"
#include "output/obuf.h"

/* What was compared, for the header. */
typedef struct diff_side_info {
  const char *label; /* "A = DIR", "the slowest 1 % of DIR" */
  const diff_set *set;
  size_t traces; /* in this group */
} diff_side_info;

void diff_print_text(const diff_result *r, const diff_side_info *a, const diff_side_info *b,
                     obuf *out);
void diff_print_json(const diff_result *r, const diff_side_info *a, const diff_side_info *b,
                     obuf *out);
/* The first line of the text (no newline) into buf. */
void diff_headline(const diff_result *r, char *buf, size_t cap);

#endif
