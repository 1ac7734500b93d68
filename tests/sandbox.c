/* Code run under a seccomp filter, in a child process (sandbox.h). */
#include <config.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "checked-by.h"
#include "sandbox.h"

#ifdef HAVE_LIBSECCOMP
#include <seccomp.h>

/* 0, or a negative errno value as libseccomp gives it. */
static int install(const struct refusal *refused, int n)
{
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  int i, rc = 0;

  if (!ctx) return -ENOMEM;
  for (i = 0; i < n && rc == 0; i++) {
    int nr = seccomp_syscall_resolve_name(refused[i].call);
    if (nr == __NR_SCMP_ERROR) continue; /* not on this architecture */
    rc = seccomp_rule_add(ctx, refused[i].err == SANDBOX_KILL ? SCMP_ACT_KILL_PROCESS
                                 : SCMP_ACT_ERRNO((unsigned int) refused[i].err), nr, 0);
  }
  /* no_new_privs too (libseccomp's default): unprivileged processes may */
  if (rc == 0) rc = seccomp_load(ctx);
  seccomp_release(ctx);
  return rc;
}
#endif

static long long now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long) t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

enum sandbox_result sandbox_run(const struct refusal *refused, int n,
                                void (*prepare)(void),
                                void (*fn)(char *report, size_t size),
                                char *report, size_t size)
{
#ifdef HAVE_LIBSECCOMP
  int channel[2], status = 0;
  size_t have = 0;
  long long deadline;
  pid_t pid;
  int hung = 0;

  report[0] = 0;
  if (pipe(channel) != 0) {
    snprintf(report, size, "pipe: %s", strerror(errno));
    return SANDBOX_FAILED;
  }
  fflush(0);
  pid = fork();
  if (pid < 0) {
    snprintf(report, size, "fork: %s", strerror(errno));
    close(channel[0]);
    close(channel[1]);
    return SANDBOX_FAILED;
  }
  if (pid == 0) {
    static char text[4096];
    size_t len;
    int rc;
    close(channel[0]);
    if (prepare) prepare();
    rc = install(refused, n);
    if (rc != 0) {
      snprintf(text, sizeof text, "seccomp filter refused: %s", strerror(-rc));
      if (write(channel[1], text, strlen(text)) < 0) {}
      _exit(77);
    }
    fn(text, size < sizeof text ? size : sizeof text);
    len = strnlen(text, sizeof text);
    if (write(channel[1], text, len) < 0) {}
    _exit(0); /* no exit handlers: the filter may refuse what they do */
  }
  close(channel[1]);

  /* Whatever the child does (a hang with every signal blocked included),
   * it is stopped at the deadline. */
  deadline = now_ms() + SANDBOX_DEADLINE * 1000LL;
  for (;;) {
    struct pollfd p;
    long long left = deadline - now_ms();
    ssize_t r;
    if (left <= 0) {
      hung = 1;
      break;
    }
    p.fd = channel[0];
    p.events = POLLIN;
    if (poll(&p, 1, (int) left) <= 0) continue;
    r = read(channel[0], report + have, size - 1 - have);
    if (r <= 0) break;
    have += (size_t) r;
    report[have] = 0;
    if (have == size - 1) break;
  }
  close(channel[0]);
  if (hung) kill(pid, SIGKILL);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (hung) {
    snprintf(report + have, size - have, "%s(still running after %d s)",
             have ? " " : "", SANDBOX_DEADLINE);
    return SANDBOX_HUNG;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) return SANDBOX_UNAVAILABLE;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return SANDBOX_DONE;
  if (WIFSIGNALED(status))
    snprintf(report + have, size - have, "%s(died of signal %d)",
             have ? " " : "", WTERMSIG(status));
  else
    snprintf(report + have, size - have, "%s(exit status %d)",
             have ? " " : "", WEXITSTATUS(status));
  return SANDBOX_FAILED;
#else
  (void) refused; (void) n; (void) prepare; (void) fn; (void) now_ms;
  snprintf(report, size, "built without libseccomp");
  return SANDBOX_UNAVAILABLE;
#endif
}

#ifdef HAVE_LIBSECCOMP
static void ask_getppid(char *report, size_t size)
{
  /* syscall(): glibc's getppid() does not set errno, which never fails */
  errno = 0;
  if (syscall(SYS_getppid) == -1 && errno == EPERM) snprintf(report, size, "refused");
  else snprintf(report, size, "getppid was not refused");
}
#endif

int sandbox_available(char *why, size_t size)
{
#ifdef HAVE_LIBSECCOMP
  static const struct refusal probe[] = { { "getppid", EPERM } };
  char report[256];
  enum sandbox_result r;

  /* valgrind runs the program's system calls itself, on a filter meant
   * for the program */
  if (RUNNING_ON_VALGRIND) {
    snprintf(why, size, "seccomp filters under valgrind: not checked");
    return 0;
  }
  r = sandbox_run(probe, 1, 0, ask_getppid, report, sizeof report);
  if (r == SANDBOX_DONE && strcmp(report, "refused") == 0) return 1;
  snprintf(why, size, "no seccomp filter here (%s): not checked", report);
  return 0;
#else
  snprintf(why, size, "built without libseccomp: not checked");
  return 0;
#endif
}
