/* HT_API marks the functions of hoptrace's public interface.
 *
 * The library is compiled with -fvisibility=hidden: only functions whose
 * declaration in include/hoptrace/ carries HT_API leave libhoptrace.so
 * (test api_symbols compares the headers with the library's dynamic
 * symbol table). Everything else, internal ht_* functions included, stays
 * inside the library. Every public header includes this one.
 */
#ifndef HOPTRACE_API_H
#define HOPTRACE_API_H

#if defined(__GNUC__) || defined(__clang__)
#define HT_API __attribute__((visibility("default")))
#else
#define HT_API
#endif

#endif /* HOPTRACE_API_H */
