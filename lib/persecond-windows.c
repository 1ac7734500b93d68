/* The CPU frequency as Windows records it (persecond-windows.h). */
#ifndef _WIN32
#error "persecond-windows.c is for Windows"
#endif

#include "persecond-windows.h"

/* The plausible range of persecond.c, in MHz. */
#define MHZ_MIN 1
#define MHZ_MAX 100000

int cpucycles_persecond_from_registry(HKEY root, const wchar_t *subkey,
                                      long long *out)
{
  HKEY key;
  DWORD type = REG_NONE, mhz = 0, size = sizeof mhz;
  LONG status;
  if (RegOpenKeyExW(root, subkey, 0, KEY_QUERY_VALUE, &key) != ERROR_SUCCESS)
    return -1;
  status = RegQueryValueExW(key, CPUCYCLES_REGISTRY_MHZ, 0, &type,
                            (BYTE *) &mhz, &size);
  RegCloseKey(key);
  /* A longer value (REG_QWORD, a string) gives ERROR_MORE_DATA, a shorter
   * one a smaller size. */
  if (status != ERROR_SUCCESS || type != REG_DWORD || size != sizeof mhz)
    return -1;
  if (mhz < MHZ_MIN || mhz > MHZ_MAX) return -1;
  *out = (long long) mhz * 1000000LL;
  return 0;
}
