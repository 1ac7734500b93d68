/* cpucycles-open: run as root on a benchmarking machine, lets user-space
 * cycle counters work until the next reboot.  See cpucycles-open(1) and
 * doc/security.md.  It reads and writes a few files of /proc/sys and
 * /sys, and never starts another program. */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "open-counters.h"

static void usage(FILE *out)
{
  fputs("usage: cpucycles-open [--dry-run] [--root DIR] | --help | --version\n"
        "Run as root: lets user-space cycle counters work until the next reboot\n"
        "(kernel.perf_event_paranoid, kernel.nmi_watchdog, kernel.perf_user_access,\n"
        "rdpmc), printing each change and how to undo it; see cpucycles-open(1).\n"
        "  --dry-run   print what would change; change nothing (root not needed)\n"
        "  --root DIR  work on DIR/proc/sys/... and DIR/sys/... instead (for tests)\n"
        "  --help      print this text and exit\n"
        "  --version   print the version and exit\n",
        out);
}

static enum open_arch this_arch(void)
{
#if defined(__x86_64__) || defined(__i386__)
  return OPEN_ARCH_X86;
#elif defined(__aarch64__)
  return OPEN_ARCH_ARM64;
#elif defined(__arm__)
  return OPEN_ARCH_ARM32;
#elif defined(__riscv)
  return OPEN_ARCH_RISCV;
#else
  return OPEN_ARCH_OTHER;
#endif
}

int main(int argc, char **argv)
{
  struct open_config config;
  int i, help = 0, version = 0, status;

  memset(&config, 0, sizeof config);
  config.root = "";
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--dry-run") == 0) config.dry_run = 1;
    else if (strcmp(a, "--help") == 0) help = 1;
    else if (strcmp(a, "--version") == 0) version = 1;
    else if (strcmp(a, "--root") == 0 && i + 1 < argc && argv[i + 1][0]) config.root = argv[++i];
    else if (strncmp(a, "--root=", 7) == 0 && a[7]) config.root = a + 7;
    else {
      fprintf(stderr, "cpucycles-open: %s: %s\n", a,
              strncmp(a, "--root", 6) == 0 ? "needs a directory" : "unknown argument");
      usage(stderr);
      return 2;
    }
  }
  if (help) {
    usage(stdout);
  } else if (version) {
    printf("cpucycles-open (libcpucycles) %s\n", PACKAGE_VERSION);
  } else {
    config.privileged = geteuid() == 0;
    config.arch = this_arch();
    status = open_counters_run(&config, stdout, stderr);
    if (fflush(stdout) != 0 || ferror(stdout)) return 1;
    return status;
  }
  if (fflush(stdout) != 0 || ferror(stdout)) return 1;
  return 0;
}
