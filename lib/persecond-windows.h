/* persecond-windows.h: the CPU frequency as Windows records it, the first
 * source of the estimate there (persecond.c).  Internal to the library. */
#ifndef CPUCYCLES_PERSECOND_WINDOWS_H
#define CPUCYCLES_PERSECOND_WINDOWS_H

#include <windows.h>

/* Where Windows records processor 0's nominal clock in MHz, as the
 * REG_DWORD "~MHz" (written at boot from the firmware's tables). */
#define CPUCYCLES_REGISTRY_CPU0 L"HARDWARE\\DESCRIPTION\\System\\CentralProcessor\\0"
#define CPUCYCLES_REGISTRY_MHZ L"~MHz"

/* The value "~MHz" of root\subkey (HKEY_LOCAL_MACHINE,
 * CPUCYCLES_REGISTRY_CPU0; tests pass a key of their own) in Hz, read with
 * the wide-character calls (the ANSI ones convert, which may allocate).
 * Only a REG_DWORD of 1 to 100000 is accepted, the range of every other
 * source.  Returns 0 and stores the value, or -1 and leaves *out alone. */
int cpucycles_persecond_from_registry(HKEY root, const wchar_t *subkey,
                                      long long *out);

#endif
