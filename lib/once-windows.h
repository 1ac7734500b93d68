/* once-windows.h: the first call's one-time initialisation on Windows. */
#ifndef CPUCYCLES_ONCE_WINDOWS_H
#define CPUCYCLES_ONCE_WINDOWS_H

/* Runs fn() once; every caller returns after it has.  InitOnceExecuteOnce
 * (Vista): pthread_once would pull in winpthread's DLL.  No heap. */
void cpucycles_once_windows(void (*fn)(void));

#endif
