/* The waterfall page's string table: a text the page repeats (service,
 * operation, annotation, tag key or value, host) is written once, as an
 * "S" line, and referred to by its index afterwards: the page holds one
 * copy and the trace lines stay short. Bounded (untrusted input may
 * carry a new text on every span): past HTML_STRTAB_MAX entries or bytes,
 * or for a long text, the text is written inline instead. */
#ifndef HT_TOOL_HTML_STRTAB_H
#define HT_TOOL_HTML_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "output/obuf.h"

#define HTML_STRTAB_MAX 65536
#define HTML_STRTAB_BYTES ((size_t)8 << 20)
#define HTML_STRTAB_LONG 256 /* longer texts always inline */

typedef struct html_strtab html_strtab;

html_strtab *html_strtab_new(void);
void html_strtab_free(html_strtab *t);
/* The index of s (NULL: ""), adding it (and writing its "S" line to
 * defs) when new; -1 when it is to be written inline. defs NULL: only
 * looks up, so a line written after its texts were added cannot be cut
 * by an "S" line. */
int32_t html_strtab_ref(html_strtab *t, obuf *defs, const char *s);

#endif
