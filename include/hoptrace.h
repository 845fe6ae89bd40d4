/* hoptrace: end-to-end request tracing as a feature of the messenger.
 * The one header an application includes: every public header
 * (test header_umbrella checks that none is left out). */
#ifndef HOPTRACE_H
#define HOPTRACE_H

#include "hoptrace/api.h"
#include "hoptrace/capture.h"
#include "hoptrace/context.h"
#include "hoptrace/control.h"
#include "hoptrace/error.h"
#include "hoptrace/ids.h"
#include "hoptrace/messenger.h"
#include "hoptrace/msg_type.h"
#include "hoptrace/sampler.h"
#include "hoptrace/span.h"
#include "hoptrace/traced.h"
#include "hoptrace/tracing.h"
#include "hoptrace/version.h"
#include "hoptrace/wire.h"

#endif
