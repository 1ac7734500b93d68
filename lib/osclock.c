/* osclock.c: whether the OS clocks must bypass the vDSO.  See osclock.h. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "annotate.h"
#include "osclock.h"
#if defined(__linux__) && (defined(__x86_64__) || defined(__i386__))
#include <string.h>
#include <sys/prctl.h>
#include "readfile.h"
#if defined(PR_GET_TSC) && defined(PR_TSC_SIGSEGV)
#define ASK_PR_GET_TSC 1
#endif
#endif

/* Both are atomics, read by every caller of the OS clocks (annotate.h). */
int cpucycles_osclock_use_syscall;

#ifdef ASK_PR_GET_TSC
/* The kernel's answer (enum cpucycles_rdtsc), -1 until asked. */
static int rdtsc_state = -1;

static void use_syscall(int on)
{
  CPUCYCLES_ATOMIC(&cpucycles_osclock_use_syscall, sizeof cpucycles_osclock_use_syscall);
  __atomic_store_n(&cpucycles_osclock_use_syscall, on, __ATOMIC_RELAXED);
}

void cpucycles_osclock_setup(void)
{
  /* not asked (no TSC counter tried): the system call, which cannot fault */
  if (__atomic_load_n(&rdtsc_state, __ATOMIC_RELAXED) < 0) use_syscall(1);
}

static int seccomp_line(const char *line, size_t len, void *arg)
{
  static const char key[] = "Seccomp:";
  size_t i = sizeof key - 1;
  if (len < i || memcmp(line, key, i) != 0) return 0;
  while (i < len && (line[i] == ' ' || line[i] == '\t')) i++;
  *(int *) arg = i + 1 == len && line[i] == '0' ? 0 : 1;
  return 1;
}

/* 0 only where /proc/self/status says that no seccomp filter is installed
 * (one could answer prctl by killing the process). */
static int may_be_filtered(void)
{
  char buf[64];
  int filtered = 1;
  if (cpucycles_read_lines("", "/proc/self/status", 16384, buf, sizeof buf,
                           seccomp_line, &filtered) != 0)
    return 1;
  return filtered;
}

void cpucycles_osclock_choose(void)
{
  if (__atomic_load_n(&rdtsc_state, __ATOMIC_RELAXED) >= 0) return;
  if (!may_be_filtered()) cpucycles_rdtsc_state();
  else cpucycles_osclock_setup();
}

enum cpucycles_rdtsc cpucycles_rdtsc_state(void)
{
  int tsc = 0, state = __atomic_load_n(&rdtsc_state, __ATOMIC_RELAXED);
  if (state >= 0) return (enum cpucycles_rdtsc) state;
  if (prctl(PR_GET_TSC, &tsc, 0, 0, 0) == 0)
    state = tsc == PR_TSC_SIGSEGV ? CPUCYCLES_RDTSC_FAULTS : CPUCYCLES_RDTSC_ALLOWED;
  else
    /* Every x86 kernel since 2.6.26 answers: a refusal is a seccomp
     * filter's, in a sandbox that may well have disabled RDTSC first. */
    state = CPUCYCLES_RDTSC_UNKNOWN;
  CPUCYCLES_ATOMIC(&rdtsc_state, sizeof rdtsc_state);
  __atomic_store_n(&rdtsc_state, state, __ATOMIC_RELAXED);
  use_syscall(state != CPUCYCLES_RDTSC_ALLOWED);
  return (enum cpucycles_rdtsc) state;
}
#else
/* No PR_GET_TSC to ask: the vDSO's clocks are used as they are. */
void cpucycles_osclock_setup(void) {}
void cpucycles_osclock_choose(void) {}
enum cpucycles_rdtsc cpucycles_rdtsc_state(void) { return CPUCYCLES_RDTSC_ALLOWED; }
#endif
