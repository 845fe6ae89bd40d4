/* libhoptrace-tp.so: the probes of provider `hoptrace`. Loaded at run time
 * (dlopen by libhoptrace, LD_PRELOAD, or linked); links liblttng-ust so
 * that libhoptrace never has to. Must never: contain anything but the
 * probe instantiation. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "hoptrace_tp.h"
