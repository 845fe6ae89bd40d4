/* The traced messenger's factory, called by the flavour switch
 * (messenger_new.c). Internal to libhoptrace. */
#ifndef HT_SHIM_TRACED_INTERNAL_H
#define HT_SHIM_TRACED_INTERNAL_H

#include "hoptrace/messenger.h"

/* A messenger with the traced hook table; errors as ht_messenger_new. */
int ht_shim_traced_messenger_new(ht_messenger **out,
                                 const ht_messenger_options *opts);

#endif /* HT_SHIM_TRACED_INTERNAL_H */
