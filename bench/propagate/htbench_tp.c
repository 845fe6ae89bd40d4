/* Instantiates the benchmark provider (statically in the bench binary). */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "htbench_tp.h"
