/* What the tests run under, where that changes what they can observe:
 *   UNDER_SANITIZER  AddressSanitizer, ThreadSanitizer or MemorySanitizer,
 *                    whose runtimes own malloc and read the clocks
 *                    themselves, through the vDSO;
 *   UNDER_TSAN       ThreadSanitizer, which delivers signals through its
 *                    own handler, later and with its own mask;
 *   RUNNING_ON_VALGRIND  non-zero under valgrind (0 without its header). */
#ifndef CPUCYCLES_TEST_CHECKED_BY_H
#define CPUCYCLES_TEST_CHECKED_BY_H

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) \
    || __has_feature(memory_sanitizer)
#define UNDER_SANITIZER 1
#endif
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#endif
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#endif

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#endif
