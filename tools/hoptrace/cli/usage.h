/* hoptrace's usage text (usage.c). */
#ifndef HT_TOOL_USAGE_H
#define HT_TOOL_USAGE_H

#include <stdio.h>

/* Writes the usage of every command (also the manual page's source). */
void hoptrace_usage(FILE *out);

#endif
