/* Environment variables, ignored in privileged processes (environment.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdlib.h>
#ifndef _WIN32
#include <unistd.h>
#endif
#include "environment.h"

const char *cpucycles_environment(const char *name)
{
#ifdef HAVE_SECURE_GETENV
  return secure_getenv(name);
#elif defined(_WIN32)
  return getenv(name); /* no setuid programs on Windows */
#else
  if (getuid() != geteuid() || getgid() != getegid()) return 0;
  return getenv(name);
#endif
}
