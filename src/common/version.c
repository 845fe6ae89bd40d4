/* The library's version, fixed when it is built (hoptrace/version.h is
 * generated from the CMake project version). Must never: answer other
 * than the headers the library was built with. */
#include "hoptrace/version.h"

const char *ht_version(void) { return HT_VERSION_STRING; }

unsigned ht_version_number(void) { return HT_VERSION_NUMBER; }
