/* hoptrace error codes.
 *
 * Every hoptrace function that can fail returns 0 on success or one of the
 * negative HT_E* codes below. ht_strerror() and ht_err_name() turn a code
 * into text; both return pointers to static strings (never free them) and
 * accept any int, answering "unknown error" / "HT_UNKNOWN" for codes that
 * are not hoptrace's.
 */
#ifndef HOPTRACE_ERROR_H
#define HOPTRACE_ERROR_H

#include "hoptrace/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, message). Values are stable: append, never renumber,
 * never reuse (-28 was HT_ENOTSUP, which no function returned). */
#define HT_ERRNO_MAP(X)                                                        \
  X(EINVAL, -1, "invalid argument")                                            \
  X(ENOMEM, -2, "out of memory")                                               \
  X(EAGAIN, -3, "more input needed")                                           \
  X(ENOSPC, -4, "output buffer too small")                                     \
  X(ETRUNCATED, -5, "input ends inside a frame or field")                      \
  X(EFRAMETOOBIG, -6, "frame length exceeds the configured maximum")           \
  X(EMALFORMED, -7, "malformed envelope")                                      \
  X(EVARINT, -8, "malformed varint in envelope")                               \
  X(EWIRETYPE, -9, "wrong protobuf wire type for envelope field")              \
  X(EVERSION, -10, "unsupported envelope version")                             \
  X(EMSGTYPE, -11, "unknown envelope message type")                            \
  X(EBADCONTEXT, -12, "invalid trace context (zero trace or span id)")         \
  X(EBADHEADER, -13, "malformed trace header text")                            \
  X(ETIMEDOUT, -14, "request timed out")                                       \
  X(ECONNRESET, -15, "connection reset by peer")                               \
  X(ESHUTDOWN, -16, "messenger is shutting down")                              \
  X(EQUEUEFULL, -17, "write queue full")                                       \
  X(EPEERERROR, -18, "peer replied with an error status")                      \
  X(ECONNLIMIT, -19, "connection limit reached")                               \
  X(EADDR, -20, "malformed or unsupported address")                            \
  X(ENOTCONN, -21, "not connected")                                            \
  X(EIO, -22, "input/output error")                                            \
  X(ENOHANDLER, -23, "no handler for operation")                               \
  X(EEXIST, -24, "already exists")                                             \
  X(ENOENT, -25, "not found")                                                  \
  X(EPERM, -26, "operation not permitted")                                     \
  X(ECLOSED, -27, "handle already closed")                                     \
  X(EADDRINUSE, -29, "address already in use")                                 \
  X(EACCES, -30, "permission denied")                                         \
  X(ENAMESFULL, -31, "span names table full")

typedef enum ht_errno {
#define HT_ERRNO_ENUM_(name, value, message) HT_##name = (value),
  HT_ERRNO_MAP(HT_ERRNO_ENUM_)
#undef HT_ERRNO_ENUM_
} ht_errno;

/* Human-readable description of an error code. Static string. */
HT_API const char *ht_strerror(int err);

/* Symbolic name of an error code ("HT_EMALFORMED"). Static string. */
HT_API const char *ht_err_name(int err);

#ifdef __cplusplus
}
#endif

#endif /* HOPTRACE_ERROR_H */
