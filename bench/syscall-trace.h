/* The system calls a function makes, counted from outside the library: a
 * forked child stops itself (PTRACE_TRACEME, SIGSTOP), the parent follows
 * it from system call to system call (PTRACE_SYSCALL) and reads each one
 * with PTRACE_GET_SYSCALL_INFO (Linux 5.3+), which says entry or exit and
 * the number without reading this ISA's registers.  The child calls
 * getppid() just before and just after the function: the calls between
 * the two are the function's.  Signals the child receives meanwhile (a
 * probed counter's fault) are passed on to it. */
#ifndef SYSCALL_TRACE_H
#define SYSCALL_TRACE_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#endif

struct syscall_counts {
  long total;
  long rt_sigaction, rt_sigprocmask, rt_sigpending, sigaltstack;
};

#if defined(__linux__) && defined(PTRACE_GET_SYSCALL_INFO)

static void count_syscall(struct syscall_counts *c, unsigned long long nr)
{
  c->total++;
  if (nr == SYS_rt_sigaction) c->rt_sigaction++;
  if (nr == SYS_rt_sigprocmask) c->rt_sigprocmask++;
  if (nr == SYS_rt_sigpending) c->rt_sigpending++;
  if (nr == SYS_sigaltstack) c->sigaltstack++;
}

/* The child's end: it is killed (it has nothing left to do but exit). */
static int trace_fail(pid_t pid, char *why, size_t len, const char *reason)
{
  snprintf(why, len, "%s", reason);
  kill(pid, SIGKILL);
  waitpid(pid, 0, 0);
  return -1;
}

/* The child: stopped for its tracer, then prepare(arg) (its exit status
 * 2 if that fails), the first marker, fn(arg), the second marker.  A
 * refused PTRACE_TRACEME exits with 64 + errno. */
static void traced_child(int (*prepare)(void *), void (*fn)(void *), void *arg)
{
  if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(64 + (errno < 64 ? errno : 0));
  raise(SIGSTOP);
  if (prepare && prepare(arg) != 0) _exit(2);
  syscall(SYS_getppid);
  fn(arg);
  syscall(SYS_getppid);
  _exit(0);
}

/* prepare(arg) runs in the child before the first marker, fn(arg) between
 * the markers.  0 with the counts, or -1 with why they are not known. */
static int trace_syscalls(int (*prepare)(void *), void (*fn)(void *), void *arg,
                          struct syscall_counts *c, char *why, size_t len)
{
  struct __ptrace_syscall_info info;
  int status = 0, sig = 0, markers = 0;
  pid_t pid;
  memset(c, 0, sizeof *c);
  pid = fork();
  if (pid < 0) {
    snprintf(why, len, "fork: %s", strerror(errno));
    return -1;
  }
  if (pid == 0) traced_child(prepare, fn, arg);
  if (waitpid(pid, &status, 0) != pid) return trace_fail(pid, why, len, "waitpid failed");
  if (WIFEXITED(status) && WEXITSTATUS(status) >= 64) {
    snprintf(why, len, "PTRACE_TRACEME: %s", strerror(WEXITSTATUS(status) - 64));
    return -1;
  }
  if (!WIFSTOPPED(status)) return trace_fail(pid, why, len, "the child did not stop");
  if (ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL) != 0)
    return trace_fail(pid, why, len, "PTRACE_SETOPTIONS refused");
  while (markers < 2) {
    if (ptrace(PTRACE_SYSCALL, pid, 0, sig) != 0 || waitpid(pid, &status, 0) != pid)
      return trace_fail(pid, why, len, "PTRACE_SYSCALL failed");
    if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
      return trace_fail(pid, why, len, "the child's preparation failed");
    if (!WIFSTOPPED(status))
      return trace_fail(pid, why, len, "the child ended before its second marker");
    sig = 0;
    if (WSTOPSIG(status) != (SIGTRAP | 0x80)) {
      /* a signal for the child (a probed counter's fault): delivered
       * when it goes on */
      sig = WSTOPSIG(status);
      continue;
    }
    if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *) sizeof info, &info) <= 0)
      return trace_fail(pid, why, len, "PTRACE_GET_SYSCALL_INFO refused (Linux 5.3+)");
    if (info.op != PTRACE_SYSCALL_INFO_ENTRY) continue;
    if (info.entry.nr == SYS_getppid)
      markers++;
    else if (markers == 1)
      count_syscall(c, info.entry.nr);
  }
  kill(pid, SIGKILL);
  waitpid(pid, 0, 0);
  return 0;
}

#else

static int trace_syscalls(int (*prepare)(void *), void (*fn)(void *), void *arg,
                          struct syscall_counts *c, char *why, size_t len)
{
  (void) prepare; (void) fn; (void) arg;
  memset(c, 0, sizeof *c);
#ifdef __linux__
  snprintf(why, len, "no PTRACE_GET_SYSCALL_INFO in this system's headers");
#else
  snprintf(why, len, "not Linux");
#endif
  return -1;
}

#endif
#endif
