/* Open addressing by text (never by pointer: the assembler reuses a
 * trace's memory, so one address may hold another text later). */
#include "output/html_strtab.h"

#include <stdlib.h>
#include <string.h>

#include "read/text_hash.h"
#include "output/json.h"

#define SLOTS ((size_t)HTML_STRTAB_MAX * 2) /* load <= 1/2 */

typedef struct slot {
  char *text; /* NULL: empty */
  int32_t index;
} slot;

struct html_strtab {
  slot *slots;
  int32_t n;
  size_t bytes;
};

html_strtab *html_strtab_new(void) {
  html_strtab *t = calloc(1, sizeof(*t));
  if (t != NULL && (t->slots = calloc(SLOTS, sizeof(slot))) == NULL) {
    free(t);
    return NULL;
  }
  return t;
}

void html_strtab_free(html_strtab *t) {
  if (t == NULL)
    return;
  for (size_t i = 0; i < SLOTS; i++)
    free(t->slots[i].text);
  free(t->slots);
  free(t);
}

int32_t html_strtab_ref(html_strtab *t, obuf *defs, const char *s) {
  s = s ? s : "";
  size_t len = strlen(s);
  if (len > HTML_STRTAB_LONG)
    return -1;
  size_t i = text_hash(s, len) & (SLOTS - 1);
  for (; t->slots[i].text != NULL; i = (i + 1) & (SLOTS - 1))
    if (strcmp(t->slots[i].text, s) == 0)
      return t->slots[i].index;
  if (defs == NULL || t->n >= HTML_STRTAB_MAX || t->bytes + len + 1 > HTML_STRTAB_BYTES)
    return -1;
  char *copy = malloc(len + 1);
  if (copy == NULL)
    return -1;
  memcpy(copy, s, len + 1);
  t->slots[i].text = copy;
  t->slots[i].index = t->n;
  t->bytes += len + 1;
  ob_putc(defs, 'S');
  json_string(defs, s);
  ob_putc(defs, '\n');
  return t->n++;
}
