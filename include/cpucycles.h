/* libcpucycles: count CPU cycles.  See cpucycles(3). */
#ifndef CPUCYCLES_H
#define CPUCYCLES_H

#ifdef __cplusplus
extern "C" {
#endif

extern long long (*cpucycles)(void);
extern const char *cpucycles_implementation(void);
extern const char *cpucycles_version(void);
extern long long cpucycles_persecond(void);
extern void cpucycles_tracesetup(void);

#ifdef __cplusplus
}
#endif

#endif
