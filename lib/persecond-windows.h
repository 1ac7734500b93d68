/* persecond-windows.h: the CPU frequency as Windows records it.
 *
 * Internal to the library: not exported from the DLL. */
#ifndef CPUCYCLES_PERSECOND_WINDOWS_H
#define CPUCYCLES_PERSECOND_WINDOWS_H

#include <windows.h>

/* Where Windows records processor 0's nominal clock, in MHz, as the
 * REG_DWORD value "~MHz" (written at boot from the firmware's tables). */
#define CPUCYCLES_REGISTRY_CPU0 L"HARDWARE\\DESCRIPTION\\System\\CentralProcessor\\0"
#define CPUCYCLES_REGISTRY_MHZ L"~MHz"

/* The value "~MHz" of root\subkey (the real source: HKEY_LOCAL_MACHINE,
 * CPUCYCLES_REGISTRY_CPU0; tests pass a key of their own), in Hz.  The
 * wide-character calls: the ANSI ones convert the names, which may
 * allocate.  It
 * must be a REG_DWORD of 1 to 100000 (MHz), the plausible range of every
 * other source; anything else, or a key or value that cannot be read, is
 * refused.  Returns 0 and stores the value, or -1 and leaves *out alone. */
int cpucycles_persecond_from_registry(HKEY root, const wchar_t *subkey,
                                      long long *out);

#endif
