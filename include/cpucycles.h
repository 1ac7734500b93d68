/* libcpucycles: count CPU cycles.  See cpucycles(3). */
#ifndef CPUCYCLES_H
#define CPUCYCLES_H

/* libcpucycles' include guard too, for programs that test it. */
#ifndef cpucycles_h
#define cpucycles_h
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Default visibility even where the includer hides its own symbols
 * (#pragma GCC visibility push(hidden), -fvisibility=hidden).
 * Windows: the symbols come from libcpucycles-1.dll (dllimport; the data
 * symbol cpucycles needs it, or the linker's auto-import), unless the
 * program links the static library: then define CPUCYCLES_STATIC
 * (pkg-config --static --cflags cpucycles does).  The library itself
 * exports them when libtool builds its DLL objects (DLL_EXPORT). */
#if defined(_WIN32) || defined(__CYGWIN__)
#if defined(CPUCYCLES_BUILDING_LIBRARY) && defined(DLL_EXPORT)
#define CPUCYCLES_VISIBLE __declspec(dllexport)
#elif defined(CPUCYCLES_BUILDING_LIBRARY) || defined(CPUCYCLES_STATIC)
#define CPUCYCLES_VISIBLE
#else
#define CPUCYCLES_VISIBLE __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define CPUCYCLES_VISIBLE __attribute__((visibility("default")))
#else
#define CPUCYCLES_VISIBLE
#endif

extern CPUCYCLES_VISIBLE long long (*cpucycles)(void);
extern CPUCYCLES_VISIBLE const char *cpucycles_implementation(void);
extern CPUCYCLES_VISIBLE const char *cpucycles_version(void);
extern CPUCYCLES_VISIBLE long long cpucycles_persecond(void);
extern CPUCYCLES_VISIBLE void cpucycles_tracesetup(void);

#ifdef __cplusplus
}
#endif

#endif
