/* Tests of what happens to a perf event while the program runs, after its
 * counter was chosen (doc/perf-counters.md, "When the kernel moves or
 * stops the event"): the kernel moves it between counters or takes it off them
 * (multiplexing), stops its count (off every counter, disabled), withdraws
 * user reads; the program closes its descriptor and reuses the number, or
 * runs short of descriptors.  Each test plays one of these against the
 * counters' code through the seams (tests/seams.h):
 *
 * - a stand-in kernel: an event is a memfd whose first page is the
 *   event's page, rewritten here as the kernel rewrites it, and whose
 *   8-byte words after the page are what the event's read(2)s return, one
 *   word a read (the library's descriptor and this file's share a file
 *   position); its identity (PERF_EVENT_IOC_ID) is the memfd's inode;
 * - hardware counters that are variables, read through a fake rdpmc, or,
 *   for amd64-perfpmcff's own RDPMC instruction, through a SIGSEGV handler
 *   that emulates it (x86-64, where the CPU refuses user RDPMC: a VM);
 * - real per-thread software events (task clock) where the kernel's own
 *   behaviour is the point: prctl(PR_TASK_PERF_EVENTS_DISABLE), a
 *   descriptor taken over by a pipe, the descriptor limit;
 * - a clock that moves only when a test moves it (the fallback's). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <ucontext.h>
#endif

#include "counter.h"
#include "seams.h"
#include "select.h"
#include "checked-by.h"
#include "check-run.h"

#ifdef CPUCYCLES_PERF_AVAILABLE

static const struct counter *find_counter(const char *name)
{
  int i;
  for (i = 0; i < cpucycles_counter_count; i++)
    if (cpucycles_counter_table[i]->setup &&
        strcmp(cpucycles_counter_table[i]->name, name) == 0)
      return cpucycles_counter_table[i];
  return 0;
}

/* ---- the clock: still, unless a test moves it ---- */

static long long clock_ns = 5000000000LL;

static int still_clock(clockid_t clock, struct timespec *t)
{
  (void) clock;
  t->tv_sec = (time_t) (clock_ns / 1000000000);
  t->tv_nsec = (long) (clock_ns % 1000000000);
  return 0;
}

/* ---- the stand-in kernel ---- */

#define SLOTS 512 /* read(2) answers kept ahead of the reader */
static long page_bytes;
static int kernel_fd = -1; /* this file's side of the latest event */
static int opens;
static long long first_count = 77; /* a new event's read(2)s */
static struct perf_event_mmap_page page;

/* The event's next read(2)s return count. */
static void set_count(long long count)
{
  long long slots[SLOTS];
  off_t at = lseek(kernel_fd, 0, SEEK_CUR);
  int i;
  for (i = 0; i < SLOTS; i++) slots[i] = count;
  ck_assert_int_ge(at, page_bytes);
  ck_assert_int_eq(pwrite(kernel_fd, slots, sizeof slots, at), (ssize_t) sizeof slots);
}

/* The kernel rewrites the page: on counter index - 1 (0: on none). */
static void set_page(unsigned int index, long long offset, int user_reads)
{
  page.lock += 2;
  page.index = index;
  page.offset = offset;
  page.cap_user_rdpmc = (unsigned long long) user_reads & 1;
  page.pmc_width = 48;
  ck_assert_int_eq(pwrite(kernel_fd, &page, sizeof page, 0), (ssize_t) sizeof page);
}

static int standin_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                        int group_fd, unsigned long flags)
{
  int fd;
  (void) attr; (void) pid; (void) cpu; (void) group_fd;
  fd = memfd_create("standin-perf-event", (flags & PERF_FLAG_FD_CLOEXEC) ? MFD_CLOEXEC : 0);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, page_bytes + (off_t) sizeof(long long) * SLOTS * 4), 0);
  if (kernel_fd >= 0) close(kernel_fd);
  kernel_fd = dup(fd); /* the same file position */
  ck_assert_int_ge(kernel_fd, 0);
  ck_assert_int_eq(lseek(kernel_fd, page_bytes, SEEK_SET), page_bytes);
  ck_assert_int_eq(pwrite(kernel_fd, &page, sizeof page, 0), (ssize_t) sizeof page);
  set_count(first_count);
  opens++;
  return fd;
}

/* PERF_EVENT_IOC_ID as the kernel answers it: the event's own id (here the
 * memfd's inode), EBADF on a closed number, ENOTTY on a file that is not
 * an event (a pipe). */
static int ids_asked;

static int standin_ioctl(int fd, unsigned long request, void *arg)
{
  struct stat st;
  if (request != PERF_EVENT_IOC_ID) return 0;
  ids_asked++;
  if (fstat(fd, &st) != 0) return -1;
  if (!S_ISREG(st.st_mode)) {
    errno = ENOTTY;
    return -1;
  }
  *(unsigned long long *) arg = (unsigned long long) st.st_ino + 1;
  return 0;
}

/* The hardware counters the fake rdpmc reads, and which it read last. */
#define FIXED_CYCLES (1u << 30 | 1u)
#define FIXED_CYCLES_INDEX (FIXED_CYCLES + 1u)
static unsigned long long counter3, fixed1, other;
static unsigned int last_counter = ~0u;
static int rdpmcs;

static unsigned long long hardware(unsigned int counter)
{
  rdpmcs++;
  last_counter = counter;
  if (counter == 2) return counter3;
  if (counter == FIXED_CYCLES) return fixed1;
  return other;
}

static unsigned long long fake_rdpmc(unsigned int counter)
{
  return hardware(counter);
}

static void standin_kernel(void)
{
  page_bytes = sysconf(_SC_PAGESIZE);
  memset(&page, 0, sizeof page);
  page.lock = 2;
  page.cap_user_rdpmc = 1;
  page.pmc_width = 48;
  cpucycles_perf_set_opener(standin_open);
  cpucycles_perf_set_ioctl(standin_ioctl);
  cpucycles_perf_set_clock(still_clock);
  cpucycles_perf_set_persecond(1000000000); /* a cycle a nanosecond */
}

/* ---- RDPMC emulated, for amd64-perfpmcff's own instruction ---- */

#if defined(__x86_64__) && !defined(UNDER_SANITIZER)
#define EMULATED_RDPMC 1
static volatile int emulated;

static void emulate_rdpmc(int sig, siginfo_t *si, void *context)
{
  ucontext_t *uc = context;
  greg_t *r = uc->uc_mcontext.gregs;
  const unsigned char *ip = (const unsigned char *) r[REG_RIP];
  unsigned long long v;
  (void) si;
  if (ip[0] != 0x0f || ip[1] != 0x33) { /* not rdpmc: the fault is real */
    signal(sig, SIG_DFL);
    return;
  }
  v = hardware((unsigned int) r[REG_RCX]);
  r[REG_RAX] = (greg_t) (v & 0xffffffffu);
  r[REG_RDX] = (greg_t) (v >> 32);
  r[REG_RIP] += 2;
  emulated++;
}

/* Whether RDPMC faults here (no PMU for user space), so that the handler
 * answers each one: else the CPU's own counters would answer. */
static int rdpmc_emulated(void)
{
  struct sigaction sa;
  unsigned int lo, hi;
  int before;
  if (RUNNING_ON_VALGRIND) return 0;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = emulate_rdpmc;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  ck_assert_int_eq(sigaction(SIGSEGV, &sa, 0), 0);
  before = emulated;
  __asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(0u));
  (void) lo;
  (void) hi;
  return emulated == before + 1;
}

/* amd64-perfpmcff set up on the stand-in kernel, its event on fixed
 * counter 1 with a count of 100 there; 0 where it is not built or RDPMC
 * is not emulated here. */
static const struct counter *pmcff_counting_100(void)
{
  const struct counter *c = find_counter("amd64-perfpmcff");
  struct counter_info info;
  if (!c || !rdpmc_emulated()) return 0;
  standin_kernel();
  page.index = FIXED_CYCLES_INDEX;
  page.offset = -1000000;
  memset(&info, 0, sizeof info);
  ck_assert_int_eq(c->setup(&info), 0);
  fixed1 = 1000000 + 100;
  return c;
}
#endif

/* ---- multiplexing: the kernel moves the event ---- */

/* amd64-perfpmcff reads fixed counter 1 only while the page says the
 * event is there; elsewhere its page (another counter) or its read(2) (no
 * counter), each as the event's count, never below. */
START_TEST(pmcff_reads_fixed_counter_1_only_while_its_event_is_there)
{
#ifdef EMULATED_RDPMC
  const struct counter *c = pmcff_counting_100();
  long long v1, v2, v3, v4;
  if (!c) return;
  v1 = c->read();
  /* multiplexed: the event on general counter 2, another event's count
   * (5 * 10^13) on fixed counter 1 */
  set_page(3, -2000000, 1);
  counter3 = 2000000 + 150;
  fixed1 = 50000000000000LL;
  v2 = c->read();
  ck_assert_msg(v2 - v1 == 50, "on counter 2, the event counted 50: read %lld after %lld",
                v2, v1);
  ck_assert_uint_eq(last_counter, 2);
  /* off every counter: the count is the event's read(2) */
  set_page(0, 0, 1);
  set_count(180);
  v3 = c->read();
  ck_assert_int_eq(v3 - v1, 80);
  ck_assert_uint_eq(last_counter, 2);
  /* back on fixed counter 1 */
  set_page(FIXED_CYCLES_INDEX, -3000000, 1);
  fixed1 = 3000000 + 200;
  v4 = c->read();
  ck_assert_int_eq(v4 - v1, 100);
  ck_assert_uint_eq(last_counter, FIXED_CYCLES);
  c->release();
#endif
}
END_TEST

/* The same moves for the page counters' shared read, on every ISA. */
START_TEST(page_counter_follows_its_event_between_counters)
{
  struct cpucycles_perf_event ev = { 0 };
  struct counter_info info;
  long long v1, v2, v3;
  standin_kernel();
  page.index = 3;
  page.offset = -1000000;
  ck_assert_int_eq(cpucycles_perf_setup(&ev, fake_rdpmc, 0, &info), 0);
  counter3 = 1000000 + 100;
  v1 = cpucycles_perf_read_fast(&ev, fake_rdpmc, 0);
  set_page(0, 0, 1);
  set_count(140);
  v2 = cpucycles_perf_read_fast(&ev, fake_rdpmc, 0);
  ck_assert_int_eq(v2 - v1, 40);
  set_page(3, -4000000, 1);
  counter3 = 4000000 + 170;
  v3 = cpucycles_perf_read_fast(&ev, fake_rdpmc, 0);
  ck_assert_int_eq(v3 - v1, 70);
  cpucycles_perf_close(&ev);
}
END_TEST

/* ---- a count that stops ---- */

/* default-perfevent: while its event's count stands still (off every
 * counter, disabled), the thread's values go on with the clock, in
 * cycles; when it moves again, on from there. */
START_TEST(perfevent_count_that_stops_goes_on_with_the_clock)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  long long v1, v2, v3, v4;
  if (!c) return;
  standin_kernel();
  memset(&info, 0, sizeof info);
  ck_assert_int_eq(c->setup(&info), 0);
  set_count(100);
  v1 = c->read();
  clock_ns += 1000;
  v2 = c->read(); /* stopped */
  ck_assert_msg(v2 - v1 == 1000, "1000 ns of a stopped count: %lld cycles", v2 - v1);
  clock_ns += 2000;
  v3 = c->read();
  ck_assert_int_eq(v3 - v2, 2000);
  set_count(130); /* counting again: 30 more */
  clock_ns += 500;
  v4 = c->read();
  ck_assert_int_eq(v4 - v3, 30);
  c->release();
}
END_TEST

/* A page counter whose event is off every counter (index 0) for a while:
 * the same, through the event's read(2). */
START_TEST(page_counter_count_that_stops_goes_on_with_the_clock)
{
  struct cpucycles_perf_event ev = { 0 };
  struct counter_info info;
  long long v1, v2, v3, v4;
  standin_kernel();
  page.index = 3;
  page.offset = -1000000;
  ck_assert_int_eq(cpucycles_perf_setup(&ev, fake_rdpmc, 0, &info), 0);
  counter3 = 1000000 + 500;
  v1 = cpucycles_perf_read_fast(&ev, fake_rdpmc, 0);
  set_page(0, 0, 1); /* a pinned system-wide user took every counter */
  set_count(600);
  v2 = cpucycles_perf_read_fast(&ev, fake_rdpmc, 0);
  ck_assert_int_eq(v2 - v1, 100);
  clock_ns += 3000;
  v3 = cpucycles_perf_read_fast(&ev, fake_rdpmc, 0);
  ck_assert_msg(v3 - v2 == 3000, "3000 ns off every counter: %lld cycles", v3 - v2);
  set_page(3, -2000000, 1); /* back, counted 20 more: on from v3 */
  counter3 = 2000000 + 620;
  v4 = cpucycles_perf_read_fast(&ev, fake_rdpmc, 0);
  ck_assert_int_eq(v4 - v3, 20);
  cpucycles_perf_close(&ev);
}
END_TEST

/* A later thread of a page counter whose event never gets a counter. */
static __thread struct cpucycles_perf_event thread_event;
static long long thread_values[3];

static void *read_three_times(void *arg)
{
  int i;
  (void) arg;
  for (i = 0; i < 3; i++) {
    thread_values[i] = cpucycles_perf_read_fast(&thread_event, fake_rdpmc, 0);
    clock_ns += 1000;
  }
  cpucycles_perf_close(&thread_event);
  return 0;
}

START_TEST(page_counters_thread_never_on_a_counter_goes_on_with_the_clock)
{
  struct counter_info info;
  pthread_t th;
  standin_kernel();
  page.index = 3;
  ck_assert_int_eq(cpucycles_perf_setup(&thread_event, fake_rdpmc, 0, &info), 0);
  page.index = 0; /* the next event's page: on no counter, count 0 */
  first_count = 0;
  ck_assert_int_eq(pthread_create(&th, 0, read_three_times, 0), 0);
  ck_assert_int_eq(pthread_join(th, 0), 0);
  ck_assert_int_eq(opens, 2);
  ck_assert_int_eq(thread_values[1] - thread_values[0], 1000);
  ck_assert_int_eq(thread_values[2] - thread_values[1], 1000);
  cpucycles_perf_close(&thread_event);
}
END_TEST

/* A real event the program disables with prctl: the values go on while
 * the thread runs, and on when it is enabled again. */
static int task_clock_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                           int group_fd, unsigned long flags)
{
  struct perf_event_attr sw = *attr;
  sw.type = PERF_TYPE_SOFTWARE;
  sw.config = PERF_COUNT_SW_TASK_CLOCK;
  opens++;
  return (int) syscall(__NR_perf_event_open, &sw, pid, cpu, group_fd, flags);
}

static int task_clock_works(void)
{
  struct perf_event_attr attr;
  int fd;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  fd = task_clock_open(&attr, 0, -1, -1, 0);
  opens = 0;
  if (fd < 0) return 0;
  close(fd);
  return 1;
}

/* Spins until the monotonic clock has moved by ns. */
static void run_for(long long ns)
{
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) < ns);
}

START_TEST(perfevent_disabled_by_the_program_goes_on)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  long long a, b, d, e, f;
  if (!c || !task_clock_works()) return;
  cpucycles_perf_set_opener(task_clock_open);
  memset(&info, 0, sizeof info);
  ck_assert_int_eq(c->setup(&info), 0);
  a = c->read();
  ck_assert_int_eq(prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0), 0);
  b = c->read();
  run_for(2000000);
  d = c->read();
  ck_assert_msg(d > b, "2 ms with the event disabled: %lld, then %lld", b, d);
  ck_assert_int_eq(prctl(PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0), 0);
  e = c->read();
  run_for(2000000);
  f = c->read();
  ck_assert(a <= b && d <= e && e < f);
  ck_assert_int_eq(opens, 1);
  c->release();
}
END_TEST

/* A signal handler that reads in the middle of a read whose count
 * stopped (here: just after that read took the clock, through the seam):
 * the interrupted read returns no less than the read before it, and every
 * read after is above the handler's value, whatever each wrote. */
static const struct counter *interrupted;
static int interrupt_at = -1, clock_reads;
static long long handler_value;

static int interrupting_clock(clockid_t clock, struct timespec *t)
{
  clock_ns += 1000;
  still_clock(clock, t); /* the time read, then the signal */
  if (clock_reads++ == interrupt_at) raise(SIGUSR1);
  return 0;
}

static void read_in_handler(int sig)
{
  (void) sig;
  handler_value = interrupted->read();
}

START_TEST(perfevent_read_interrupted_by_a_reading_handler)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  long long v1, v2, v3;
  if (!c) return;
  standin_kernel();
  cpucycles_perf_set_clock(interrupting_clock);
  interrupted = c;
  ck_assert(signal(SIGUSR1, read_in_handler) != SIG_ERR);
  memset(&info, 0, sizeof info);
  ck_assert_int_eq(c->setup(&info), 0);
  set_count(100); /* stopped from here on */
  v1 = c->read();
  interrupt_at = clock_reads; /* the next read's clock */
  v2 = c->read();
  v3 = c->read();
  ck_assert_int_gt(handler_value, v1);
  ck_assert_msg(v2 >= v1 && v3 >= handler_value, "%lld, then %lld (the handler %lld), %lld",
                v1, v2, handler_value, v3);
  c->release();
}
END_TEST

/* ---- user reads withdrawn ---- */

/* The page stops offering user reads (cap_user_rdpmc 0): amd64-perfpmcff
 * runs no RDPMC from then on, and reads the event's read(2). */
START_TEST(pmcff_runs_no_rdpmc_once_the_page_withdraws_user_reads)
{
#ifdef EMULATED_RDPMC
  const struct counter *c = pmcff_counting_100();
  long long v1, v2, v3;
  int before;
  if (!c) return;
  v1 = c->read();
  set_page(FIXED_CYCLES_INDEX, -1000000, 0);
  set_count(120);
  before = emulated;
  v2 = c->read();
  v3 = c->read();
  ck_assert_msg(emulated == before, "RDPMC run %d times after the page withdrew user reads",
                emulated - before);
  ck_assert_int_eq(v2 - v1, 20);
  ck_assert_int_ge(v3, v2);
  c->release();
#endif
}
END_TEST

/* ---- a descriptor taken over ---- */

/* A daemon closes every descriptor, then holds a pipe at the event's old
 * number, with 8 bytes in it: default-perfevent reads none of them (they
 * are the program's) and does not block on the pipe; the thread counts on
 * with a new event, never below. */
START_TEST(perfevent_never_reads_a_pipe_at_its_number)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  long long a, b, d, bytes = 0x1122334455667788LL;
  int p[2], event_fd, queued = -1;
  if (!c || !task_clock_works()) return;
  cpucycles_perf_set_opener(task_clock_open);
  memset(&info, 0, sizeof info);
  ck_assert_int_eq(c->setup(&info), 0);
  a = c->read();
  /* the event's number: the one descriptor that is a perf event of ours */
  for (event_fd = 3; event_fd < 8192; event_fd++) {
    char link[64], target[64];
    ssize_t n;
    snprintf(link, sizeof link, "/proc/self/fd/%d", event_fd);
    n = readlink(link, target, sizeof target - 1);
    if (n > 0 && (target[n] = 0, strstr(target, "perf_event"))) break;
  }
  ck_assert_int_lt(event_fd, 8192);
  ck_assert_int_eq(pipe(p), 0); /* blocking, as most programs' */
  ck_assert_int_eq(dup2(p[0], event_fd), event_fd);
  close(p[0]);
  ck_assert_int_eq(write(p[1], &bytes, sizeof bytes), (ssize_t) sizeof bytes);
  b = c->read();
  ck_assert_int_eq(ioctl(event_fd, FIONREAD, &queued), 0);
  ck_assert_msg(queued == 8, "the program's pipe holds %d bytes of its 8", queued);
  d = c->read(); /* would block on the empty pipe */
  ck_assert(a <= b && b <= d);
  ck_assert_int_eq(opens, 2);
  c->release();
  ck_assert_int_eq(ioctl(event_fd, FIONREAD, &queued), 0);
  ck_assert_int_eq(queued, 8); /* and not closed */
  close(event_fd);
  close(p[1]);
}
END_TEST

/* ---- the count's end: a PMU that goes away ---- */

/* read(2) answers end of file: the thread reads the fallback clock,
 * never below the last count it returned. */
START_TEST(perfevent_falls_back_from_where_it_was)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  long long v1, v2, v3;
  if (!c) return;
  standin_kernel();
  memset(&info, 0, sizeof info);
  ck_assert_int_eq(c->setup(&info), 0);
  set_count(900000000000000LL); /* far above the clock's cycles */
  v1 = c->read();
  ck_assert_int_eq(ftruncate(kernel_fd, lseek(kernel_fd, 0, SEEK_CUR)), 0);
  v2 = c->read();
  clock_ns += 1000;
  v3 = c->read();
  ck_assert_msg(v2 >= v1, "fell back below its last value: %lld after %lld", v2, v1);
  ck_assert_int_eq(v3 - v2, 1000);
  c->release();
}
END_TEST

/* ---- few descriptors ---- */

/* Six threads read under a soft RLIMIT_NOFILE of 8: the library's events
 * take at most a quarter of it (2), the rest is the program's, and the
 * threads past it read the fallback clock. */
static pthread_mutex_t hold = PTHREAD_MUTEX_INITIALIZER;
static int threads_read;

static void *read_and_hold(void *arg)
{
  const struct counter *c = arg;
  (void) c->read();
  __atomic_add_fetch(&threads_read, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_lock(&hold);
  pthread_mutex_unlock(&hold);
  return 0;
}

/* How many more descriptors the program could open now. */
static int free_descriptors(void)
{
  int fds[64], n = 0;
  while (n < 64 && (fds[n] = dup(0)) >= 0) n++;
  ck_assert_int_lt(n, 64);
  ck_assert_int_eq(errno, EMFILE);
  for (int i = 0; i < n; i++) close(fds[i]);
  return n;
}

START_TEST(library_leaves_the_program_its_descriptors)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  struct rlimit rl;
  pthread_t th[6];
  int i, free_before, held;
  if (!c || !task_clock_works()) return;
  cpucycles_perf_set_opener(task_clock_open);
  ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
  rl.rlim_cur = 8;
  ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
  memset(&info, 0, sizeof info);
  ck_assert_int_eq(c->setup(&info), 0); /* the probe thread's: 1 */
  free_before = free_descriptors();
  pthread_mutex_lock(&hold);
  for (i = 0; i < 6; i++)
    ck_assert_int_eq(pthread_create(&th[i], 0, read_and_hold, (void *) c), 0);
  while (__atomic_load_n(&threads_read, __ATOMIC_SEQ_CST) < 6) sched_yield();
  held = 1 + free_before - free_descriptors();
  pthread_mutex_unlock(&hold);
  for (i = 0; i < 6; i++) ck_assert_int_eq(pthread_join(th[i], 0), 0);
  ck_assert_msg(held <= 2, "the library held %d of the 8 descriptors", held);
  c->release();
}
END_TEST

static Suite *faults_suite(void)
{
  Suite *s = suite_create("perf faults");
  TCase *tc;

  tc = tcase_create("multiplexing");
  tcase_add_test(tc, pmcff_reads_fixed_counter_1_only_while_its_event_is_there);
  tcase_add_test(tc, page_counter_follows_its_event_between_counters);
  suite_add_tcase(s, tc);

  tc = tcase_create("a count that stops");
  tcase_add_test(tc, perfevent_count_that_stops_goes_on_with_the_clock);
  tcase_add_test(tc, page_counter_count_that_stops_goes_on_with_the_clock);
  tcase_add_test(tc, page_counters_thread_never_on_a_counter_goes_on_with_the_clock);
  tcase_add_test(tc, perfevent_disabled_by_the_program_goes_on);
  tcase_add_test(tc, perfevent_falls_back_from_where_it_was);
  tcase_add_test(tc, perfevent_read_interrupted_by_a_reading_handler);
  suite_add_tcase(s, tc);

  tc = tcase_create("user reads withdrawn");
  tcase_add_test(tc, pmcff_runs_no_rdpmc_once_the_page_withdraws_user_reads);
  suite_add_tcase(s, tc);

  tc = tcase_create("descriptors");
  tcase_add_test(tc, perfevent_never_reads_a_pipe_at_its_number);
  tcase_add_test(tc, library_leaves_the_program_its_descriptors);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  /* each test in a process of its own: per-thread state, global seams,
   * the descriptor limit */
  setenv("CK_FORK", "yes", 1);
  cpucycles_perf_set_sysfs_root("/nonexistent-sysfs-for-tests");
  return run_suite(faults_suite());
}

#else

int main(void)
{
  return 77; /* no Linux perf_event here: skipped */
}

#endif
