/* once-windows.h: the first call's one-time initialisation on Windows.
 *
 * Internal to the library: not exported from the DLL. */
#ifndef CPUCYCLES_ONCE_WINDOWS_H
#define CPUCYCLES_ONCE_WINDOWS_H

/* Runs fn() exactly once in the process, whatever the number of threads
 * calling; every caller returns only after fn() has returned.  Windows'
 * own InitOnceExecuteOnce (kernel32, Vista and later): no thread library,
 * no heap. */
void cpucycles_once_windows(void (*fn)(void));

#endif
