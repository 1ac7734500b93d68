/* libcpucycles: count CPU cycles.  See cpucycles(3). */
#ifndef CPUCYCLES_H
#define CPUCYCLES_H

#ifdef __cplusplus
extern "C" {
#endif

/* Default visibility even where the includer hides its own symbols
 * (#pragma GCC visibility push(hidden), -fvisibility=hidden). */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(_WIN32) && !defined(__CYGWIN__)
#define CPUCYCLES_VISIBLE __attribute__((visibility("default")))
#else
#define CPUCYCLES_VISIBLE
#endif

extern long long (*cpucycles)(void) CPUCYCLES_VISIBLE;
extern const char *cpucycles_implementation(void) CPUCYCLES_VISIBLE;
extern const char *cpucycles_version(void) CPUCYCLES_VISIBLE;
extern long long cpucycles_persecond(void) CPUCYCLES_VISIBLE;
extern void cpucycles_tracesetup(void) CPUCYCLES_VISIBLE;

#ifdef __cplusplus
}
#endif

#endif
