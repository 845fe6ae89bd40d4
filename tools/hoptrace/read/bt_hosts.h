/* Which hosts an input holds, before it is read: the clock alignment
 * needs a pass of its own over the input only when there are several. */
#ifndef HT_TOOL_BT_HOSTS_H
#define HT_TOOL_BT_HOSTS_H

#include <stddef.h>

/* Counts the distinct host names of the inputs: for a trace directory
 * the `hostname` of each trace's environment (babeltrace2's metadata-info
 * query: the TSDL text as babeltrace2 reads it), for a live URL
 * net://RELAY/host/NAME/SESSION its NAME. A trace without a hostname
 * counts as one host of its own name "". Returns the count (0 when
 * nothing was found), or -1 when out of memory. */
int bt_count_hosts(const char *const *inputs, size_t n_inputs);

#endif
