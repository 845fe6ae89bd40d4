/* One ResourceSpans per resource in a streamed OTLP file. Traces arrive
 * one by one and are freed once written, so each resource's spans are
 * written as they come into a buffer of its own whose full 64 KiB pieces
 * go to one unlinked spill file in $TMPDIR; at the end each resource's
 * block is written whole, its pieces read back in order. Memory: 64 KiB
 * per resource plus 16 bytes per piece, at most OTLP_GROUPS_MAX
 * resources (16 MiB); a resource past that is written one block per
 * trace, as it comes (still valid OTLP). */
#ifndef HT_TOOL_OTLP_GROUPS_H
#define HT_TOOL_OTLP_GROUPS_H

#include <stdbool.h>

#include "assemble/model.h"
#include "output/obuf.h"

#define OTLP_GROUPS_MAX 256

typedef struct otlp_groups otlp_groups;

/* NULL when the spill file cannot be created (errno says why). $TMPDIR,
 * else /tmp. */
otlp_groups *otlp_groups_new(void);
/* The buffer s's resource's spans go to, NULL past OTLP_GROUPS_MAX or
 * out of memory. A new resource's block starts with head(s) rendered
 * once. *first: nothing written to that buffer yet. */
obuf *otlp_groups_buf(otlp_groups *g, const span *s, void (*head)(obuf *, const span *),
                      bool **first);
/* Writes every resource's block (head, spans, tail) to out, separated by
 * ",\n" (a leading one when *any is set; sets it), and frees g. -1 when
 * the spill file failed (out is marked failed with its errno). */
int otlp_groups_finish(otlp_groups *g, obuf *out, const char *tail, bool *any);
/* Frees g without writing (an interrupted run). */
void otlp_groups_free(otlp_groups *g);

#endif
