/* persecond-windows.h: the CPU frequency as Windows records it, the first
 * source of the estimate there (persecond.c). */
#ifndef CPUCYCLES_PERSECOND_WINDOWS_H
#define CPUCYCLES_PERSECOND_WINDOWS_H

#include <windows.h>

/* Where Windows records processor 0's nominal clock in MHz, as the
 * REG_DWORD "~MHz" (written at boot from the firmware's tables). */
#define CPUCYCLES_REGISTRY_CPU0 L"HARDWARE\\DESCRIPTION\\System\\CentralProcessor\\0"
#define CPUCYCLES_REGISTRY_MHZ L"~MHz"

/* "~MHz" of root\subkey (tests pass a key of their own) in Hz, through
 * the wide-character calls (the ANSI ones convert, which may allocate): a
 * REG_DWORD of 1 to 100000 only.  0, or -1 and *out untouched. */
int cpucycles_persecond_from_registry(HKEY root, const wchar_t *subkey,
                                      long long *out);

#endif
