/* The first call's one-time initialisation on Windows (once-windows.h). */
#ifndef _WIN32
#error "once-windows.c is for Windows"
#endif

#ifndef _WIN32_WINNT
#define _WIN32_WINNT 0x0600 /* InitOnceExecuteOnce: Vista */
#endif
#include <string.h>
#include <windows.h>
#include "once-windows.h"

static INIT_ONCE once = INIT_ONCE_STATIC_INIT;

static BOOL CALLBACK run(PINIT_ONCE block, PVOID parameter, PVOID *context)
{
  void (*fn)(void);
  (void) block;
  (void) context;
  /* a function pointer travels through the PVOID parameter */
  memcpy(&fn, parameter, sizeof fn);
  fn();
  return TRUE;
}

void cpucycles_once_windows(void (*fn)(void))
{
  InitOnceExecuteOnce(&once, run, (PVOID) &fn, 0);
}
