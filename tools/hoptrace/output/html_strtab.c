/* Open addressing by text (never by pointer: the assembler reuses a
 * trace's memory, so one address may hold another text later). */
#include "output/html_strtab.h"

#include <stdlib.h>
#include <string.h>

#include "read/text_hash.h"
#include "output/json.h"

/* load <= 1/2; grown by doubling, so a small page (most runs, and every
 * fuzz input) does not clear and scan the full table's 2 MiB */
#define MAX_SLOTS ((size_t)HTML_STRTAB_MAX * 2)
#define FIRST_SLOTS ((size_t)256)

typedef struct slot {
  char *text; /* NULL: empty */
  int32_t index;
} slot;

struct html_strtab {
  slot *slots;
  size_t n_slots; /* a power of two */
  int32_t n;
  size_t bytes;
};

html_strtab *html_strtab_new(void) {
  html_strtab *t = calloc(1, sizeof(*t));
  if (t != NULL && (t->slots = calloc(FIRST_SLOTS, sizeof(slot))) == NULL) {
    free(t);
    return NULL;
  }
  if (t != NULL)
    t->n_slots = FIRST_SLOTS;
  return t;
}

/* The slot of s: its own, or the empty one where it goes. */
static size_t find(const html_strtab *t, const char *s, size_t len) {
  size_t mask = t->n_slots - 1, i = text_hash(s, len) & mask;
  while (t->slots[i].text != NULL && strcmp(t->slots[i].text, s) != 0)
    i = (i + 1) & mask;
  return i;
}

/* Twice the slots, every text moved over; -1 out of memory (the table
 * stays as it was). */
static int grow(html_strtab *t) {
  html_strtab bigger = *t;
  bigger.n_slots = t->n_slots * 2;
  if ((bigger.slots = calloc(bigger.n_slots, sizeof(slot))) == NULL)
    return -1;
  for (size_t i = 0; i < t->n_slots; i++)
    if (t->slots[i].text != NULL)
      bigger.slots[find(&bigger, t->slots[i].text, strlen(t->slots[i].text))] = t->slots[i];
  free(t->slots);
  *t = bigger;
  return 0;
}

void html_strtab_free(html_strtab *t) {
  if (t == NULL)
    return;
  for (size_t i = 0; i < t->n_slots; i++)
    free(t->slots[i].text);
  free(t->slots);
  free(t);
}

int32_t html_strtab_ref(html_strtab *t, obuf *defs, const char *s) {
  s = s ? s : "";
  size_t len = strlen(s);
  if (len > HTML_STRTAB_LONG)
    return -1;
  size_t i = find(t, s, len);
  if (t->slots[i].text != NULL)
    return t->slots[i].index;
  if (defs == NULL || t->n >= HTML_STRTAB_MAX || t->bytes + len + 1 > HTML_STRTAB_BYTES)
    return -1;
  if ((size_t)t->n + 1 > t->n_slots / 2 && t->n_slots < MAX_SLOTS) {
    if (grow(t) != 0)
      return -1;
    i = find(t, s, len);
  }
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
