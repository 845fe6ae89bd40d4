/* Shared copies of the few distinct names events repeat (process, host,
 * service, operation, peer, annotation and tag keys): each is kept once
 * for the whole run instead of once per span, which is most of a span's
 * memory. Bounded: past NAME_TABLE_MAX_NAMES names or
 * NAME_TABLE_MAX_BYTES of text, name_table_get returns NULL and the
 * caller keeps its own copy (a stream of ever-new names, e.g. one peer
 * port per connection on a long live session, costs what it did before,
 * never unbounded table growth). */
#ifndef HT_TOOL_NAME_TABLE_H
#define HT_TOOL_NAME_TABLE_H

#include <stddef.h>

#define NAME_TABLE_MAX_NAMES 65536u
#define NAME_TABLE_MAX_BYTES ((size_t)8 << 20)
#define NAME_TABLE_MAX_LEN 255u /* longer names are not shared */

typedef struct name_table name_table;

name_table *name_table_new(void);
void name_table_free(name_table *t);
/* The table's copy of s (NUL-terminated; valid until name_table_free),
 * or NULL when s is too long, the table is full or out of memory. */
const char *name_table_get(name_table *t, const char *s);

#endif
