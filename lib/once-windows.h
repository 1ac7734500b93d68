/* once-windows.h: the first call's one-time initialisation on Windows.
 * Internal to the library. */
#ifndef CPUCYCLES_ONCE_WINDOWS_H
#define CPUCYCLES_ONCE_WINDOWS_H

/* Runs fn() exactly once in the process; every caller returns only after
 * it has returned.  kernel32's InitOnceExecuteOnce (Vista and later):
 * pthread_once would pull in winpthread's DLL.  No heap. */
void cpucycles_once_windows(void (*fn)(void));

#endif
