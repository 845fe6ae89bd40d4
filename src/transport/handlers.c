/* Handler table: operation name -> handler, plus the default handler.
 * Read on every dispatch, changed only on the loop thread (through
 * ht_messenger_handle), so it needs no lock. Must never hand out a
 * pointer that a later registration could move while a handler runs:
 * lookups return into the table, and dispatch uses the entry before
 * calling the handler (which may change the table). */
#include <stdlib.h>
#include <string.h>

#include "hoptrace/error.h"
#include "transport/fire.h"

ht_tr_handler *ht_tr_find_handler(ht_messenger *m, const char *op) {
  const char *key = op != NULL ? op : "";
  for (size_t i = 0; i < m->nhandlers; i++)
    if (strcmp(m->handlers[i].op, key) == 0)
      return &m->handlers[i];
  return m->deflt.fn != NULL ? &m->deflt : NULL;
}

/* Every handler's hook state at the messenger's end (hooks.h). */
void ht_tr_handlers_free(ht_messenger *m) {
  for (size_t i = 0; i < m->nhandlers; i++) {
    ht_fire_handler_fini(m, m->handlers[i].hook_state);
    free(m->handlers[i].op);
  }
  free(m->handlers);
  if (m->deflt.fn != NULL)
    ht_fire_handler_fini(m, m->deflt.hook_state);
}

typedef struct handle_args {
  const char *op;
  ht_handler_fn fn;
  void *arg;
} handle_args;

static int remove_handler(ht_messenger *m, const char *op) {
  if (op == NULL) {
    if (m->deflt.fn == NULL)
      return HT_ENOENT;
    ht_fire_handler_fini(m, m->deflt.hook_state);
    m->deflt = (ht_tr_handler){0};
    return 0;
  }
  for (size_t i = 0; i < m->nhandlers; i++) {
    if (strcmp(m->handlers[i].op, op) == 0) {
      ht_fire_handler_fini(m, m->handlers[i].hook_state);
      free(m->handlers[i].op);
      m->handlers[i] = m->handlers[--m->nhandlers];
      return 0;
    }
  }
  return HT_ENOENT;
}

static int handle_on_loop(ht_messenger *m, void *arg) {
  handle_args *a = arg;
  if (a->fn == NULL)
    return remove_handler(m, a->op);
  if (a->op == NULL) {
    if (m->deflt.fn != NULL)
      return HT_EEXIST;
    m->deflt = (ht_tr_handler){.op = NULL, .fn = a->fn, .arg = a->arg,
                               .hook_state = ht_fire_handler_init(m, NULL)};
    return 0;
  }
  for (size_t i = 0; i < m->nhandlers; i++)
    if (strcmp(m->handlers[i].op, a->op) == 0)
      return HT_EEXIST;
  ht_tr_handler *nh = realloc(m->handlers, (m->nhandlers + 1) * sizeof(*nh));
  if (nh == NULL)
    return HT_ENOMEM;
  m->handlers = nh;
  char *op = strdup(a->op);
  if (op == NULL)
    return HT_ENOMEM;
  m->handlers[m->nhandlers++] = (ht_tr_handler){
      .op = op, .fn = a->fn, .arg = a->arg,
      .hook_state = ht_fire_handler_init(m, op)}; /* nothing fails after */
  return 0;
}

int ht_messenger_handle(ht_messenger *m, const char *operation,
                        ht_handler_fn fn, void *arg) {
  if (m == NULL)
    return HT_EINVAL;
  handle_args a = {operation, fn, arg};
  return ht_tr_run_on_loop(m, handle_on_loop, &a);
}
