/* Error code to text. Must stay in step with HT_ERRNO_MAP; never allocates. */
#include "hoptrace/error.h"

const char *ht_strerror(int err) {
  switch (err) {
#define HT_STRERROR_CASE_(name, value, message)                                \
  case HT_##name:                                                              \
    return message;
    HT_ERRNO_MAP(HT_STRERROR_CASE_)
#undef HT_STRERROR_CASE_
  case 0:
    return "success";
  default:
    return "unknown error";
  }
}

const char *ht_err_name(int err) {
  switch (err) {
#define HT_ERR_NAME_CASE_(name, value, message)                                \
  case HT_##name:                                                              \
    return "HT_" #name;
    HT_ERRNO_MAP(HT_ERR_NAME_CASE_)
#undef HT_ERR_NAME_CASE_
  case 0:
    return "HT_OK";
  default:
    return "HT_UNKNOWN";
  }
}
