/* Tests of lib/perf.c and the perf_event counters (amd64-perfpmc,
 * amd64-perfpmcff, arm64-perfpmc, riscv64-perfrdcycle, default-perfevent).
 *
 * Most machines that run the tests (VMs, containers) have no PMU for user
 * space: perf_event_open of hardware cycles fails and rdpmc faults.  So the
 * page reader is tested on a fake page with a fake rdpmc, and the counters
 * through the opener seam (cpucycles_perf_set_opener) with stand-in
 * descriptors: pipes for read(2), memfds for the mapped page, and real
 * software events (task clock) where the kernel allows them, for fork.
 * The shared perfpmc helpers (cpucycles_perf_setup, cpucycles_perf_read,
 * cpucycles_perf_read_fast) are tested with a fake page in a memfd and a
 * fake rdpmc, so that they run on every ISA.
 * The real thing is tested too: setup must fail cleanly where hardware
 * cycles are refused, and read monotonically where they are not.
 *
 * Counters are looked up by name in the library's table: a counter that
 * did not compile for this host is skipped. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "counter.h"
#include "works-once.h"
#include "seams.h"
#include "pmu.h"
#include "fixture-tree.h"
#include "checked-by.h"
#include "fault.h"
#include "select.h"

#ifdef CPUCYCLES_PERF_AVAILABLE

static const struct counter *find_counter(const char *name)
{
  int i;
  for (i = 0; i < cpucycles_counter_count; i++)
    if (cpucycles_counter_table[i]->setup  /* built, not only listed */
        && strcmp(cpucycles_counter_table[i]->name, name) == 0)
      return cpucycles_counter_table[i];
  return 0;
}

static const char *const perf_counters[] = {
  "amd64-perfpmc", "amd64-perfpmcff", "arm64-perfpmc", "riscv64-perfrdcycle",
  "default-perfevent"
};
#define PERF_COUNTERS ((int) (sizeof perf_counters / sizeof perf_counters[0]))

static int fd_is_closed(int fd)
{
  return fcntl(fd, F_GETFD) == -1 && errno == EBADF;
}

static int fd_has_cloexec(int fd)
{
  int flags = fcntl(fd, F_GETFD);
  return flags >= 0 && (flags & FD_CLOEXEC);
}

/* ---- the page reader, on a fake page ---- */

static struct perf_event_mmap_page page;
static unsigned long long rdpmc_result;
static unsigned int rdpmc_calls, rdpmc_counter;

static unsigned long long fake_rdpmc(unsigned int counter)
{
  rdpmc_calls++;
  rdpmc_counter = counter;
  return rdpmc_result;
}

/* The kernel rewrites the page (a context switch) during the first read. */
static unsigned long long racing_rdpmc(unsigned int counter)
{
  rdpmc_calls++;
  rdpmc_counter = counter;
  if (rdpmc_calls == 1) {
    page.lock += 2;
    page.offset = -5000;
    return 777777; /* belongs to the old offset: must not be used */
  }
  return 9000;
}

static void fake_page(unsigned int index, long long offset, unsigned width)
{
  memset(&page, 0, sizeof page);
  page.version = 0;
  page.lock = 40;
  page.index = index;
  page.offset = offset;
  page.cap_user_rdpmc = 1;
  page.pmc_width = (unsigned short) width;
  rdpmc_calls = 0;
  rdpmc_counter = ~0u;
}

START_TEST(page_offset_plus_counter)
{
  long long v = 0;
  fake_page(3, -1000000, 48);
  rdpmc_result = 1000123;
  ck_assert_int_eq(cpucycles_perf_page_read(&page, fake_rdpmc, &v), 0);
  ck_assert_int_eq(v, 123);
  ck_assert_uint_eq(rdpmc_counter, 2); /* index - 1 */
  ck_assert_uint_eq(rdpmc_calls, 1);
}
END_TEST

START_TEST(page_retries_when_lock_changes)
{
  long long v = 0;
  fake_page(1, 100, 48);
  ck_assert_int_eq(cpucycles_perf_page_read(&page, racing_rdpmc, &v), 0);
  ck_assert_uint_eq(rdpmc_calls, 2);
  ck_assert_int_eq(v, -5000 + 9000); /* new offset with the new reading */
}
END_TEST

START_TEST(page_index_zero_is_unavailable)
{
  long long v = 42;
  fake_page(0, 100, 48);
  ck_assert_int_eq(cpucycles_perf_page_read(&page, fake_rdpmc, &v), -1);
  ck_assert_uint_eq(rdpmc_calls, 0);
  ck_assert_int_eq(v, 42);
}
END_TEST

START_TEST(page_without_cap_user_rdpmc_is_unavailable)
{
  long long v = 42;
  fake_page(2, 100, 48);
  page.cap_user_rdpmc = 0;
  ck_assert_int_eq(cpucycles_perf_page_read(&page, fake_rdpmc, &v), -1);
  ck_assert_uint_eq(rdpmc_calls, 0);
}
END_TEST

START_TEST(page_sign_extends_pmc_width)
{
  long long v = 0;
  /* 48-bit -256, with junk above bit 47 that must be ignored. */
  fake_page(1, 1000, 48);
  rdpmc_result = 0x0000ffffffffff00ULL;
  ck_assert_int_eq(cpucycles_perf_page_read(&page, fake_rdpmc, &v), 0);
  ck_assert_int_eq(v, 744);
  rdpmc_result = 0xabcdffffffffff00ULL;
  ck_assert_int_eq(cpucycles_perf_page_read(&page, fake_rdpmc, &v), 0);
  ck_assert_int_eq(v, 744);
  /* Largest positive 48-bit value. */
  rdpmc_result = 0x00007fffffffffffULL;
  ck_assert_int_eq(cpucycles_perf_page_read(&page, fake_rdpmc, &v), 0);
  ck_assert_int_eq(v, 1000 + 0x7fffffffffffLL);
}
END_TEST

START_TEST(page_as_the_kernel_programs_it)
{
  /* Linux starts a counting event at -left (here 2^47 - 1) and keeps
   * offset = count + left; after 5000 more cycles the raw counter reads
   * 2^48 - left + 5000. */
  long long left = 0x7fffffffffffLL, count = 123456789, v = 0;
  fake_page(1, count + left, 48);
  rdpmc_result = (unsigned long long) ((1LL << 48) - left + 5000);
  ck_assert_int_eq(cpucycles_perf_page_read(&page, fake_rdpmc, &v), 0);
  ck_assert_int_eq(v, count + 5000);
  /* And a negative offset with a positive counter. */
  fake_page(1, -(1LL << 40), 48);
  rdpmc_result = (1ULL << 40) + 77;
  ck_assert_int_eq(cpucycles_perf_page_read(&page, fake_rdpmc, &v), 0);
  ck_assert_int_eq(v, 77);
}
END_TEST

START_TEST(page_sign_extends_pmc_width_40)
{
  long long v = 0;
  /* 40-bit -1 (AMD before Zen), junk above bit 39 ignored. */
  fake_page(1, 1000, 40);
  rdpmc_result = 0xffffffffffULL;
  ck_assert_int_eq(cpucycles_perf_page_read(&page, fake_rdpmc, &v), 0);
  ck_assert_int_eq(v, 999);
  rdpmc_result = 0x123456ffffffffffULL;
  ck_assert_int_eq(cpucycles_perf_page_read(&page, fake_rdpmc, &v), 0);
  ck_assert_int_eq(v, 999);
  /* Largest positive 40-bit value. */
  rdpmc_result = 0x7fffffffffULL;
  ck_assert_int_eq(cpucycles_perf_page_read(&page, fake_rdpmc, &v), 0);
  ck_assert_int_eq(v, 1000 + 0x7fffffffffLL);
}
END_TEST

/* A multiplexed event (time_running < time_enabled) is not scaled: the
 * count is the cycles actually counted, offset + counter. */
START_TEST(page_multiplexed_is_not_scaled)
{
  long long v = 0;
  fake_page(2, 500, 48);
  page.time_enabled = 1000000;
  page.time_running = 250000;
  page.cap_user_time = 1;
  page.time_mult = 1;
  rdpmc_result = 100;
  ck_assert_int_eq(cpucycles_perf_page_read(&page, fake_rdpmc, &v), 0);
  ck_assert_int_eq(v, 600);
}
END_TEST

START_TEST(page_width_64_and_implausible_widths)
{
  long long v = 0;
  fake_page(1, 10, 64);
  rdpmc_result = 0xffffffffffffffffULL;
  ck_assert_int_eq(cpucycles_perf_page_read(&page, fake_rdpmc, &v), 0);
  ck_assert_int_eq(v, 9);
  fake_page(1, 10, 32);
  rdpmc_result = 0xffffffffULL;
  ck_assert_int_eq(cpucycles_perf_page_read(&page, fake_rdpmc, &v), 0);
  ck_assert_int_eq(v, 9);
  fake_page(1, 10, 0);
  ck_assert_int_eq(cpucycles_perf_page_read(&page, fake_rdpmc, &v), -1);
  fake_page(1, 10, 65);
  ck_assert_int_eq(cpucycles_perf_page_read(&page, fake_rdpmc, &v), -1);
  ck_assert_uint_eq(rdpmc_calls, 0);
}
END_TEST

/* ---- the opener seam ---- */

#define MAX_OPENED 16
static int open_calls;
static int opened[MAX_OPENED];
static struct perf_event_attr last_attr;
static pid_t last_pid;
static int last_cpu, last_group;
static unsigned long last_flags;
static long long pipe_first_value; /* written into each new pipe */
static long long pipe_values[4];   /* or these, when pipe_nvalues > 0 */
static int pipe_nvalues;
static int pipe_writer = -1;       /* write end of the latest pipe */
static int pipe_writers[MAX_OPENED]; /* and of each, by open */
static struct perf_event_mmap_page page_template;

static void note_call(struct perf_event_attr *attr, pid_t pid, int cpu,
                      int group_fd, unsigned long flags)
{
  last_attr = *attr;
  last_pid = pid;
  last_cpu = cpu;
  last_group = group_fd;
  last_flags = flags;
}

/* What a descriptor is, whatever number it lives at: a perf event's
 * kernel id; else the file and the access mode (a pipe's two ends are one
 * inode). */
struct fd_identity {
  dev_t dev;
  ino_t ino;
  int mode;
  unsigned long long id;
};
static struct fd_identity opened_identity[MAX_OPENED];

static int identity_of(int fd, struct fd_identity *who)
{
  struct stat st;
  memset(who, 0, sizeof *who);
  if (fstat(fd, &st) != 0) return -1;
  who->dev = st.st_dev;
  who->ino = st.st_ino;
  who->mode = fcntl(fd, F_GETFL) & O_ACCMODE;
  if (ioctl(fd, PERF_EVENT_IOC_ID, &who->id) != 0) who->id = 0;
  return 0;
}

static int note_fd(int fd)
{
  if (fd >= 0 && open_calls < MAX_OPENED) {
    opened[open_calls] = fd;
    identity_of(fd, &opened_identity[open_calls]);
  }
  open_calls++;
  return fd;
}

/* Where the i-th opened event lives now: the number holding it, -1 when
 * none does (closed). */
static int opened_fd(int i)
{
  struct fd_identity who;
  int fd;
  if (i < 0 || i >= MAX_OPENED || i >= open_calls) return -1;
  for (fd = 0; fd < 8192; fd++)
    if (identity_of(fd, &who) == 0 &&
        memcmp(&who, &opened_identity[i], sizeof who) == 0)
      return fd;
  return -1;
}

static int refusing_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                         int group_fd, unsigned long flags)
{
  note_call(attr, pid, cpu, group_fd, flags);
  open_calls++;
  errno = EACCES;
  return -1;
}

/* A nonblocking pipe whose read end stands for the event: each read(2)
 * takes the next 8-byte value the test wrote. */
static int pipe_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                     int group_fd, unsigned long flags)
{
  int p[2];
  note_call(attr, pid, cpu, group_fd, flags);
  if (pipe2(p, O_NONBLOCK | ((flags & PERF_FLAG_FD_CLOEXEC) ? O_CLOEXEC : 0)))
    return -1;
  if (pipe_nvalues == 0) {
    if (write(p[1], &pipe_first_value, 8) != 8) abort();
  } else if (write(p[1], pipe_values, 8 * (size_t) pipe_nvalues) !=
             (ssize_t) (8 * pipe_nvalues)) {
    abort();
  }
  pipe_writer = p[1];
  if (open_calls < MAX_OPENED) pipe_writers[open_calls] = p[1];
  return note_fd(p[0]);
}

/* A kernel before 3.14: PERF_FLAG_FD_CLOEXEC is EINVAL. */
static int old_kernel_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                           int group_fd, unsigned long flags)
{
  if (flags & PERF_FLAG_FD_CLOEXEC) {
    note_call(attr, pid, cpu, group_fd, flags);
    open_calls++;
    errno = EINVAL;
    return -1;
  }
  return pipe_open(attr, pid, cpu, group_fd, flags);
}

/* A memfd holding page_template stands for a mappable event. */
static int memfd_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                      int group_fd, unsigned long flags)
{
  long size = sysconf(_SC_PAGESIZE);
  int fd;
  note_call(attr, pid, cpu, group_fd, flags);
  fd = memfd_create("fake-perf-event",
                    (flags & PERF_FLAG_FD_CLOEXEC) ? MFD_CLOEXEC : 0);
  if (fd < 0) return -1;
  if (ftruncate(fd, size) != 0 ||
      pwrite(fd, &page_template, sizeof page_template, 0) !=
        (ssize_t) sizeof page_template)
    abort();
  return note_fd(fd);
}

/* The real system call for a software event (task clock, nanoseconds of
 * this thread's CPU time): a real per-thread perf descriptor on machines
 * without a PMU. */
static int software_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                         int group_fd, unsigned long flags)
{
  struct perf_event_attr sw = *attr;
  note_call(attr, pid, cpu, group_fd, flags);
  sw.type = PERF_TYPE_SOFTWARE;
  sw.config = PERF_COUNT_SW_TASK_CLOCK;
  return note_fd((int) syscall(__NR_perf_event_open, &sw, pid, cpu, group_fd,
                               flags));
}

/* Whether this machine gives the calling thread a user-mode event of this
 * type and config. */
static int event_opens(unsigned int type, unsigned long long config)
{
  struct perf_event_attr attr;
  int fd;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = type;
  attr.config = config;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  fd = (int) syscall(__NR_perf_event_open, &attr, 0, -1, -1,
                     PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return 0;
  close(fd);
  return 1;
}

static int software_events_work(void)
{
  return event_opens(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
}

static void put_value(long long v)
{
  ck_assert_int_eq(write(pipe_writer, &v, 8), 8);
}

START_TEST(open_asks_for_user_cycles_of_this_thread_cloexec)
{
  struct cpucycles_perf_event ev = { 0 };
  cpucycles_perf_set_opener(pipe_open);
  ck_assert_int_eq(cpucycles_perf_open(&ev, 0, 0), 0);
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_OPEN);
  ck_assert_int_eq(open_calls, 1);
  ck_assert_uint_eq(last_attr.type, PERF_TYPE_HARDWARE);
  ck_assert_uint_eq(last_attr.config, PERF_COUNT_HW_CPU_CYCLES);
  ck_assert_uint_eq(last_attr.size, sizeof last_attr);
  ck_assert_uint_eq(last_attr.exclude_kernel, 1);
  ck_assert_uint_eq(last_attr.exclude_hv, 1);
  ck_assert_uint_eq(last_attr.disabled, 0);
  ck_assert_uint_eq(last_attr.inherit, 0);
  ck_assert_uint_eq(last_attr.config1, 0);
  ck_assert_uint_eq(last_attr.config2, 0);
  ck_assert_int_eq(last_pid, 0);
  ck_assert_int_eq(last_cpu, -1);
  ck_assert_int_eq(last_group, -1);
  ck_assert(last_flags & PERF_FLAG_FD_CLOEXEC);
  ck_assert_int_eq(ev.fd, opened_fd(0));
  ck_assert(fd_has_cloexec(ev.fd));
  cpucycles_perf_close(&ev);
  ck_assert(fd_is_closed(opened_fd(0)));
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_UNOPENED);
  cpucycles_perf_close(&ev); /* twice: harmless */
}
END_TEST

START_TEST(open_sets_cloexec_by_hand_on_old_kernels)
{
  struct cpucycles_perf_event ev = { 0 };
  cpucycles_perf_set_opener(old_kernel_open);
  ck_assert_int_eq(cpucycles_perf_open(&ev, 0, 0), 0);
  ck_assert_int_eq(open_calls, 2);
  ck_assert_uint_eq(last_flags, 0);
  ck_assert(fd_has_cloexec(ev.fd));
  cpucycles_perf_close(&ev);
  ck_assert(fd_is_closed(opened_fd(1)));
}
END_TEST

START_TEST(open_failure_leaves_nothing)
{
  struct cpucycles_perf_event ev = { 0 };
  cpucycles_perf_set_opener(refusing_open);
  ck_assert_int_eq(cpucycles_perf_open(&ev, 1, 0), -1);
  ck_assert_int_eq(open_calls, 1); /* EACCES: no retry without the flag */
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_UNOPENED);
  cpucycles_perf_close(&ev);
}
END_TEST

/* A PMU that refuses some exclusion combinations: bit (2 * exclude_kernel
 * + exclude_hv) of refused_combinations set means refused with
 * refusal_errno. */
static unsigned int refused_combinations;
static int refusal_errno;
static unsigned int tried_combinations[8];

static int picky_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                      int group_fd, unsigned long flags)
{
  unsigned int c = 2u * attr->exclude_kernel + attr->exclude_hv;
  if (open_calls < 8) tried_combinations[open_calls] = c;
  if (refused_combinations & (1u << c)) {
    note_call(attr, pid, cpu, group_fd, flags);
    open_calls++;
    errno = refusal_errno;
    return -1;
  }
  return pipe_open(attr, pid, cpu, group_fd, flags);
}

START_TEST(open_falls_back_through_the_exclusions)
{
  /* refused: the combinations (2 * exclude_kernel + exclude_hv) refused;
   * expect: the combination granted, or -1; calls: opens tried */
  static const struct {
    unsigned int refused;
    int err;
    int expect;
    int calls;
  } cases[] = {
    { 0x0, EINVAL, 3, 1 },      /* user only granted at once */
    { 0x8, EOPNOTSUPP, 2, 2 },  /* no exclude_hv: user + hv */
    { 0x8, EINVAL, 2, 3 },      /* EINVAL: also tried without the flag */
    { 0x8 | 0x4, EOPNOTSUPP, 1, 3 },       /* user + kernel */
    { 0x8 | 0x4 | 0x2, EOPNOTSUPP, 0, 4 }, /* everything */
    { 0x8 | 0x4 | 0x2, EINVAL, 0, 7 },
    { 0xf, EOPNOTSUPP, -1, 4 },  /* all four refused */
    { 0x8, EACCES, -1, 1 },      /* paranoid: a wider count is no better */
    { 0x8, EPERM, -1, 1 },
    { 0x8, ENOENT, -1, 1 },      /* no such event at all */
    { 0x8, EMFILE, -1, 1 },      /* out of descriptors */
  };
  unsigned int i;

  cpucycles_perf_set_opener(picky_open);
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct cpucycles_perf_event ev = { 0 };
    int r;
    open_calls = 0;
    refused_combinations = cases[i].refused;
    refusal_errno = cases[i].err;
    r = cpucycles_perf_open(&ev, 0, 0);
    ck_assert_msg(open_calls == cases[i].calls, "case %u: %d calls", i,
                  open_calls);
    if (cases[i].expect < 0) {
      ck_assert_int_eq(r, -1);
      ck_assert_int_eq(ev.state, CPUCYCLES_PERF_UNOPENED);
    } else {
      ck_assert_int_eq(r, 0);
      ck_assert_uint_eq(2u * last_attr.exclude_kernel + last_attr.exclude_hv,
                        (unsigned int) cases[i].expect);
      ck_assert(fd_has_cloexec(ev.fd));
      cpucycles_perf_close(&ev);
    }
  }
  /* the order: user only, then + hv, then + kernel, then everything */
  open_calls = 0;
  refused_combinations = 0xf;
  refusal_errno = EOPNOTSUPP;
  {
    struct cpucycles_perf_event ev = { 0 };
    ck_assert_int_eq(cpucycles_perf_open(&ev, 0, 0), -1);
  }
  ck_assert_uint_eq(tried_combinations[0], 3);
  ck_assert_uint_eq(tried_combinations[1], 2);
  ck_assert_uint_eq(tried_combinations[2], 1);
  ck_assert_uint_eq(tried_combinations[3], 0);
}
END_TEST

START_TEST(map_failure_closes_the_descriptor)
{
  struct cpucycles_perf_event ev = { 0 };
  cpucycles_perf_set_opener(pipe_open); /* a pipe cannot be mapped */
  ck_assert_int_eq(cpucycles_perf_open(&ev, 1, 0), -1);
  ck_assert_int_eq(open_calls, 1);
  ck_assert(fd_is_closed(opened_fd(0)));
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_UNOPENED);
}
END_TEST

START_TEST(open_passes_config1)
{
  struct cpucycles_perf_event ev = { 0 };
  cpucycles_perf_set_opener(pipe_open);
  ck_assert_int_eq(cpucycles_perf_open(&ev, 0, 3), 0);
  ck_assert_uint_eq(last_attr.config1, 3);
  ck_assert_uint_eq(last_attr.config, PERF_COUNT_HW_CPU_CYCLES);
  ck_assert_uint_eq(last_attr.exclude_kernel, 1);
  cpucycles_perf_close(&ev);
  ck_assert(fd_is_closed(opened_fd(0)));
}
END_TEST

/* ---- the shared perfpmc helpers, with a fake page and a fake rdpmc ---- */

static void fake_page_template(unsigned int index, long long offset,
                               int cap_user_rdpmc)
{
  memset(&page_template, 0, sizeof page_template);
  page_template.lock = 6;
  page_template.index = index;
  page_template.offset = offset;
  page_template.pmc_width = 48;
  page_template.cap_user_rdpmc = (unsigned long long) cap_user_rdpmc & 1;
  rdpmc_calls = 0;
  rdpmc_counter = ~0u;
}

START_TEST(shared_setup_and_fast_read_use_page_and_rdpmc)
{
  struct cpucycles_perf_event ev = { 0 };
  struct counter_info info;
  fake_page_template(3, -1000000, 1);
  cpucycles_perf_set_opener(memfd_open);
  rdpmc_result = 1000000 + 77;
  ck_assert_int_eq(cpucycles_perf_setup(&ev, fake_rdpmc, 3, &info), 0);
  ck_assert_int_eq(info.kind, COUNTER_ONCORE);
  ck_assert_int_eq(info.frequency, 0);
  ck_assert_int_eq(info.only32, 0);
  ck_assert_uint_eq(last_attr.config1, 3);
  ck_assert_uint_eq(rdpmc_calls, 0); /* setup runs no instruction: */
  ck_assert_int_eq(info.may_fault, 1); /* the probe tries it, caught */
  ck_assert(ev.page != 0);
  rdpmc_result = 1000000 + 123;
  ck_assert_int_eq(cpucycles_perf_read_fast(&ev, fake_rdpmc, 3), 123);
  ck_assert_uint_eq(rdpmc_counter, 2);
  ck_assert_int_eq(cpucycles_perf_read(&ev, fake_rdpmc, 3), 123);
  ck_assert_uint_eq(rdpmc_calls, 2);
  ck_assert_int_eq(open_calls, 1);
  cpucycles_perf_close(&ev);
  ck_assert(fd_is_closed(opened_fd(0)));
  ck_assert(ev.page == 0);
}
END_TEST

/* Multiplexing takes the event off the hardware for a while (index 0):
 * that read goes through read(2), and the next reads use the page again,
 * on the same event. */
START_TEST(shared_read_index_zero_for_a_moment)
{
  struct cpucycles_perf_event ev = { 0 };
  struct counter_info info;
  struct perf_event_mmap_page pg;
  unsigned long long first_word;
  fake_page_template(3, -1000000, 1);
  /* read(2) of the memfd gives the page's first 8 bytes, version then
   * compat_version, as the count: in the machine's byte order. */
  page_template.version = 4242;
  cpucycles_perf_set_opener(memfd_open);
  rdpmc_result = 1000000 + 77;
  ck_assert_int_eq(cpucycles_perf_setup(&ev, fake_rdpmc, 0, &info), 0);
  pg = page_template;
  pg.index = 0;
  pg.lock += 2;
  ck_assert_int_eq(pwrite(ev.fd, &pg, sizeof pg, 0), (ssize_t) sizeof pg);
  memcpy(&first_word, &pg, sizeof first_word);
  ck_assert_int_eq(cpucycles_perf_read_fast(&ev, fake_rdpmc, 0), (long long) first_word);
  ck_assert_uint_eq(rdpmc_calls, 0); /* none: neither setup nor index 0 */
  pg.index = 3;
  pg.lock += 2;
  ck_assert_int_eq(pwrite(ev.fd, &pg, sizeof pg, 0), (ssize_t) sizeof pg);
  rdpmc_result = 1000000 + 5000;
  ck_assert_int_eq(cpucycles_perf_read_fast(&ev, fake_rdpmc, 0), 5000);
  ck_assert_uint_eq(rdpmc_calls, 1);
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_OPEN);
  ck_assert_int_eq(open_calls, 1);
  cpucycles_perf_close(&ev);
}
END_TEST

START_TEST(shared_setup_refuses_without_cap_user_rdpmc)
{
  struct cpucycles_perf_event ev = { 0 };
  struct counter_info info;
  fake_page_template(3, 0, 0);
  cpucycles_perf_set_opener(memfd_open);
  memset(&info, 0, sizeof info);
  ck_assert_int_eq(cpucycles_perf_setup(&ev, fake_rdpmc, 0, &info), -1);
  ck_assert_str_eq(info.refusal, CPUCYCLES_REFUSAL_NO_USER_RDPMC);
  ck_assert_int_eq(info.refusal_errno, 0);
  ck_assert_uint_eq(rdpmc_calls, 0);
  ck_assert(fd_is_closed(opened_fd(0)));
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_UNOPENED);
}
END_TEST

START_TEST(shared_setup_without_rdpmc_is_a_perf_event)
{
  struct cpucycles_perf_event ev = { 0 };
  struct counter_info info;
  cpucycles_perf_set_opener(pipe_open); /* no page: a pipe would not map */
  pipe_first_value = 31;
  ck_assert_int_eq(cpucycles_perf_setup(&ev, 0, 0, &info), 0);
  ck_assert_int_eq(info.kind, COUNTER_PERFEVENT);
  ck_assert(ev.page == 0);
  put_value(4000);
  ck_assert_int_eq(cpucycles_perf_read(&ev, 0, 0), 4000);
  cpucycles_perf_close(&ev);
  ck_assert(fd_is_closed(opened_fd(0)));
}
END_TEST

/* The ioctl seam: records the requests; on PERF_EVENT_IOC_ENABLE the
 * event starts counting (123 goes into the pipe) when enable_revives is
 * set, else it stays at 0. */
static unsigned long ioctl_requests[8];
static int ioctl_calls;
static int enable_revives;

static int fake_ioctl(int fd, unsigned long request, void *arg)
{
  (void) fd;
  (void) arg;
  if (request == PERF_EVENT_IOC_ID) { /* as a pipe answers: no id */
    errno = ENOTTY;
    return -1;
  }
  if (ioctl_calls < 8) ioctl_requests[ioctl_calls] = request;
  ioctl_calls++;
  if (request == PERF_EVENT_IOC_ENABLE) put_value(enable_revives ? 123 : 0);
  return 0;
}

START_TEST(setup_retries_a_count_stuck_at_zero)
{
  struct cpucycles_perf_event ev = { 0 };
  struct counter_info info;
  cpucycles_perf_set_opener(pipe_open);
  cpucycles_perf_set_ioctl(fake_ioctl);

  /* 0, then moving at the second read: kept, no ioctl */
  pipe_values[0] = 0;
  pipe_values[1] = 9;
  pipe_nvalues = 2;
  ck_assert_int_eq(cpucycles_perf_setup(&ev, 0, 0, &info), 0);
  ck_assert_int_eq(ioctl_calls, 0);
  cpucycles_perf_close(&ev);

  /* stuck until disabled, reset and enabled again: kept */
  pipe_values[1] = 0;
  enable_revives = 1;
  ck_assert_int_eq(cpucycles_perf_setup(&ev, 0, 0, &info), 0);
  ck_assert_int_eq(ioctl_calls, 3);
  ck_assert_uint_eq(ioctl_requests[0], PERF_EVENT_IOC_DISABLE);
  ck_assert_uint_eq(ioctl_requests[1], PERF_EVENT_IOC_RESET);
  ck_assert_uint_eq(ioctl_requests[2], PERF_EVENT_IOC_ENABLE);
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_OPEN);
  cpucycles_perf_close(&ev);

  /* stuck for good: dropped, with its reason */
  ioctl_calls = 0;
  enable_revives = 0;
  ck_assert_int_eq(cpucycles_perf_setup(&ev, 0, 0, &info), -1);
  ck_assert_int_eq(ioctl_calls, 3);
  ck_assert_str_eq(info.refusal, CPUCYCLES_PERF_REFUSAL_STUCK);
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_UNOPENED);
  ck_assert(fd_is_closed(opened_fd(2)));

  /* a read that fails is a read failure, not a stuck count */
  ioctl_calls = 0;
  pipe_nvalues = 1; /* 0, then the pipe is empty: EAGAIN */
  ck_assert_int_eq(cpucycles_perf_setup(&ev, 0, 0, &info), -1);
  ck_assert_str_eq(info.refusal, CPUCYCLES_REFUSAL_PERF_READ);
  ck_assert_int_eq(info.refusal_errno, EAGAIN);
  ck_assert_int_eq(ioctl_calls, 0);
}
END_TEST

START_TEST(shared_read_opens_on_first_read_with_config1)
{
  struct cpucycles_perf_event ev = { 0 };
  long long expect;
  /* A new thread's state: UNOPENED.  The page says index 0 (off the
   * hardware), so the read is the descriptor's: the memfd's first 8 bytes
   * (version 0, compat_version 0). */
  fake_page_template(0, 0, 1);
  cpucycles_perf_set_opener(memfd_open);
  ck_assert_int_eq(cpucycles_perf_read_fast(&ev, fake_rdpmc, 3), 0);
  ck_assert_int_eq(open_calls, 1);
  ck_assert_uint_eq(last_attr.config1, 3);
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_OPEN);
  ck_assert(ev.page != 0);
  ck_assert_uint_eq(rdpmc_calls, 0);
  /* The next read: page (still index 0), then read(2): the next 8 bytes
   * (lock, index), in this machine's byte order. */
  memcpy(&expect, (const char *) &page_template + 8, sizeof expect);
  ck_assert_int_eq(cpucycles_perf_read_fast(&ev, fake_rdpmc, 3), expect);
  ck_assert_int_eq(open_calls, 1);
  cpucycles_perf_close(&ev);
  ck_assert(fd_is_closed(opened_fd(0)));
}
END_TEST

START_TEST(shared_read_refused_falls_back_once)
{
  struct cpucycles_perf_event ev = { 0 };
  long long prev, v;
  int i;
  cpucycles_perf_set_opener(refusing_open);
  prev = cpucycles_perf_read_fast(&ev, fake_rdpmc, 3);
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_FALLBACK);
  ck_assert_uint_eq(last_attr.config1, 3);
  ck_assert_int_gt(prev, 0);
  for (i = 0; i < 100; i++) {
    v = cpucycles_perf_read_fast(&ev, fake_rdpmc, 3);
    ck_assert_int_ge(v, prev);
    prev = v;
  }
  ck_assert_int_eq(open_calls, 1);
  ck_assert_uint_eq(rdpmc_calls, 0);
  ck_assert_int_eq(cpucycles_perf_open_once(&ev, 1, 3), 0); /* not again */
  ck_assert_int_eq(open_calls, 1);
}
END_TEST

START_TEST(setup_fails_when_open_fails)
{
  struct counter_info info;
  int i;
  cpucycles_perf_set_opener(refusing_open);
  for (i = 0; i < PERF_COUNTERS; i++) {
    const struct counter *c = find_counter(perf_counters[i]);
    if (!c) continue;
    open_calls = 0;
    memset(&info, 0, sizeof info);
    ck_assert_int_eq(c->setup(&info), -1);
    ck_assert_int_eq(open_calls, 1);
    /* what cpucycles-info --explain says */
    ck_assert_str_eq(info.refusal, CPUCYCLES_REFUSAL_PERF_OPEN);
    ck_assert_int_eq(info.refusal_errno, EACCES);
    c->release();
    c->release();
    c->atfork_child();
  }
}
END_TEST

/* Every way the kernel refuses an event ends as a refusal of each perf
 * counter with its errno, for cpucycles-info --explain: EACCES and EPERM
 * (perf_event_paranoid 3 or 4, seccomp, a container), ENOENT and
 * EOPNOTSUPP (no such event: a VM without a PMU), EMFILE (out of
 * descriptors).  Only EOPNOTSUPP (and EINVAL) tries the other exclusion
 * combinations. */
START_TEST(setup_records_each_open_errno)
{
  static const int errs[] = { EACCES, EPERM, ENOENT, EOPNOTSUPP, EMFILE,
                              EINVAL };
  struct counter_info info;
  unsigned int e;
  int i;
  cpucycles_perf_set_opener(picky_open);
  refused_combinations = 0xf;
  for (e = 0; e < sizeof errs / sizeof errs[0]; e++) {
    refusal_errno = errs[e];
    for (i = 0; i < PERF_COUNTERS; i++) {
      const struct counter *c = find_counter(perf_counters[i]);
      if (!c) continue;
      open_calls = 0;
      memset(&info, 0, sizeof info);
      ck_assert_int_eq(c->setup(&info), -1);
      ck_assert_str_eq(info.refusal, CPUCYCLES_REFUSAL_PERF_OPEN);
      ck_assert_int_eq(info.refusal_errno, errs[e]);
      ck_assert_int_eq(open_calls, errs[e] == EOPNOTSUPP ? 4
                                   : errs[e] == EINVAL ? 8 : 1);
      c->release();
    }
  }
}
END_TEST

START_TEST(perfevent_reads_releases_and_drops_at_fork)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  if (!c) return;
  cpucycles_perf_set_opener(pipe_open);
  pipe_first_value = 5;
  ck_assert_int_eq(c->setup(&info), 0);
  ck_assert_int_eq(info.kind, COUNTER_PERFEVENT);
  ck_assert_int_eq(info.frequency, 0);
  ck_assert_int_eq(info.only32, 0);
  put_value(1234);
  put_value(99999);
  ck_assert_int_eq(c->read(), 1234);
  ck_assert_int_eq(c->read(), 99999);
  ck_assert_int_eq(open_calls, 1);

  /* atfork_child: the inherited descriptor goes, the next read opens. */
  pipe_first_value = 777;
  c->atfork_child();
  ck_assert(fd_is_closed(opened_fd(0)));
  ck_assert_int_eq(c->read(), 777);
  ck_assert_int_eq(open_calls, 2);
  ck_assert(!fd_is_closed(opened_fd(1)));

  c->release();
  ck_assert(fd_is_closed(opened_fd(1)));
  c->release();
}
END_TEST

START_TEST(perfevent_read_failure_falls_back_monotone)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  long long prev, v;
  int i;
  if (!c) return;
  cpucycles_perf_set_opener(pipe_open);
  pipe_first_value = 1; /* a count that moves: one read in setup */
  ck_assert_int_eq(c->setup(&info), 0);
  /* The pipe is empty now: read(2) fails with EAGAIN. */
  prev = c->read();
  ck_assert_int_gt(prev, 0);
  ck_assert(fd_is_closed(opened_fd(0))); /* given up, not leaked */
  for (i = 0; i < 1000; i++) {
    v = c->read();
    ck_assert_int_ge(v, prev);
    prev = v;
  }
  ck_assert_int_eq(open_calls, 1); /* no retry per read */
  c->release();
}
END_TEST

START_TEST(perfpmc_refuses_without_cap_user_rdpmc)
{
  const struct counter *c = find_counter("amd64-perfpmc");
  struct counter_info info;
  if (!c) return;
  fake_page_template(1, 0, 0);
  cpucycles_perf_set_opener(memfd_open);
  ck_assert_int_eq(c->setup(&info), -1);
  ck_assert_int_eq(open_calls, 1);
  ck_assert(fd_is_closed(opened_fd(0)));
  c->release();
}
END_TEST

START_TEST(perfpmc_index_zero_reads_the_descriptor)
{
  const struct counter *c = find_counter("amd64-perfpmc");
  struct counter_info info;
  if (!c) return;
  /* cap_user_rdpmc but index 0: no rdpmc (it would fault here); read(2)
   * of the memfd returns its bytes in turn: setup takes the first 8
   * (version, compat_version), the read the next 8 (lock, index). */
  fake_page_template(0, 0, 1);
  page_template.version = 42;
  page_template.lock = 5;
  cpucycles_perf_set_opener(memfd_open);
  ck_assert_int_eq(c->setup(&info), 0);
  ck_assert_int_eq(info.kind, COUNTER_ONCORE);
  ck_assert_int_eq(info.frequency, 0);
  ck_assert_int_eq(info.only32, 0);
  ck_assert(fd_has_cloexec(opened_fd(0)));
  ck_assert_int_eq(c->read(), 5);
  c->release();
  ck_assert(fd_is_closed(opened_fd(0)));
  c->release();
}
END_TEST

/* A page-reading perf counter of this build, default-perfevent, and a
 * page at index 0 (the page counter reads read(2) too, no instruction
 * run), each fresh event's read giving the page's first 8 bytes, returned.
 * 0 where the build lacks either counter. */
static unsigned long long two_kinds(const struct counter **paged,
                                    const struct counter **plain)
{
  const char *const pagers[] = { "amd64-perfpmc", "arm64-perfpmc",
                                 "riscv64-perfrdcycle", "riscv32-perfrdcycle" };
  unsigned long long first_word;
  size_t i;
  *paged = 0;
  *plain = find_counter("default-perfevent");
  for (i = 0; i < sizeof pagers / sizeof *pagers && !*paged; i++)
    *paged = find_counter(pagers[i]);
  if (!*paged || !*plain) return 0;
  fake_page_template(0, 0, 1);
  page_template.version = 42;
  memcpy(&first_word, &page_template, sizeof first_word);
  return first_word;
}

/* The perf counters share one event a thread (perf.h; doc/security.md,
 * "Static TLS"): a counter's setup replaces another's event, and a read by
 * a counter of another kind (mapped or not, its config1) closes the event
 * and opens its own, never reading the other's (a page counter with no
 * page would crash). */
START_TEST(perf_counters_share_the_threads_event)
{
  const struct counter *paged, *plain;
  struct counter_info info;
  unsigned long long first_word = two_kinds(&paged, &plain);
  if (!first_word) return;
  cpucycles_perf_set_opener(memfd_open);
  ck_assert_int_eq(paged->setup(&info), 0);
  ck_assert_int_eq(plain->setup(&info), 0);
  ck_assert_int_eq(open_calls, 2);
  ck_assert(fd_is_closed(opened_fd(0))); /* replaced, not kept beside */
  ck_assert_int_eq(paged->read(), (long long) first_word);
  ck_assert_int_eq(open_calls, 3);
  ck_assert(fd_is_closed(opened_fd(1)));
  ck_assert_int_eq(last_attr.config1 != 0, strcmp(paged->name, "arm64-perfpmc") == 0);
  ck_assert_int_eq(plain->read(), (long long) first_word);
  ck_assert_int_eq(open_calls, 4);
  ck_assert(fd_is_closed(opened_fd(2)));
  ck_assert_uint_eq(last_attr.config1, 0);
  plain->read();
  ck_assert_int_eq(open_calls, 4); /* its own event again: no new open */
  paged->release();
  ck_assert(fd_is_closed(opened_fd(3)));
  plain->release();
}
END_TEST

/* A thread refused one kind of event reads the fallback for that kind
 * only: a counter of another kind still opens its own (as the probe's
 * setups do, one after another, in the probing thread). */
START_TEST(perf_counter_refused_leaves_another_kind_its_open)
{
  const struct counter *paged, *plain;
  unsigned long long first_word = two_kinds(&paged, &plain);
  if (!first_word) return;
  cpucycles_perf_set_opener(refusing_open);
  plain->read(); /* refused: this thread's default-perfevent falls back */
  ck_assert_int_eq(open_calls, 1);
  cpucycles_perf_set_opener(memfd_open);
  ck_assert_int_eq(paged->read(), (long long) first_word);
  ck_assert_int_eq(open_calls, 2);
  paged->release();
  ck_assert(fd_is_closed(opened_fd(1)));
}
END_TEST

/* Each perfpmc counter asks for the attr.config1 its kernel wants: arm64's
 * user access (bit 1) and 64-bit counter (bit 0), nothing elsewhere; in
 * setup and when a thread opens its own event on its first read. */
START_TEST(perfpmc_counters_ask_for_their_config1)
{
  static const struct { const char *name; unsigned long long config1; }
    want[] = {
      { "amd64-perfpmc", 0 }, { "amd64-perfpmcff", 0 },
      { "arm64-perfpmc", 3 }, { "riscv64-perfrdcycle", 0 }
    };
  struct counter_info info;
  int i;
  for (i = 0; i < (int) (sizeof want / sizeof want[0]); i++) {
    const struct counter *c = find_counter(want[i].name);
    if (!c) continue;
    /* No user reads in the page: setup opens, looks, refuses (before any
     * instruction, which would fault here). */
    fake_page_template(0, 0, 0);
    cpucycles_perf_set_opener(memfd_open);
    open_calls = 0;
    memset(&last_attr, 0xff, sizeof last_attr);
    ck_assert_int_eq(c->setup(&info), -1);
    ck_assert_int_eq(open_calls, 1);
    ck_assert_msg(last_attr.config1 == want[i].config1, "%s: config1 %llx",
                  want[i].name, (unsigned long long) last_attr.config1);
    ck_assert_uint_eq(last_attr.config, PERF_COUNT_HW_CPU_CYCLES);
    /* The first read in this (now event-less) thread opens again, with
     * the same attributes, and reads the descriptor (index 0). */
    memset(&last_attr, 0xff, sizeof last_attr);
    c->read();
    ck_assert_int_eq(open_calls, 2);
    ck_assert_msg(last_attr.config1 == want[i].config1, "%s: config1 %llx",
                  want[i].name, (unsigned long long) last_attr.config1);
    c->release();
    ck_assert(fd_is_closed(opened_fd(1)));
  }
}
END_TEST

START_TEST(pmcff_refuses_unless_on_fixed_counter_1)
{
  const struct counter *c = find_counter("amd64-perfpmcff");
  struct counter_info info;
  if (!c) return;
  /* On a general-purpose counter (as on AMD): refused before any rdpmc,
   * which would fault on this machine. */
  fake_page_template(2, 0, 1);
  cpucycles_perf_set_opener(memfd_open);
  memset(&info, 0, sizeof info);
  ck_assert_int_eq(c->setup(&info), -1);
  ck_assert_str_eq(info.refusal, CPUCYCLES_REFUSAL_NOT_FIXED);
  ck_assert(fd_is_closed(opened_fd(0)));
  /* On fixed counter 1 but without user rdpmc (sysfs rdpmc 0). */
  page_template.index = (1u << 30 | 1u) + 1u;
  page_template.cap_user_rdpmc = 0;
  ck_assert_int_eq(c->setup(&info), -1);
  ck_assert(fd_is_closed(opened_fd(1)));
  c->release();
}
END_TEST

/* A signal handler that reads while its thread is in the registry (here,
 * inside the open of the thread's first read: a setup's first open is made
 * outside the registry) must not wait for the lock its thread holds: no
 * signal mask guards the registry.  It reads the fallback clock; the open
 * goes on. */
static const struct counter *handler_counter;
static int handler_runs;

static void read_in_handler(int sig)
{
  (void) sig;
  (void) handler_counter->read();
  handler_runs++;
}

static int interrupted_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                            int group_fd, unsigned long flags)
{
  raise(SIGUSR1);
  return pipe_open(attr, pid, cpu, group_fd, flags);
}

START_TEST(signal_handler_reading_during_an_open_does_not_wait)
{
  struct sigaction sa;
  handler_counter = find_counter("default-perfevent");
  if (!handler_counter) return;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = read_in_handler;
  ck_assert_int_eq(sigaction(SIGUSR1, &sa, 0), 0);
  cpucycles_perf_set_opener(interrupted_open);
  pipe_first_value = 11;
  (void) handler_counter->read();
  ck_assert_int_eq(handler_runs, 1);
  put_value(40);
  ck_assert_int_eq(handler_counter->read(), 40); /* the event, opened */
  ck_assert_int_eq(open_calls, 1);
  handler_counter->release();
}
END_TEST

/* ---- a page that offers user reads on a CPU that refuses them ----
 *
 * A hypervisor may show the guest kernel a PMU and still trap the
 * instruction: the page says cap_user_rdpmc 1 with an index, and the read
 * faults.  Setup must not run the instruction (nothing is armed there); it
 * says the reads may fault, and the probe tries them caught and moves on
 * to the next counter. */

static unsigned long long refused_rdpmc(unsigned int counter)
{
  (void) counter;
  fault_segv(); /* as a CPU that refuses the instruction answers */
  return 0;
}

static struct cpucycles_perf_event refused_event;

static long long refused_read(void)
{
  return cpucycles_perf_read_fast(&refused_event, refused_rdpmc, 0);
}

static int refused_setup(struct counter_info *info)
{
  return cpucycles_perf_setup(&refused_event, refused_rdpmc, 0, info);
}

static void refused_release(void) { cpucycles_perf_close(&refused_event); }

static const struct counter refused_counter = {
  "test-refusedrdpmc", refused_read, refused_setup, refused_release, 0,
  COUNTER_ASKS
};

static long long ticking_read(void)
{
  static long long t;
  return t += 1000;
}

static int ticking_setup(struct counter_info *info)
{
  info->kind = COUNTER_ONCORE;
  return 0;
}

static const struct counter ticking_counter = {
  "test-ticking", ticking_read, ticking_setup, 0, 0, COUNTER_ASKS
};

/* The probe with c first and a counter that works second: the second. */
static void probe_passes_over(const struct counter *c)
{
  const struct counter *table[2];
  struct choice best;
  table[0] = c;
  table[1] = &ticking_counter;
  ck_assert_int_eq(cpucycles_select(table, 2, 1000000000LL, 0, 0, 0, &best), 1);
  ck_assert_ptr_eq(best.counter, &ticking_counter);
}

START_TEST(probe_survives_a_page_whose_reads_fault)
{
  struct counter_info info;
  fake_page_template(3, 0, 1);
  cpucycles_perf_set_opener(memfd_open);
  /* setup opens, reads the descriptor, and says what the probe must do */
  memset(&info, 0, sizeof info);
  ck_assert_int_eq(refused_setup(&info), 0);
  ck_assert_int_eq(info.may_fault, 1);
  ck_assert_int_eq(info.kind, COUNTER_ONCORE);
  refused_release();
  probe_passes_over(&refused_counter);
  ck_assert(fd_is_closed(opened_fd(1))); /* the crashed trial released */
}
END_TEST

/* Whether this CPU refuses user RDPMC of fixed counter 1 without a perf
 * event of ours mapped: tried in a child (not under a sanitizer, whose
 * SEGV handler reports the fault). */
#if defined(__x86_64__) && !defined(UNDER_SANITIZER)
static int cpu_refuses_fixed_rdpmc(void)
{
  int status;
  pid_t pid = fork();
  if (pid == 0) {
    unsigned int lo, hi;
    __asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(1u << 30 | 1u));
    _exit(0);
  }
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
#endif

START_TEST(probe_survives_pmcff_where_the_cpu_refuses_rdpmc)
{
  const struct counter *c = find_counter("amd64-perfpmcff");
  struct counter_info info;
  if (!c) return;
  fake_page_template((1u << 30 | 1u) + 1u, 0, 1); /* on fixed counter 1 */
  cpucycles_perf_set_opener(memfd_open);
  memset(&info, 0, sizeof info);
  ck_assert_int_eq(c->setup(&info), 0); /* no instruction run here */
  ck_assert_int_eq(info.may_fault, 1);
  c->release();
#if defined(__x86_64__) && !defined(UNDER_SANITIZER)
  if (cpu_refuses_fixed_rdpmc()) probe_passes_over(c);
#elif defined(__x86_64__)
  /* the runtime's own SEGV handler reports the deliberate fault of the
   * rdpmc trial and aborts: left to the plain run */
  fprintf(stderr, "the CPU's refused RDPMC: not tried under a sanitizer\n");
#endif
}
END_TEST

/* ---- descriptors the program closed, and numbers it reused ---- */

/* A clock that stands still unless a test moves it (the fallback's, and
 * the one a stopped count goes on with: lib/perf.c). */
static struct timespec fake_now;
static int fake_clock(clockid_t clock, struct timespec *t)
{
  (void) clock;
  *t = fake_now;
  return 0;
}

/* The identity seam: PERF_EVENT_IOC_ID answers a stand-in event's inode
 * (a pipe's or a memfd's, one per event) as the kernel answers an event's
 * id, and fails on a closed number (EBADF) as the kernel does; a file of
 * the program's gives another inode.  Counts the other requests. */
static int id_queries, other_ioctls;

static int id_ioctl(int fd, unsigned long request, void *arg)
{
  struct stat st;
  if (request != PERF_EVENT_IOC_ID) {
    other_ioctls++;
    return 0;
  }
  id_queries++;
  if (fstat(fd, &st) != 0) return -1;
  *(unsigned long long *) arg = (unsigned long long) st.st_ino + 1;
  return 0;
}

#define PROGRAM_DATA "the program's own data, which the library must not read"

/* What a daemon does after close_range(3, ~0U): its next file gets the
 * event's old number.  A regular file (read(2) of it would succeed), at
 * offset 0. */
static int program_file_at(int fd)
{
  char path[512];
  int tmp;
  snprintf(path, sizeof path, "%s/program-file-XXXXXX",
           getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  tmp = mkstemp(path);
  ck_assert_int_ge(tmp, 0);
  unlink(path);
  ck_assert_int_eq(write(tmp, PROGRAM_DATA, sizeof PROGRAM_DATA),
                   (ssize_t) sizeof PROGRAM_DATA);
  ck_assert_int_eq(lseek(tmp, 0, SEEK_SET), 0);
  if (tmp != fd) { /* (the lowest free number may be fd itself) */
    ck_assert_int_eq(dup2(tmp, fd), fd);
    close(tmp);
  }
  return fd;
}

/* What a daemon does with close_range(3, ~0U) or closefrom(3): the
 * event's number closed, then a file of its own opened, which takes the
 * lowest free number: the event's. */
static int program_file_after_closing(int event_fd)
{
  ck_assert_int_eq(close(event_fd), 0);
  return program_file_at(event_fd);
}

/* The program's file is open, at offset 0, with its data. */
static void program_file_untouched(int fd)
{
  char buf[sizeof PROGRAM_DATA];
  ck_assert_msg(!fd_is_closed(fd), "the program's file was closed");
  ck_assert_msg(lseek(fd, 0, SEEK_CUR) == 0, "the program's file was read: offset %ld",
                (long) lseek(fd, 0, SEEK_CUR));
  ck_assert_int_eq(pread(fd, buf, sizeof buf, 0), (ssize_t) sizeof buf);
  ck_assert(memcmp(buf, PROGRAM_DATA, sizeof buf) == 0);
}

/* default-perfevent reads with read(2), the event's identity asked before
 * each.  After the program closed the event's descriptor and opened a
 * file at its number, no read touches the file, and the thread counts on
 * with a new event, from where it was. */
START_TEST(perfevent_never_reads_a_reused_descriptor)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  long long v, prev;
  int fd, i;
  if (!c) return;
  cpucycles_perf_set_opener(pipe_open);
  cpucycles_perf_set_ioctl(id_ioctl);
  pipe_first_value = 11;
  ck_assert_int_eq(c->setup(&info), 0);
  put_value(100);
  put_value(200);
  i = id_queries;
  ck_assert_int_eq(c->read(), 100);
  ck_assert_int_eq(c->read(), 200);
  ck_assert_int_eq(id_queries, i + 2); /* one question a read */
  fd = program_file_after_closing(opened_fd(0));
  /* the new event's first reads */
  pipe_values[0] = 5;
  pipe_values[1] = 6;
  pipe_values[2] = 9;
  pipe_nvalues = 3;
  prev = 200;
  for (i = 0; i < 3; i++) {
    v = c->read();
    ck_assert_int_ge(v, prev);
    prev = v;
  }
  ck_assert_int_eq(prev, 200 + 9 - 5); /* from where it was, then its own steps */
  ck_assert_int_eq(open_calls, 2);
  program_file_untouched(fd);
  c->release();
  program_file_untouched(fd); /* not closed as if it were the event */
  ck_assert(fd_is_closed(opened_fd(1)));
  close(fd);
}
END_TEST

/* Closed and not reused (EBADF): a new event, counting on. */
START_TEST(perfevent_counts_on_after_its_descriptor_is_closed)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  if (!c) return;
  cpucycles_perf_set_opener(pipe_open);
  cpucycles_perf_set_ioctl(id_ioctl);
  pipe_first_value = 11;
  ck_assert_int_eq(c->setup(&info), 0);
  put_value(300);
  ck_assert_int_eq(c->read(), 300);
  close(opened_fd(0));
  pipe_values[0] = 40;
  pipe_values[1] = 50;
  pipe_nvalues = 2;
  ck_assert_int_eq(c->read(), 300);
  ck_assert_int_eq(c->read(), 310);
  ck_assert_int_eq(open_calls, 2);
  c->release();
}
END_TEST

/* A page-reading counter: its mapping keeps the event, so the thread reads
 * on through the page; off the hardware (index 0), where it used read(2),
 * the page's offset, without a look at the program's file. */
START_TEST(page_counter_never_reads_a_reused_descriptor)
{
  struct cpucycles_perf_event ev = { 0 };
  struct counter_info info;
  struct perf_event_mmap_page pg;
  int kernel, fd;
  fake_page_template(3, -1000000, 1);
  cpucycles_perf_set_opener(memfd_open);
  cpucycles_perf_set_ioctl(id_ioctl);
  cpucycles_perf_set_clock(fake_clock); /* still: the count alone */
  rdpmc_result = 1000000 + 77;
  ck_assert_int_eq(cpucycles_perf_setup(&ev, fake_rdpmc, 0, &info), 0);
  kernel = dup(ev.fd); /* the kernel's side of the page, for the test */
  ck_assert_int_ge(kernel, 0);
  fd = program_file_at(ev.fd);
  rdpmc_result = 1000000 + 500;
  ck_assert_int_eq(cpucycles_perf_read_fast(&ev, fake_rdpmc, 0), 500);
  /* multiplexed out: index 0, the whole count in the offset */
  ck_assert_int_eq(pread(kernel, &pg, sizeof pg, 0), (ssize_t) sizeof pg);
  pg.lock += 2;
  pg.index = 0;
  pg.offset = 777;
  ck_assert_int_eq(pwrite(kernel, &pg, sizeof pg, 0), (ssize_t) sizeof pg);
  ck_assert_int_eq(cpucycles_perf_read_fast(&ev, fake_rdpmc, 0), 777);
  ck_assert_int_eq(cpucycles_perf_read_fast(&ev, fake_rdpmc, 0), 777);
  program_file_untouched(fd);
  /* back on a counter: the same event, through the page */
  pg.lock += 2;
  pg.index = 3;
  pg.offset = -1000000;
  ck_assert_int_eq(pwrite(kernel, &pg, sizeof pg, 0), (ssize_t) sizeof pg);
  rdpmc_result = 1000000 + 900;
  ck_assert_int_eq(cpucycles_perf_read_fast(&ev, fake_rdpmc, 0), 900);
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_OPEN);
  ck_assert_int_eq(open_calls, 1);
  cpucycles_perf_close(&ev);
  program_file_untouched(fd);
  close(fd);
  close(kernel);
}
END_TEST

/* fork's child handler closes every inherited event descriptor, but not a
 * number the program reused before it forked. */
START_TEST(fork_child_leaves_a_reused_descriptor_open)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  int fd, status;
  pid_t pid;
  if (!c) return;
  cpucycles_perf_set_opener(pipe_open);
  cpucycles_perf_set_ioctl(id_ioctl);
  pipe_first_value = 11;
  ck_assert_int_eq(c->setup(&info), 0);
  fd = program_file_at(opened_fd(0));
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    c->atfork_child();
    _exit(fd_is_closed(fd) ? 1 : lseek(fd, 0, SEEK_CUR) != 0 ? 2 : 0);
  }
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  ck_assert_msg(WEXITSTATUS(status) == 0, "the child's copy of the program's file: %s",
                WEXITSTATUS(status) == 1 ? "closed" : "read");
  c->release();
  program_file_untouched(fd);
  close(fd);
}
END_TEST

/* A thread's exit closes its events, not a file the program put at one's
 * number meanwhile. */
static volatile int reused_thread_read, reused_thread_may_exit;

static void *read_then_wait(void *arg)
{
  const struct counter *c = arg;
  (void) c->read();
  __atomic_store_n(&reused_thread_read, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&reused_thread_may_exit, __ATOMIC_ACQUIRE)) sched_yield();
  return 0;
}

START_TEST(thread_exit_leaves_a_reused_descriptor_open)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  pthread_t th;
  int fd;
  if (!c) return;
  cpucycles_perf_set_opener(pipe_open);
  cpucycles_perf_set_ioctl(id_ioctl);
  pipe_first_value = 11;
  ck_assert_int_eq(c->setup(&info), 0);
  ck_assert_int_eq(pthread_create(&th, 0, read_then_wait, (void *) c), 0);
  while (!__atomic_load_n(&reused_thread_read, __ATOMIC_ACQUIRE)) sched_yield();
  ck_assert_int_eq(open_calls, 2);
  fd = program_file_at(opened_fd(1));
  __atomic_store_n(&reused_thread_may_exit, 1, __ATOMIC_RELEASE);
  ck_assert_int_eq(pthread_join(th, 0), 0);
  program_file_untouched(fd);
  c->release();
  close(fd);
}
END_TEST

/* ---- threads ---- */

struct thread_reads {
  const struct counter *counter;
  long long first;
  int monotone;
};

static void *read_in_thread(void *arg)
{
  struct thread_reads *t = arg;
  long long prev, v;
  int i;
  t->first = prev = t->counter->read();
  t->monotone = 1;
  for (i = 0; i < 1000; i++) {
    v = t->counter->read();
    if (v < prev) t->monotone = 0;
    prev = v;
  }
  return 0;
}

static void *read_once_in_thread(void *arg)
{
  struct thread_reads *t = arg;
  t->first = t->counter->read();
  return 0;
}

START_TEST(thread_opens_its_own_event_closed_at_exit)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  struct thread_reads t;
  pthread_t th;
  if (!c) return;
  cpucycles_perf_set_opener(pipe_open);
  pipe_first_value = 11;
  ck_assert_int_eq(c->setup(&info), 0);
  pipe_first_value = 4242;
  t.counter = c;
  /* One read: a second would find the pipe empty, and the counter would
   * give up the descriptor by itself. */
  ck_assert_int_eq(pthread_create(&th, 0, read_once_in_thread, &t), 0);
  ck_assert_int_eq(pthread_join(th, 0), 0);
  ck_assert_int_eq(open_calls, 2);
  ck_assert_int_eq(t.first, 4242); /* its own descriptor, not ours */
  ck_assert(fd_is_closed(opened_fd(1))); /* closed as the thread exited */
  ck_assert(!fd_is_closed(opened_fd(0))); /* ours stays */
  c->release();
  ck_assert(fd_is_closed(opened_fd(0)));
}
END_TEST

/* A count stuck at 0 (Graviton 3) is not the probe's alone: a second
 * thread's own event, opened on its first read, gets the remedy too
 * (disable, reset, enable), and then counts. */
START_TEST(thread_event_stuck_at_zero_counts_after_the_remedy)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  struct thread_reads t;
  pthread_t th;
  if (!c) return;
  cpucycles_perf_set_opener(pipe_open);
  pipe_first_value = 11; /* the probe's event counts */
  ck_assert_int_eq(c->setup(&info), 0);
  cpucycles_perf_set_ioctl(fake_ioctl);
  enable_revives = 1;
  pipe_values[0] = 0; /* the thread's: 0, 0, then 123 once enabled again */
  pipe_values[1] = 0;
  pipe_nvalues = 2;
  t.counter = c;
  ck_assert_int_eq(pthread_create(&th, 0, read_once_in_thread, &t), 0);
  ck_assert_int_eq(pthread_join(th, 0), 0);
  ck_assert_int_eq(open_calls, 2);
  ck_assert_int_eq(t.first, 123); /* its own event, counting */
  ck_assert_int_eq(ioctl_calls, 3);
  ck_assert_uint_eq(ioctl_requests[0], PERF_EVENT_IOC_DISABLE);
  ck_assert_uint_eq(ioctl_requests[1], PERF_EVENT_IOC_RESET);
  ck_assert_uint_eq(ioctl_requests[2], PERF_EVENT_IOC_ENABLE);
  c->release();
}
END_TEST

/* Two reads in a thread: the first opens. */
static void *read_twice_in_thread(void *arg)
{
  struct thread_reads *t = arg;
  t->first = t->counter->read();
  t->monotone = t->counter->read() == 5000; /* the pipe's second value */
  return 0;
}

/* An event that counts from the start costs its thread nothing more: one
 * read(2) (the first read's value), no ioctl. */
START_TEST(thread_event_counting_from_the_start_gets_no_ioctl)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  struct thread_reads t;
  pthread_t th;
  if (!c) return;
  cpucycles_perf_set_opener(pipe_open);
  pipe_first_value = 11;
  ck_assert_int_eq(c->setup(&info), 0);
  cpucycles_perf_set_ioctl(fake_ioctl);
  pipe_values[0] = 4242;
  pipe_values[1] = 5000;
  pipe_nvalues = 2;
  t.counter = c;
  ck_assert_int_eq(pthread_create(&th, 0, read_twice_in_thread, &t), 0);
  ck_assert_int_eq(pthread_join(th, 0), 0);
  ck_assert_int_eq(t.first, 4242);
  ck_assert_msg(t.monotone, "a second read(2) at the first read took 5000");
  ck_assert_int_eq(ioctl_calls, 0);
  c->release();
}
END_TEST

/* A thread whose event stays at 0 even after the remedy reads the clock,
 * not 0. */
START_TEST(thread_event_stuck_for_good_reads_the_clock)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  struct thread_reads t;
  pthread_t th;
  if (!c) return;
  cpucycles_perf_set_opener(pipe_open);
  pipe_first_value = 11;
  ck_assert_int_eq(c->setup(&info), 0);
  cpucycles_perf_set_ioctl(fake_ioctl);
  enable_revives = 0; /* ENABLE puts another 0 */
  pipe_values[0] = 0;
  pipe_values[1] = 0;
  pipe_nvalues = 2;
  t.counter = c;
  ck_assert_int_eq(pthread_create(&th, 0, read_in_thread, &t), 0);
  ck_assert_int_eq(pthread_join(th, 0), 0);
  ck_assert_int_eq(ioctl_calls, 3);
  ck_assert_int_gt(t.first, 0); /* the clock */
  ck_assert(t.monotone);
  ck_assert_int_eq(open_calls, 2); /* not tried again on each read */
  ck_assert(fd_is_closed(opened_fd(1)));
  c->release();
}
END_TEST

START_TEST(thread_without_event_reads_monotone_fallback)
{
  struct thread_reads t;
  pthread_t th;
  int i;
  cpucycles_perf_set_opener(refusing_open);
  for (i = 0; i < PERF_COUNTERS; i++) {
    t.counter = find_counter(perf_counters[i]);
    if (!t.counter) continue;
    open_calls = 0;
    ck_assert_int_eq(pthread_create(&th, 0, read_in_thread, &t), 0);
    ck_assert_int_eq(pthread_join(th, 0), 0);
    ck_assert_msg(t.monotone, "%s", perf_counters[i]);
    ck_assert_int_gt(t.first, 0);
    ck_assert_int_eq(open_calls, 1); /* tried once, not on every read */
  }
}
END_TEST

/* ---- no heap in a thread's first read, whatever keys the program made ----
 *
 * glibc's own count of the bytes in use (mallinfo2, every arena), before
 * and after: not an interposed allocator, which a static link (the cross
 * builds) refuses.  Without a sanitizer, which owns malloc. */
#if defined(__GLIBC__) && !defined(UNDER_SANITIZER) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define WATCHING_HEAP 1

static size_t heap_in_use(void)
{
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

#define PROGRAM_KEYS 40
static pthread_key_t program_keys[PROGRAM_KEYS];
static size_t heap_grew;

/* glibc's own allocation for a key past its 32 inline ones: proof that
 * the watch sees what glibc allocates inside pthread_setspecific(). */
static void *set_last_program_key(void *arg)
{
  size_t before = heap_in_use();
  pthread_setspecific(program_keys[PROGRAM_KEYS - 1], arg);
  heap_grew = heap_in_use() - before;
  return 0;
}

static void *watched_first_read(void *arg)
{
  const struct counter *c = arg;
  size_t before = heap_in_use();
  (void) c->read();
  heap_grew = heap_in_use() - before;
  return 0;
}
#endif

/* A program that made 40 pthread keys before the library's first use:
 * a thread's first read (its event opened and registered for closing at
 * thread exit) allocates nothing. */
START_TEST(no_heap_in_a_first_read_after_40_program_keys)
{
#ifdef WATCHING_HEAP
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  pthread_t th;
  int i;
  if (!c) return;
  if (RUNNING_ON_VALGRIND) {
    fprintf(stderr, "under valgrind: heap counted by valgrind, not here\n");
    return;
  }
  for (i = 0; i < PROGRAM_KEYS; i++)
    ck_assert_int_eq(pthread_key_create(&program_keys[i], 0), 0);
  ck_assert_int_eq(pthread_create(&th, 0, set_last_program_key, &info), 0);
  ck_assert_int_eq(pthread_join(th, 0), 0);
  ck_assert_msg(heap_grew > 0, "the watch missed glibc's calloc for key %u",
                (unsigned) program_keys[PROGRAM_KEYS - 1]);

  cpucycles_perf_set_opener(pipe_open);
  pipe_first_value = 11;
  ck_assert_int_eq(c->setup(&info), 0);
  pipe_first_value = 12;
  ck_assert_int_eq(pthread_create(&th, 0, watched_first_read, (void *) c), 0);
  ck_assert_int_eq(pthread_join(th, 0), 0);
  ck_assert_int_eq(open_calls, 2);
  ck_assert_msg(heap_grew == 0, "%zu bytes of heap in a thread's first read", heap_grew);
  c->release();
#endif
}
END_TEST

/* The fallback clock through the clock seam: cycles since the second of
 * its first read, at the estimated rate; setting the rate reads no clock. */

START_TEST(fallback_counts_cycles_at_the_estimated_rate)
{
  cpucycles_perf_set_clock(fake_clock);
  fake_now.tv_sec = 99;
  cpucycles_perf_set_persecond(3000000000LL);
  fake_now.tv_sec = 100;
  fake_now.tv_nsec = 250000000;
  ck_assert_int_eq(cpucycles_perf_fallback(), 750000000LL);
  fake_now.tv_sec = 102;
  fake_now.tv_nsec = 500000000;
  ck_assert_int_eq(cpucycles_perf_fallback(), 2 * 3000000000LL + 1500000000LL);
  cpucycles_perf_set_persecond(0); /* ignored: the rate stays */
  ck_assert_int_eq(cpucycles_perf_fallback(), 7500000000LL);
  fake_now.tv_sec = 103;
  ck_assert_int_eq(cpucycles_perf_fallback(), 10500000000LL);
}
END_TEST

/* A time namespace offsets CLOCK_MONOTONIC by up to centuries: seconds
 * times the frequency must not overflow.  Through the seam... */
START_TEST(fallback_survives_a_huge_clock_offset)
{
  long long a, b;
  cpucycles_perf_set_clock(fake_clock);
  /* 285 years; where time_t has 32 bits, 63 (times 5 GHz, past 2^63 too) */
  fake_now.tv_sec = (time_t) (sizeof (time_t) >= 8 ? 9000000000LL : 2000000000LL);
  fake_now.tv_nsec = 0;
  cpucycles_perf_set_persecond(5000000000LL);
  a = cpucycles_perf_fallback();
  ck_assert_int_eq(a, 0);
  fake_now.tv_sec += 60;
  fake_now.tv_nsec = 999999999;
  b = cpucycles_perf_fallback();
  ck_assert_int_ge(b, 60 * 5000000000LL);
  ck_assert_int_le(b, 61 * 5000000000LL);
}
END_TEST

/* ... and in a real time namespace (unprivileged, through a user
 * namespace), where the kernel allows one. */
START_TEST(fallback_in_a_time_namespace)
{
  pid_t pid;
  int status;

  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    const char *offset = "monotonic 4000000000 0\n";
    const long long offset_seconds = 4000000000LL; /* past a 32-bit time_t */
    int fd, code = 0;
    pid_t inner;
    if (unshare(CLONE_NEWUSER | CLONE_NEWTIME) != 0) _exit(77);
    fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
    if (fd < 0) _exit(77);
    if (write(fd, offset, strlen(offset)) != (ssize_t) strlen(offset)) _exit(77);
    close(fd);
    inner = fork(); /* the new namespace is the children's */
    if (inner < 0) _exit(3);
    if (inner == 0) {
      struct timespec t;
      long long a, b;
      if (clock_gettime(CLOCK_MONOTONIC, &t) != 0 || t.tv_sec < offset_seconds) _exit(77);
      cpucycles_perf_set_persecond(3000000000LL);
      a = cpucycles_perf_fallback();
      b = cpucycles_perf_fallback();
      if (a < 0 || b < a) _exit(1);
      if (b > 3000000000LL * 3600) _exit(2); /* an hour since the base, at most */
      _exit(0);
    }
    while (waitpid(inner, &status, 0) < 0) if (errno != EINTR) _exit(4);
    if (WIFEXITED(status)) code = WEXITSTATUS(status); else code = 5;
    _exit(code);
  }
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) {
    fprintf(stderr, "no unprivileged time namespace here: not run\n");
    return;
  }
  ck_assert_msg(WEXITSTATUS(status) == 0, "fallback in a time namespace: code %d",
                WEXITSTATUS(status));
}
END_TEST

/* ---- every thread's events closed in a child after fork ---- */

#define FORK_THREADS 6
static volatile int threads_opened, threads_may_exit;

static void *open_and_wait(void *arg)
{
  const struct counter *c = arg;
  c->read(); /* opens this thread's event */
  __atomic_add_fetch(&threads_opened, 1, __ATOMIC_ACQ_REL);
  while (!__atomic_load_n(&threads_may_exit, __ATOMIC_ACQUIRE)) sched_yield();
  return 0;
}

/* ---- the ceiling ---- */

/* A thread-safe stand-in event: an 8-byte memfd holding a count of 1 for
 * read(2) (an event whose first reads stay at 0 would be given up).
 * Notes the highest number the library's events take. */
#define CEILING_FDS 65536
static int ceiling_opens, ceiling_max_fd = -1;

static int ceiling_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                        int group_fd, unsigned long flags)
{
  long long one = 1;
  int fd, max;
  (void) attr; (void) pid; (void) cpu; (void) group_fd;
  fd = memfd_create("fake-perf-event",
                    (flags & PERF_FLAG_FD_CLOEXEC) ? MFD_CLOEXEC : 0);
  if (fd < 0) return -1;
  if (pwrite(fd, &one, 8, 0) != 8) abort();
  __atomic_add_fetch(&ceiling_opens, 1, __ATOMIC_SEQ_CST);
  max = __atomic_load_n(&ceiling_max_fd, __ATOMIC_SEQ_CST);
  while (fd > max &&
         !__atomic_compare_exchange_n(&ceiling_max_fd, &max, fd, 0,
                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) { }
  return fd;
}

/* Stand-in events still open. */
static int ceiling_live(void)
{
  char path[64], link[64];
  int fd, n = 0;
  ssize_t len;
  for (fd = 0; fd < CEILING_FDS; fd++) {
    if (fcntl(fd, F_GETFD) < 0) continue;
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    len = readlink(path, link, sizeof link - 1);
    if (len < 0) continue;
    link[len] = 0;
    if (strncmp(link, "/memfd:fake-perf-event", 22) == 0) n++;
  }
  return n;
}

static const struct counter *ceiling_counter;
static pthread_barrier_t ceiling_barrier;

static void *read_once(void *arg)
{
  (void) arg;
  (void) ceiling_counter->read();
  return 0;
}

static void *read_and_wait(void *arg)
{
  (void) arg;
  (void) ceiling_counter->read();
  pthread_barrier_wait(&ceiling_barrier); /* all have read */
  pthread_barrier_wait(&ceiling_barrier); /* the test has counted */
  return 0;
}

/* Many short threads, as in a program that calls cpucycles() once in each
 * of 10,000 threads: each holds one descriptor while it lives, none is
 * left at the end, and the descriptors in use never go beyond the threads
 * alive at once (here 20 at a time, 2000 in all). */
START_TEST(ceiling_one_descriptor_per_live_thread)
{
  enum { BATCH = 20, ROUNDS = 100 };
  pthread_t t[BATCH];
  int base, r, i;
  ceiling_counter = find_counter("default-perfevent");
  if (!ceiling_counter) return;
  cpucycles_perf_set_opener(ceiling_open);
  base = dup(0); /* the lowest free number */
  close(base);
  for (r = 0; r < ROUNDS; r++) {
    for (i = 0; i < BATCH; i++)
      ck_assert_int_eq(pthread_create(&t[i], 0, read_once, 0), 0);
    for (i = 0; i < BATCH; i++) pthread_join(t[i], 0);
  }
  ck_assert_int_eq(ceiling_opens, BATCH * ROUNDS); /* one per thread */
  ck_assert_int_eq(ceiling_live(), 0);             /* none left */
  /* the peak: events take the lowest free number from base up, so a
   * leak would push the highest far past base + BATCH */
  ck_assert_int_lt(ceiling_max_fd, base + BATCH + 8);
}
END_TEST

/* Threads alive at once hold at most a quarter of the soft descriptor
 * limit; the others read the clock-based fallback, and the program keeps
 * the rest. */
START_TEST(ceiling_a_quarter_of_the_descriptor_limit)
{
  enum { THREADS = 64 };
  pthread_t t[THREADS];
  struct rlimit rl;
  int i, fd;
  ceiling_counter = find_counter("default-perfevent");
  if (!ceiling_counter) return;
  ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
  ck_assert(rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= 128);
  rl.rlim_cur = 128; /* a ceiling of 32 events */
  ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
  cpucycles_perf_set_opener(ceiling_open);
  ck_assert_int_eq(pthread_barrier_init(&ceiling_barrier, 0, THREADS + 1), 0);
  for (i = 0; i < THREADS; i++)
    ck_assert_int_eq(pthread_create(&t[i], 0, read_and_wait, 0), 0);
  pthread_barrier_wait(&ceiling_barrier);
  ck_assert_int_eq(ceiling_opens, 32);
  ck_assert_int_eq(ceiling_live(), 32);
  fd = dup(0); /* the program still has descriptors */
  ck_assert_int_ge(fd, 0);
  close(fd);
  pthread_barrier_wait(&ceiling_barrier);
  for (i = 0; i < THREADS; i++) pthread_join(t[i], 0);
  ck_assert_int_eq(ceiling_live(), 0);
  pthread_barrier_destroy(&ceiling_barrier);
}
END_TEST

START_TEST(fork_child_closes_every_threads_events)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  pthread_t th[FORK_THREADS];
  pid_t pid;
  int i, status;

  if (!c) return;
  cpucycles_perf_set_opener(pipe_open);
  pipe_first_value = 7;
  ck_assert_int_eq(c->setup(&info), 0);
  /* one at a time: the opener's notes are not thread-safe */
  for (i = 0; i < FORK_THREADS; i++) {
    ck_assert_int_eq(pthread_create(&th[i], 0, open_and_wait, (void *) c), 0);
    while (__atomic_load_n(&threads_opened, __ATOMIC_ACQUIRE) != i + 1) sched_yield();
  }
  ck_assert_int_eq(open_calls, FORK_THREADS + 1);

  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int code = 0;
    c->atfork_child();
    for (i = 0; i <= FORK_THREADS; i++)
      if (!fd_is_closed(opened_fd(i))) code |= 1 << i;
    _exit(code);
  }
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  ck_assert_msg(WEXITSTATUS(status) == 0,
                "descriptors left open in the child (bit i: opened_fd(i)): %#x",
                WEXITSTATUS(status));
  /* The parent's are all still there. */
  for (i = 0; i <= FORK_THREADS; i++) ck_assert(!fd_is_closed(opened_fd(i)));
  __atomic_store_n(&threads_may_exit, 1, __ATOMIC_RELEASE);
  for (i = 0; i < FORK_THREADS; i++) ck_assert_int_eq(pthread_join(th[i], 0), 0);
  for (i = 1; i <= FORK_THREADS; i++) ck_assert(fd_is_closed(opened_fd(i)));
  c->release();
}
END_TEST

/* ---- fork, with real software events ---- */

START_TEST(fork_child_counts_with_its_own_event)
{
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  long long a, b;
  int status, parent_fd;
  pid_t pid;
  if (!c || !software_events_work()) return;
  cpucycles_perf_set_opener(software_open);
  ck_assert_int_eq(c->setup(&info), 0);
  parent_fd = opened_fd(0);
  ck_assert(fd_has_cloexec(parent_fd)); /* the kernel honoured the flag */
  a = c->read();
  b = c->read();
  ck_assert_int_ge(b, a);

  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int code = 0;
    c->atfork_child();
    if (!fd_is_closed(parent_fd)) code |= 1;
    a = c->read();
    if (open_calls != 2) code |= 2;
    if (open_calls >= 2 && !fd_has_cloexec(opened_fd(1))) code |= 4;
    b = c->read();
    if (b < a) code |= 8;
    c->release();
    _exit(code);
  }
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 0);
  /* The parent's event is untouched by the child. */
  ck_assert(!fd_is_closed(parent_fd));
  ck_assert_int_ge(c->read(), b);
  c->release();
}
END_TEST

/* ---- a child made without the fork handlers: _Fork() ---- */

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
#define HAVE_FORK_WITHOUT_HANDLERS 1

static struct cpucycles_perf_event forked_event; /* a page counter's */

/* The child of _Fork(): the fork handlers (here, a test that links the
 * library's internals, there are none to run anyway) do not run.  Its
 * first read must not use the parent's event: neither its page, which
 * Linux does not map into a child (a crash), nor its descriptor (the
 * parent's count).  It gets an event of its own.  A real per-thread event
 * (task clock), so that the page is the kernel's; exit status: bit 0 the
 * child read nothing of its own (no new event), 1 the parent's descriptor
 * is still open in the child, 2 its reads went backwards. */
/* The event id at fd (0: none). */
static unsigned long long id_at(int fd)
{
  unsigned long long id = 0;
  if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0) return 0;
  return id;
}

static int child_of_fork_without_handlers(const struct counter *c, int parent_fd)
{
  unsigned long long parent_id = id_at(parent_fd);
  pid_t pid;
  int status;

  ck_assert(parent_id != 0);
  pid = _Fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int code = 0;
    long long a, b;
    a = c ? c->read() : cpucycles_perf_read_fast(&forked_event, fake_rdpmc, 0);
    b = c ? c->read() : cpucycles_perf_read_fast(&forked_event, fake_rdpmc, 0);
    if (open_calls != 2) code |= 1;
    if (id_at(parent_fd) == parent_id) code |= 2; /* (its number may be the new event's) */
    if (b < a) code |= 4;
    _exit(code);
  }
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status), "the child of _Fork() died of signal %d",
                WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return WEXITSTATUS(status);
}
#endif

START_TEST(fork_without_handlers_page_counter_opens_its_own)
{
#ifdef HAVE_FORK_WITHOUT_HANDLERS
  struct counter_info info;
  int code;
  if (!software_events_work()) return;
  cpucycles_perf_set_opener(software_open);
  /* a page counter's setup needs user reads; the software event's page
   * has none, so open it as a thread's first read does */
  ck_assert_int_eq(cpucycles_perf_open(&forked_event, 1, 0), 0);
  ck_assert(forked_event.page != 0);
  (void) info;
  (void) cpucycles_perf_read_fast(&forked_event, fake_rdpmc, 0);
  code = child_of_fork_without_handlers(0, opened_fd(0));
  ck_assert_msg(code == 0, "child: %s%s%s", code & 1 ? "no event of its own; " : "",
                code & 2 ? "the parent's descriptor open; " : "",
                code & 4 ? "backwards" : "");
  /* the parent's event is untouched */
  ck_assert(!fd_is_closed(opened_fd(0)));
  ck_assert_int_eq(forked_event.state, CPUCYCLES_PERF_OPEN);
  (void) cpucycles_perf_read_fast(&forked_event, fake_rdpmc, 0);
  cpucycles_perf_close(&forked_event);
#endif
}
END_TEST

START_TEST(fork_without_handlers_perfevent_opens_its_own)
{
#ifdef HAVE_FORK_WITHOUT_HANDLERS
  const struct counter *c = find_counter("default-perfevent");
  struct counter_info info;
  int code;
  if (!c || !software_events_work()) return;
  cpucycles_perf_set_opener(software_open);
  ck_assert_int_eq(c->setup(&info), 0);
  (void) c->read();
  code = child_of_fork_without_handlers(c, opened_fd(0));
  ck_assert_msg(code == 0, "child: %s%s%s", code & 1 ? "no event of its own; " : "",
                code & 2 ? "the parent's descriptor open; " : "",
                code & 4 ? "backwards" : "");
  ck_assert(!fd_is_closed(opened_fd(0)));
  (void) c->read();
  c->release();
#endif
}
END_TEST

/* ---- hybrid CPUs: the core PMUs, and one event on each ---- */

/* A fake sysfs tree, under a temporary directory: tests plant
 * sys/bus/event_source/devices/PMU/FILE in it. */
static char tree[512];

static void remove_tree(void)
{
  if (tree[0]) fixture_remove(tree);
}

/* A new, empty tree (the previous one, if any, removed), removed at exit. */
static void make_tree(void)
{
  if (tree[0]) remove_tree();
  else atexit(remove_tree);
  snprintf(tree, sizeof tree, "%s/cpucycles-test-pmu-XXXXXX",
           getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  ck_assert(mkdtemp(tree) != 0);
}

/* Write text to TREE/sys/bus/event_source/devices/path, making the
 * directories on the way. */
static void plant(const char *path, const char *text)
{
  char rel[512];
  snprintf(rel, sizeof rel, "/sys/bus/event_source/devices/%s", path);
  fixture_put(tree, rel, text);
}

/* A core PMU as Linux describes it: type, cpus, and its cycles event. */
static void plant_core_pmu(const char *name, const char *type, const char *cpus,
                           const char *cycles_file, const char *cycles,
                           const char *event_format)
{
  char path[256];
  snprintf(path, sizeof path, "%s/type", name);
  plant(path, type);
  snprintf(path, sizeof path, "%s/cpus", name);
  plant(path, cpus);
  if (cycles_file) {
    snprintf(path, sizeof path, "%s/events/%s", name, cycles_file);
    plant(path, cycles);
    snprintf(path, sizeof path, "%s/format/event", name);
    plant(path, event_format);
  }
}

/* An Intel hybrid CPU (Alder Lake), with the PMUs that are not core PMUs
 * beside it: cpumask instead of cpus, or neither. */
static void plant_alder_lake(void)
{
  make_tree();
  plant_core_pmu("cpu_core", "4\n", "0-15\n", "cpu-cycles", "event=0x3c\n",
                 "config:0-7\n");
  plant("cpu_core/format/umask", "config:8-15\n");
  plant_core_pmu("cpu_atom", "10\n", "16-23\n", "cpu-cycles", "event=0x3c\n",
                 "config:0-7\n");
  plant("software/type", "1\n");
  plant("tracepoint/type", "2\n");
  plant("uncore_imc_free_running_0/type", "13\n");
  plant("uncore_imc_free_running_0/cpumask", "0\n");
  plant("power/type", "11\n");
  plant("power/cpumask", "0\n");
  plant("msr/type", "12\n");
  /* a PMU whose CPUs are all offline */
  plant("cpu_lowpower/type", "14\n");
  plant("cpu_lowpower/cpus", "\n");
}

START_TEST(pmus_are_the_ones_with_type_and_cpus)
{
  struct cpucycles_pmu pmus[CPUCYCLES_PMU_MAX];
  plant_alder_lake();
  ck_assert_int_eq(cpucycles_pmu_discover(tree, pmus, CPUCYCLES_PMU_MAX), 2);
  /* in order of type, whatever order the directory lists them in */
  ck_assert_str_eq(pmus[0].name, "cpu_core");
  ck_assert_uint_eq(pmus[0].type, 4);
  ck_assert_int_eq(pmus[0].has_raw, 1);
  ck_assert_uint_eq(pmus[0].raw, 0x3c);
  ck_assert_str_eq(pmus[1].name, "cpu_atom");
  ck_assert_uint_eq(pmus[1].type, 10);
  ck_assert_uint_eq(pmus[1].raw, 0x3c);
}
END_TEST

START_TEST(pmus_of_machines_with_one_core_type)
{
  struct cpucycles_pmu pmus[CPUCYCLES_PMU_MAX];
  make_tree();
  /* x86 that is not hybrid: its cpu PMU has no cpus file */
  plant("cpu/type", "4\n");
  plant("cpu/rdpmc", "1\n");
  plant("software/type", "1\n");
  ck_assert_int_eq(cpucycles_pmu_discover(tree, pmus, CPUCYCLES_PMU_MAX), 0);
  /* an Arm server: one PMU, with cpus (a list longer than a page of
   * sysfs text would be cut, never mind), and its event named cpu_cycles */
  {
    char cpus[2000];
    int i, at = 0;
    for (i = 0; i < 256; i++) at += snprintf(cpus + at, sizeof cpus - (size_t) at, "%d,", 2 * i);
    cpus[at - 1] = '\n';
    plant_core_pmu("armv8_pmuv3_0", "8\n", cpus, "cpu_cycles",
                   "event=0x0011\n", "config:0-15\n");
  }
  ck_assert_int_eq(cpucycles_pmu_discover(tree, pmus, CPUCYCLES_PMU_MAX), 1);
  ck_assert_str_eq(pmus[0].name, "armv8_pmuv3_0");
  ck_assert_uint_eq(pmus[0].type, 8);
  ck_assert_uint_eq(pmus[0].raw, 0x11);
  /* no sysfs at all */
  ck_assert_int_eq(cpucycles_pmu_discover("/nonexistent-root", pmus,
                                          CPUCYCLES_PMU_MAX), 0);
}
END_TEST

START_TEST(pmus_beyond_the_maximum_are_counted)
{
  struct cpucycles_pmu pmus[CPUCYCLES_PMU_MAX];
  static const char *const types[] = { "21\n", "7\n", "30\n", "9\n", "8\n" };
  char name[32];
  int i;
  make_tree();
  for (i = 0; i < 5; i++) {
    snprintf(name, sizeof name, "armv9_cluster%d", i);
    plant_core_pmu(name, types[i], "0\n", 0, 0, 0);
  }
  plant("armv9_badtype/type", "4294967296\n"); /* not a 32-bit type */
  plant("armv9_badtype/cpus", "0\n");
  plant("armv9_notype/cpus", "0\n");
  ck_assert_int_eq(cpucycles_pmu_discover(tree, pmus, CPUCYCLES_PMU_MAX), 5);
  /* the smallest types are kept, in order */
  ck_assert_uint_eq(pmus[0].type, 7);
  ck_assert_uint_eq(pmus[1].type, 8);
  ck_assert_uint_eq(pmus[2].type, 9);
  ck_assert_uint_eq(pmus[3].type, 21);
  ck_assert_int_eq(pmus[0].has_raw, 0);
}
END_TEST

START_TEST(event_descriptions_become_config)
{
  unsigned long long config;
  make_tree();
  plant("p/format/event", "config:0-7,32-35\n");
  plant("p/format/umask", "config:8-15\n");
  plant("p/format/edge", "config:18\n");
  plant("p/format/rdpmc", "config1:1\n");
  plant("p/format/wide", "config:0-63\n");
  ck_assert_int_eq(cpucycles_pmu_event_config(tree, "p", "event=0x3c", &config), 0);
  ck_assert_uint_eq(config, 0x3c);
  ck_assert_int_eq(cpucycles_pmu_event_config(tree, "p", "event=0xc0,umask=0x01", &config), 0);
  ck_assert_uint_eq(config, 0x1c0);
  /* a field in two ranges: the low bits first */
  ck_assert_int_eq(cpucycles_pmu_event_config(tree, "p", "event=0x1ab", &config), 0);
  ck_assert_uint_eq(config, 0xabULL | 1ULL << 32);
  ck_assert_int_eq(cpucycles_pmu_event_config(tree, "p", "event=60,edge", &config), 0);
  ck_assert_uint_eq(config, 60 | 1ULL << 18);
  ck_assert_int_eq(cpucycles_pmu_event_config(tree, "p", "wide=0xffffffffffffffff", &config), 0);
  ck_assert_uint_eq(config, ~0ULL);
  /* a zero changes nothing, even in a field nobody describes */
  ck_assert_int_eq(cpucycles_pmu_event_config(tree, "p", "event=0x11,cmask=0", &config), 0);
  ck_assert_uint_eq(config, 0x11);
  config = 12345;
  /* refused: too wide for its field, outside attr.config, unknown,
   * malformed, or out of the PMU's directory; config untouched */
  ck_assert_int_eq(cpucycles_pmu_event_config(tree, "p", "event=0x1000", &config), -1);
  ck_assert_int_eq(cpucycles_pmu_event_config(tree, "p", "event=1,rdpmc=1", &config), -1);
  ck_assert_int_eq(cpucycles_pmu_event_config(tree, "p", "cmask=2", &config), -1);
  ck_assert_int_eq(cpucycles_pmu_event_config(tree, "p", "event=zz", &config), -1);
  ck_assert_int_eq(cpucycles_pmu_event_config(tree, "p", "event=", &config), -1);
  ck_assert_int_eq(cpucycles_pmu_event_config(tree, "p", "event=0x3c,,", &config), -1);
  ck_assert_int_eq(cpucycles_pmu_event_config(tree, "p", "", &config), -1);
  ck_assert_int_eq(cpucycles_pmu_event_config(tree, "p", "event=99999999999999999999", &config), -1);
  ck_assert_int_eq(cpucycles_pmu_event_config(tree, "p", "../p/format/event=1", &config), -1);
  ck_assert_int_eq(cpucycles_pmu_event_config(tree, "../p", "event=1", &config), -1);
  ck_assert_uint_eq(config, 12345);
}
END_TEST

/* memfd_open, noting each event's type and config. */
#define MAX_ATTRS 16
static struct perf_event_attr attrs[MAX_ATTRS];
static int refuse_extended; /* PERF_TYPE_HARDWARE with a type: ENOENT */

static int hybrid_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                       int group_fd, unsigned long flags)
{
  if (open_calls < MAX_ATTRS) attrs[open_calls] = *attr;
  if (refuse_extended && attr->type == PERF_TYPE_HARDWARE && attr->config >> 32) {
    note_call(attr, pid, cpu, group_fd, flags);
    open_calls++;
    errno = ENOENT;
    return -1;
  }
  return memfd_open(attr, pid, cpu, group_fd, flags);
}

/* What the kernel writes into event fd's page. */
static void set_page(int fd, unsigned int index, long long offset)
{
  struct perf_event_mmap_page pg;
  ck_assert_int_eq(pread(fd, &pg, sizeof pg, 0), (ssize_t) sizeof pg);
  pg.lock += 2;
  pg.index = index;
  pg.offset = offset;
  ck_assert_int_eq(pwrite(fd, &pg, sizeof pg, 0), (ssize_t) sizeof pg);
}

/* The thread migrates between a P-core and an E-core and back, and the
 * sum of its two events' counts goes on growing: the event of the core
 * type it runs on through rdpmc, the other from its page's offset. */
START_TEST(hybrid_reads_the_sum_across_migrations)
{
  struct cpucycles_perf_event ev = { 0 };
  struct counter_info info;
  int core_fd, atom_fd;
  plant_alder_lake();
  cpucycles_perf_set_sysfs_root(tree);
  cpucycles_perf_set_opener(hybrid_open);
  /* on a P-core: its event on counter 3 (index 4), the E-core's off */
  fake_page_template(0, 0, 1);
  ck_assert_int_eq(cpucycles_perf_setup(&ev, fake_rdpmc, 0, &info), 0);
  ck_assert_int_eq(cpucycles_perf_core_pmus(0, 0), 2);
  /* the plain event that told us the kernel gives events, then one per
   * core PMU with the extended type */
  ck_assert_int_eq(open_calls, 3);
  /* closed (its number may have been handed out again at once) */
  ck_assert(fd_is_closed(opened_fd(0)) || opened_fd(0) == opened_fd(1));
  ck_assert_uint_eq(attrs[1].type, PERF_TYPE_HARDWARE);
  ck_assert_uint_eq(attrs[1].config, PERF_COUNT_HW_CPU_CYCLES | 4ULL << 32);
  ck_assert_uint_eq(attrs[2].type, PERF_TYPE_HARDWARE);
  ck_assert_uint_eq(attrs[2].config, PERF_COUNT_HW_CPU_CYCLES | 10ULL << 32);
  ck_assert_int_eq(attrs[2].exclude_kernel, 1);
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_OPEN_EACH_PMU);
  ck_assert_int_eq(ev.more, 1);
  ck_assert_int_eq(info.kind, COUNTER_ONCORE);
  core_fd = ev.fd;
  atom_fd = ev.more_fd[0];
  ck_assert_int_eq(core_fd, opened_fd(1));
  ck_assert_int_eq(atom_fd, opened_fd(2));

  /* P-core: 1000 so far on the P-core counter, 500 from earlier on an
   * E-core */
  set_page(core_fd, 4, -1000000);
  set_page(atom_fd, 0, 500);
  rdpmc_result = 1000000 + 1000;
  rdpmc_calls = 0;
  ck_assert_int_eq(cpucycles_perf_read_fast(&ev, fake_rdpmc, 0), 1500);
  ck_assert_uint_eq(rdpmc_calls, 1);
  ck_assert_uint_eq(rdpmc_counter, 3);
  /* to an E-core: the P-core event stopped at 1200, the E-core event is
   * on its counter 1 and has counted 40 more */
  set_page(core_fd, 0, 1200);
  set_page(atom_fd, 2, 500 - 70000);
  rdpmc_result = 70000 + 40;
  ck_assert_int_eq(cpucycles_perf_read_fast(&ev, fake_rdpmc, 0), 1740);
  ck_assert_uint_eq(rdpmc_counter, 1);
  /* and back: the E-core event stopped at 600 */
  set_page(core_fd, 4, 1200 - 1000000);
  set_page(atom_fd, 0, 600);
  rdpmc_result = 1000000 + 7;
  ck_assert_int_eq(cpucycles_perf_read_fast(&ev, fake_rdpmc, 0), 1807);
  /* both off the hardware for a moment (multiplexed) */
  set_page(core_fd, 0, 1300);
  rdpmc_calls = 0;
  ck_assert_int_eq(cpucycles_perf_read(&ev, fake_rdpmc, 0), 1900);
  ck_assert_uint_eq(rdpmc_calls, 0);
  ck_assert_int_eq(open_calls, 3);

  cpucycles_perf_close(&ev);
  ck_assert(fd_is_closed(core_fd));
  ck_assert(fd_is_closed(atom_fd));
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_UNOPENED);
  ck_assert_int_eq(ev.more, 0);
}
END_TEST

/* A page that offers no user reads while the event is on the hardware:
 * its offset alone would be stale, so that event is read(2), and the
 * others still through their pages. */
START_TEST(hybrid_reads_the_descriptor_without_user_reads)
{
  struct cpucycles_perf_event ev = { 0 };
  struct counter_info info;
  struct perf_event_mmap_page pg;
  long long first_word;
  plant_alder_lake();
  cpucycles_perf_set_sysfs_root(tree);
  cpucycles_perf_set_opener(hybrid_open);
  fake_page_template(0, 0, 1);
  page_template.version = 77;
  ck_assert_int_eq(cpucycles_perf_setup(&ev, fake_rdpmc, 0, &info), 0);
  set_page(ev.more_fd[0], 0, 4000);
  ck_assert_int_eq(pread(ev.fd, &pg, sizeof pg, 0), (ssize_t) sizeof pg);
  pg.cap_user_rdpmc = 0;
  pg.index = 4;
  pg.offset = 1;
  ck_assert_int_eq(pwrite(ev.fd, &pg, sizeof pg, 0), (ssize_t) sizeof pg);
  memcpy(&first_word, &pg, sizeof first_word);
  rdpmc_calls = 0;
  /* read(2) of the memfd: its first 8 bytes (after setup's none) */
  ck_assert_int_eq(cpucycles_perf_read_fast(&ev, fake_rdpmc, 0), first_word + 4000);
  ck_assert_uint_eq(rdpmc_calls, 0);
  cpucycles_perf_close(&ev);
}
END_TEST

/* A kernel without the extended hardware type (Arm before 6.6): each
 * PMU's own cycles event, as sysfs describes it. */
START_TEST(hybrid_falls_back_to_each_pmus_own_event)
{
  struct cpucycles_perf_event ev = { 0 };
  struct counter_info info;
  make_tree();
  plant_core_pmu("armv8_cortex_a55", "8\n", "0-3\n", "cpu_cycles",
                 "event=0x0011\n", "config:0-15\n");
  plant_core_pmu("armv8_cortex_a76", "9\n", "4-7\n", "cpu_cycles",
                 "event=0x0011\n", "config:0-15\n");
  cpucycles_perf_set_sysfs_root(tree);
  cpucycles_perf_set_opener(hybrid_open);
  refuse_extended = 1;
  fake_page_template(0, 0, 1);
  ck_assert_int_eq(cpucycles_perf_setup(&ev, fake_rdpmc, 3, &info), 0);
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_OPEN_EACH_PMU);
  /* plain; a55 extended (refused, ENOENT), a55 raw; a76 the same */
  ck_assert_int_eq(open_calls, 5);
  ck_assert_uint_eq(attrs[2].type, 8);
  ck_assert_uint_eq(attrs[2].config, 0x11);
  ck_assert_uint_eq(attrs[2].config1, 3);
  ck_assert_uint_eq(attrs[4].type, 9);
  ck_assert_uint_eq(attrs[4].config, 0x11);
  cpucycles_perf_close(&ev);

  /* A PMU with no cycles event in sysfs: no event on it, so none at all
   * (a thread on that core type would stop counting). */
  make_tree();
  plant_core_pmu("armv8_cortex_a55", "8\n", "0-3\n", "cpu_cycles",
                 "event=0x0011\n", "config:0-15\n");
  plant_core_pmu("armv8_cortex_x9", "9\n", "4-7\n", 0, 0, 0);
  cpucycles_perf_set_sysfs_root(tree);
  open_calls = 0;
  memset(&info, 0, sizeof info);
  ck_assert_int_eq(cpucycles_perf_setup(&ev, fake_rdpmc, 3, &info), -1);
  ck_assert_str_eq(info.refusal, CPUCYCLES_REFUSAL_PERF_OPEN);
  ck_assert_int_eq(info.refusal_errno, ENOENT);
  ck_assert_int_eq(open_calls, 4);
  ck_assert(fd_is_closed(opened_fd(0)));
  ck_assert(fd_is_closed(opened_fd(2)));
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_UNOPENED);
}
END_TEST

/* Every core PMU's event must offer user reads for an on-core counter. */
START_TEST(hybrid_setup_refuses_unless_every_page_offers_user_reads)
{
  struct cpucycles_perf_event ev = { 0 };
  struct counter_info info;
  struct perf_event_mmap_page pg;
  plant_alder_lake();
  cpucycles_perf_set_sysfs_root(tree);
  cpucycles_perf_set_opener(hybrid_open);
  fake_page_template(0, 0, 1);
  ck_assert_int_eq(cpucycles_perf_open(&ev, 1, 0), 0);
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_OPEN_EACH_PMU);
  cpucycles_perf_close(&ev);
  /* the template now says no user reads, for the E-core event only: the
   * opener copies it into the third event */
  open_calls = 0;
  fake_page_template(0, 0, 1);
  ck_assert_int_eq(cpucycles_perf_open(&ev, 1, 0), 0);
  ck_assert_int_eq(pread(ev.more_fd[0], &pg, sizeof pg, 0), (ssize_t) sizeof pg);
  pg.cap_user_rdpmc = 0;
  ck_assert_int_eq(pwrite(ev.more_fd[0], &pg, sizeof pg, 0), (ssize_t) sizeof pg);
  cpucycles_perf_close(&ev);
  ck_assert_int_eq(open_calls, 2);
  /* setup, with an opener whose second event has no user reads */
  fake_page_template(0, 0, 0);
  memset(&info, 0, sizeof info);
  ck_assert_int_eq(cpucycles_perf_setup(&ev, fake_rdpmc, 0, &info), -1);
  ck_assert_str_eq(info.refusal, CPUCYCLES_REFUSAL_NO_USER_RDPMC);
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_UNOPENED);
}
END_TEST

/* More core PMUs than a thread opens events on: refused, with its
 * reason, and nothing left open. */
START_TEST(hybrid_refuses_more_pmus_than_it_opens)
{
  struct cpucycles_perf_event ev = { 0 };
  struct counter_info info;
  char name[32], type[16];
  int i;
  make_tree();
  for (i = 0; i <= CPUCYCLES_PMU_MAX; i++) {
    snprintf(name, sizeof name, "armv9_cluster%d", i);
    snprintf(type, sizeof type, "%d\n", 20 + i);
    plant_core_pmu(name, type, "0\n", 0, 0, 0);
  }
  cpucycles_perf_set_sysfs_root(tree);
  cpucycles_perf_set_opener(hybrid_open);
  fake_page_template(0, 0, 1);
  memset(&info, 0, sizeof info);
  ck_assert_int_eq(cpucycles_perf_setup(&ev, fake_rdpmc, 0, &info), -1);
  ck_assert_str_eq(info.refusal, CPUCYCLES_PERF_REFUSAL_PMUS);
  ck_assert_int_eq(cpucycles_perf_core_pmus(0, 0), CPUCYCLES_PMU_MAX + 1);
  ck_assert_int_eq(open_calls, 1);
  ck_assert(fd_is_closed(opened_fd(0)));
  /* the next thread's open does not even try */
  ck_assert_int_eq(cpucycles_perf_open(&ev, 1, 0), -1);
  ck_assert_int_eq(open_calls, 1);
}
END_TEST

/* One core PMU (an Arm server), or none listed (x86): one event, as
 * always. */
START_TEST(one_core_type_keeps_one_event)
{
  struct cpucycles_perf_event ev = { 0 };
  struct counter_info info;
  make_tree();
  plant_core_pmu("armv8_pmuv3_0", "8\n", "0-63\n", "cpu_cycles",
                 "event=0x0011\n", "config:0-15\n");
  cpucycles_perf_set_sysfs_root(tree);
  cpucycles_perf_set_opener(hybrid_open);
  fake_page_template(0, 0, 1);
  ck_assert_int_eq(cpucycles_perf_setup(&ev, fake_rdpmc, 3, &info), 0);
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_OPEN);
  ck_assert_int_eq(ev.more, 0);
  ck_assert_int_eq(open_calls, 1);
  ck_assert_uint_eq(attrs[0].config, PERF_COUNT_HW_CPU_CYCLES);
  ck_assert_int_eq(cpucycles_perf_core_pmus(0, 0), 1);
  cpucycles_perf_close(&ev);
  /* looked for once: a later open does not read sysfs again */
  remove_tree();
  ck_assert_int_eq(cpucycles_perf_open(&ev, 1, 3), 0);
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_OPEN);
  cpucycles_perf_close(&ev);
}
END_TEST

/* The ioctl seam for pipe events: notes each descriptor; ENABLE puts 0
 * into the pipe of the first event opened since open_calls was reset,
 * 123 into the others' (the latest open of that number: numbers are
 * handed out again). */
static int ioctl_fds[8];

static int hybrid_ioctl(int fd, unsigned long request, void *arg)
{
  int i;
  long long v;
  (void) arg;
  if (request == PERF_EVENT_IOC_ID) { /* as a pipe answers: no id */
    errno = ENOTTY;
    return -1;
  }
  if (ioctl_calls < 8) {
    ioctl_requests[ioctl_calls] = request;
    ioctl_fds[ioctl_calls] = fd;
  }
  ioctl_calls++;
  if (request != PERF_EVENT_IOC_ENABLE) return 0;
  for (i = open_calls - 1; i >= 0; i--)
    if (i < MAX_OPENED && opened_fd(i) == fd) {
      v = i == 0 ? 0 : 123;
      if (write(pipe_writers[i], &v, 8) != 8) abort();
      break;
    }
  return 0;
}

/* default-perfevent on a hybrid CPU: the sum of the events' read(2), and
 * a count stuck at 0 revived on every event. */
START_TEST(hybrid_perf_event_reads_the_sum)
{
  struct cpucycles_perf_event ev = { 0 };
  struct counter_info info;
  plant_alder_lake();
  cpucycles_perf_set_sysfs_root(tree);
  cpucycles_perf_set_opener(pipe_open);
  pipe_values[0] = 10;  /* setup's read of each */
  pipe_values[1] = 300; /* the next */
  pipe_nvalues = 2;
  ck_assert_int_eq(cpucycles_perf_setup(&ev, 0, 0, &info), 0);
  ck_assert_int_eq(info.kind, COUNTER_PERFEVENT);
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_OPEN_EACH_PMU);
  ck_assert(ev.page == 0 && ev.more_page[0] == 0);
  ck_assert_int_eq(cpucycles_perf_read(&ev, 0, 0), 600);
  cpucycles_perf_close(&ev);

  /* stuck: each event disabled, reset and enabled, in turn; then only
   * the E-core's counts, and that is enough */
  cpucycles_perf_set_ioctl(hybrid_ioctl);
  pipe_values[0] = 0;
  pipe_values[1] = 0;
  open_calls = 0;
  ck_assert_int_eq(cpucycles_perf_setup(&ev, 0, 0, &info), 0);
  ck_assert_int_eq(ioctl_calls, 6);
  ck_assert_uint_eq(ioctl_requests[0], PERF_EVENT_IOC_DISABLE);
  ck_assert_uint_eq(ioctl_requests[1], PERF_EVENT_IOC_RESET);
  ck_assert_uint_eq(ioctl_requests[2], PERF_EVENT_IOC_ENABLE);
  ck_assert_uint_eq(ioctl_requests[3], PERF_EVENT_IOC_DISABLE);
  ck_assert_uint_eq(ioctl_requests[5], PERF_EVENT_IOC_ENABLE);
  ck_assert_int_eq(ioctl_fds[0], opened_fd(0));
  ck_assert_int_eq(ioctl_fds[3], opened_fd(1));
  cpucycles_perf_close(&ev);
}
END_TEST

/* Pipe events on a hybrid CPU: the first core PMU's event of each pair
 * counts from the start (7), the second's is stuck at 0 until enabled
 * again (hybrid_ioctl then puts 123 into it). */
static int half_stuck_open(struct perf_event_attr *attr, pid_t pid, int cpu,
                           int group_fd, unsigned long flags)
{
  pipe_values[0] = open_calls % 2 == 0 ? 7 : 0;
  pipe_values[1] = 0;
  pipe_nvalues = open_calls % 2 == 0 ? 1 : 2;
  return pipe_open(attr, pid, cpu, group_fd, flags);
}

/* A thread's events on a hybrid CPU, opened on its first read: the remedy
 * goes to the event stuck at 0 alone, not to the one that counts. */
START_TEST(hybrid_thread_remedies_each_stuck_event)
{
  struct cpucycles_perf_event probe = { 0 }, ev = { 0 };
  struct counter_info info;
  plant_alder_lake();
  cpucycles_perf_set_sysfs_root(tree);
  cpucycles_perf_set_opener(pipe_open);
  pipe_first_value = 10;
  ck_assert_int_eq(cpucycles_perf_setup(&probe, 0, 0, &info), 0);
  ck_assert_int_eq(probe.state, CPUCYCLES_PERF_OPEN_EACH_PMU);
  cpucycles_perf_set_ioctl(hybrid_ioctl);
  cpucycles_perf_set_opener(half_stuck_open);
  open_calls = 2; /* half_stuck_open: the next pair is opened_fd(2), opened_fd(3) */
  /* a thread's first read (its event UNOPENED) */
  ck_assert_int_eq(cpucycles_perf_read(&ev, 0, 0), 7 + 123);
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_OPEN_EACH_PMU);
  ck_assert_int_eq(open_calls, 4);
  ck_assert_int_eq(ioctl_calls, 3);
  ck_assert_int_eq(ioctl_fds[0], opened_fd(3));
  ck_assert_int_eq(ioctl_fds[1], opened_fd(3));
  ck_assert_int_eq(ioctl_fds[2], opened_fd(3));
  ck_assert_uint_eq(ioctl_requests[2], PERF_EVENT_IOC_ENABLE);
  cpucycles_perf_close(&ev);
  cpucycles_perf_close(&probe);
}
END_TEST

/* default-perfevent on a hybrid CPU whose second event's descriptor the
 * program closed and reused: the file is not read, both events are
 * replaced, and the sum goes on from where it was. */
START_TEST(hybrid_perf_event_never_reads_a_reused_descriptor)
{
  struct cpucycles_perf_event ev = { 0 };
  struct counter_info info;
  long long one = 1, v;
  int fd;
  plant_alder_lake();
  cpucycles_perf_set_sysfs_root(tree);
  cpucycles_perf_set_opener(pipe_open);
  cpucycles_perf_set_ioctl(id_ioctl);
  pipe_values[0] = 10;  /* setup's read of each */
  pipe_values[1] = 300; /* the next */
  pipe_nvalues = 2;
  ck_assert_int_eq(cpucycles_perf_setup(&ev, 0, 0, &info), 0);
  ck_assert_int_eq(ev.state, CPUCYCLES_PERF_OPEN_EACH_PMU);
  ck_assert_int_eq(cpucycles_perf_read(&ev, 0, 0), 600);
  ck_assert_int_eq(write(pipe_writers[1], &one, 8), 8); /* the first event's next */
  fd = program_file_after_closing(ev.more_fd[0]);
  pipe_values[0] = 7; /* the new events' */
  pipe_values[1] = 8;
  v = cpucycles_perf_read(&ev, 0, 0);
  ck_assert_int_eq(v, 600);
  ck_assert_int_eq(cpucycles_perf_read(&ev, 0, 0), 600 + 2);
  ck_assert_int_eq(open_calls, 5);
  program_file_untouched(fd);
  cpucycles_perf_close(&ev);
  program_file_untouched(fd);
  close(fd);
}
END_TEST

/* amd64-perfpmcff's raw fixed counter would count one core type only. */
START_TEST(hybrid_refuses_the_raw_fixed_counter)
{
  const struct counter *c = find_counter("amd64-perfpmcff");
  struct counter_info info;
  if (!c) return;
  plant_alder_lake();
  cpucycles_perf_set_sysfs_root(tree);
  cpucycles_perf_set_opener(hybrid_open);
  fake_page_template((1u << 30 | 1u) + 1u, 0, 1); /* on fixed counter 1 */
  memset(&info, 0, sizeof info);
  ck_assert_int_eq(c->setup(&info), -1);
  ck_assert_str_eq(info.refusal, CPUCYCLES_PERF_REFUSAL_HYBRID);
  ck_assert(fd_is_closed(opened_fd(1)));
  ck_assert(fd_is_closed(opened_fd(2)));
  c->release();
}
END_TEST

/* A new thread's first read opens one event per core PMU; its exit
 * closes them all; descriptors count against the ceiling per event. */
static int hybrid_thread_fds[2];
static long long hybrid_thread_read;

static void *hybrid_thread(void *arg)
{
  const struct counter *c = arg;
  hybrid_thread_read = c->read();
  hybrid_thread_fds[0] = opened_fd(open_calls - 2);
  hybrid_thread_fds[1] = opened_fd(open_calls - 1);
  return 0;
}

START_TEST(hybrid_thread_opens_each_and_closes_at_exit)
{
  const struct counter *c = find_counter("amd64-perfpmc");
  struct cpucycles_perf_event evs[9];
  struct counter_info info;
  struct rlimit rl;
  pthread_t t;
  int i;
  if (!c) c = find_counter("default-perfevent");
  if (!c) return;
  plant_alder_lake();
  cpucycles_perf_set_sysfs_root(tree);
  cpucycles_perf_set_opener(hybrid_open);
  /* every event off the hardware (no rdpmc here): the pages' offsets,
   * or, for default-perfevent, read(2): the page's first 8 bytes */
  fake_page_template(0, 21, 1);
  page_template.version = 1;
  ck_assert_int_eq(c->setup(&info), 0);
  ck_assert_int_eq(open_calls, 3);
  ck_assert_int_eq(pthread_create(&t, 0, hybrid_thread, (void *) c), 0);
  ck_assert_int_eq(pthread_join(t, 0), 0);
  ck_assert_int_eq(open_calls, 5);
  ck_assert(strcmp(c->name, "amd64-perfpmc") != 0 || hybrid_thread_read == 42);
  ck_assert(fd_is_closed(hybrid_thread_fds[0]));
  ck_assert(fd_is_closed(hybrid_thread_fds[1]));
  c->release();

  /* the ceiling counts descriptors: 16 of them are 8 hybrid events */
  ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
  rl.rlim_cur = 64;
  ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
  memset(evs, 0, sizeof evs);
  for (i = 0; i < 8; i++) ck_assert_int_eq(cpucycles_perf_open(&evs[i], 0, 0), 0);
  ck_assert_int_eq(cpucycles_perf_open(&evs[8], 0, 0), -1);
  ck_assert_int_eq(errno, EMFILE);
  for (i = 0; i < 8; i++) cpucycles_perf_close(&evs[i]);
  ck_assert_int_eq(cpucycles_perf_open(&evs[8], 0, 0), 0);
  cpucycles_perf_close(&evs[8]);
}
END_TEST

/* A fork child closes every event of the thread's, on every core PMU. */
START_TEST(hybrid_fork_child_closes_each_event)
{
  struct cpucycles_perf_event ev = { 0 };
  int status, fds[2];
  pid_t pid;
  plant_alder_lake();
  cpucycles_perf_set_sysfs_root(tree);
  cpucycles_perf_set_opener(hybrid_open);
  fake_page_template(0, 0, 1);
  ck_assert_int_eq(cpucycles_perf_open(&ev, 1, 0), 0);
  fds[0] = ev.fd;
  fds[1] = ev.more_fd[0];
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int code = 0;
    cpucycles_perf_atfork_child(&ev);
    if (!fd_is_closed(fds[0])) code |= 1;
    if (!fd_is_closed(fds[1])) code |= 2;
    if (ev.state != CPUCYCLES_PERF_UNOPENED || ev.more != 0) code |= 4;
    _exit(code);
  }
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 0);
  ck_assert(!fd_is_closed(fds[0]));
  ck_assert(!fd_is_closed(fds[1]));
  cpucycles_perf_close(&ev);
  ck_assert(fd_is_closed(fds[1]));
}
END_TEST

/* ---- the real thing ---- */

static int hardware_cycles_work(void)
{
  return event_opens(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
}

struct trial {
  const struct counter *counter;
  struct counter_info info;
  int result;
  int monotone;
};

static void try_setup(void *arg)
{
  struct trial *t = arg;
  t->result = t->counter->setup(&t->info);
}

static void try_reads(void *arg)
{
  struct trial *t = arg;
  long long prev = t->counter->read(), v;
  int i;
  t->monotone = 1;
  for (i = 0; i < 1000; i++) {
    v = t->counter->read();
    if (v < prev) t->monotone = 0;
    prev = v;
  }
}

START_TEST(real_counters_fail_cleanly_or_count)
{
  int hardware = hardware_cycles_work(), i;
  for (i = 0; i < PERF_COUNTERS; i++) {
    struct trial t;
    t.counter = find_counter(perf_counters[i]);
    if (!t.counter) continue;
    t.result = -1;
    if (!hardware) {
      /* No PMU for user space here: setup says so, without a fault. */
      ck_assert_int_eq(cpucycles_works(try_setup, &t), 0);
      ck_assert_msg(t.result == -1, "%s", perf_counters[i]);
    } else if (cpucycles_works(try_setup, &t) == 0 && t.result == 0) {
      t.monotone = 0;
      ck_assert_int_eq(cpucycles_works(try_reads, &t), 0);
      ck_assert_msg(t.monotone, "%s", perf_counters[i]);
    }
    t.counter->release();
    t.counter->release();
  }
}
END_TEST

/* The tests with fake events see a machine with one core type, whatever
 * the machine running them is; the real thing sees the real sysfs. */
static void real_sysfs(void)
{
  cpucycles_perf_set_sysfs_root("");
}

static Suite *perf_suite(void)
{
  Suite *s = suite_create("perf");
  TCase *tc;

  tc = tcase_create("page");
  tcase_add_test(tc, page_offset_plus_counter);
  tcase_add_test(tc, page_retries_when_lock_changes);
  tcase_add_test(tc, page_index_zero_is_unavailable);
  tcase_add_test(tc, page_without_cap_user_rdpmc_is_unavailable);
  tcase_add_test(tc, page_sign_extends_pmc_width);
  tcase_add_test(tc, page_as_the_kernel_programs_it);
  tcase_add_test(tc, page_width_64_and_implausible_widths);
  tcase_add_test(tc, page_sign_extends_pmc_width_40);
  tcase_add_test(tc, page_multiplexed_is_not_scaled);
  suite_add_tcase(s, tc);

  tc = tcase_create("open");
  tcase_add_test(tc, open_asks_for_user_cycles_of_this_thread_cloexec);
  tcase_add_test(tc, open_sets_cloexec_by_hand_on_old_kernels);
  tcase_add_test(tc, open_failure_leaves_nothing);
  tcase_add_test(tc, open_falls_back_through_the_exclusions);
  tcase_add_test(tc, map_failure_closes_the_descriptor);
  tcase_add_test(tc, open_passes_config1);
  suite_add_tcase(s, tc);

  tc = tcase_create("shared");
  tcase_add_test(tc, shared_setup_and_fast_read_use_page_and_rdpmc);
  tcase_add_test(tc, shared_read_index_zero_for_a_moment);
  tcase_add_test(tc, shared_setup_refuses_without_cap_user_rdpmc);
  tcase_add_test(tc, shared_setup_without_rdpmc_is_a_perf_event);
  tcase_add_test(tc, setup_retries_a_count_stuck_at_zero);
  tcase_add_test(tc, shared_read_opens_on_first_read_with_config1);
  tcase_add_test(tc, shared_read_refused_falls_back_once);
  suite_add_tcase(s, tc);

  tc = tcase_create("counters");
  tcase_add_test(tc, setup_fails_when_open_fails);
  tcase_add_test(tc, setup_records_each_open_errno);
  tcase_add_test(tc, perfevent_reads_releases_and_drops_at_fork);
  tcase_add_test(tc, perfevent_read_failure_falls_back_monotone);
  tcase_add_test(tc, perfpmc_refuses_without_cap_user_rdpmc);
  tcase_add_test(tc, perfpmc_index_zero_reads_the_descriptor);
  tcase_add_test(tc, perf_counters_share_the_threads_event);
  tcase_add_test(tc, perf_counter_refused_leaves_another_kind_its_open);
  tcase_add_test(tc, perfpmc_counters_ask_for_their_config1);
  tcase_add_test(tc, pmcff_refuses_unless_on_fixed_counter_1);
  tcase_add_test(tc, probe_survives_a_page_whose_reads_fault);
  tcase_add_test(tc, signal_handler_reading_during_an_open_does_not_wait);
  tcase_add_test(tc, probe_survives_pmcff_where_the_cpu_refuses_rdpmc);
  suite_add_tcase(s, tc);

  tc = tcase_create("descriptors the program closed");
  tcase_add_test(tc, perfevent_never_reads_a_reused_descriptor);
  tcase_add_test(tc, perfevent_counts_on_after_its_descriptor_is_closed);
  tcase_add_test(tc, page_counter_never_reads_a_reused_descriptor);
  tcase_add_test(tc, fork_child_leaves_a_reused_descriptor_open);
  tcase_add_test(tc, thread_exit_leaves_a_reused_descriptor_open);
  suite_add_tcase(s, tc);

  tc = tcase_create("threads and fork");
  tcase_add_test(tc, thread_opens_its_own_event_closed_at_exit);
  tcase_add_test(tc, thread_without_event_reads_monotone_fallback);
  tcase_add_test(tc, thread_event_stuck_at_zero_counts_after_the_remedy);
  tcase_add_test(tc, thread_event_counting_from_the_start_gets_no_ioctl);
  tcase_add_test(tc, thread_event_stuck_for_good_reads_the_clock);
  tcase_add_test(tc, no_heap_in_a_first_read_after_40_program_keys);
  tcase_add_test(tc, fallback_counts_cycles_at_the_estimated_rate);
  tcase_add_test(tc, fallback_survives_a_huge_clock_offset);
  tcase_add_test(tc, fallback_in_a_time_namespace);
  tcase_add_test(tc, fork_child_closes_every_threads_events);
  tcase_add_test(tc, ceiling_one_descriptor_per_live_thread);
  tcase_add_test(tc, ceiling_a_quarter_of_the_descriptor_limit);
  tcase_add_test(tc, fork_child_counts_with_its_own_event);
  tcase_add_test(tc, fork_without_handlers_page_counter_opens_its_own);
  tcase_add_test(tc, fork_without_handlers_perfevent_opens_its_own);
  suite_add_tcase(s, tc);

  tc = tcase_create("core PMUs");
  tcase_add_test(tc, pmus_are_the_ones_with_type_and_cpus);
  tcase_add_test(tc, pmus_of_machines_with_one_core_type);
  tcase_add_test(tc, pmus_beyond_the_maximum_are_counted);
  tcase_add_test(tc, event_descriptions_become_config);
  suite_add_tcase(s, tc);

  tc = tcase_create("hybrid");
  tcase_add_test(tc, hybrid_reads_the_sum_across_migrations);
  tcase_add_test(tc, hybrid_reads_the_descriptor_without_user_reads);
  tcase_add_test(tc, hybrid_falls_back_to_each_pmus_own_event);
  tcase_add_test(tc, hybrid_setup_refuses_unless_every_page_offers_user_reads);
  tcase_add_test(tc, hybrid_refuses_more_pmus_than_it_opens);
  tcase_add_test(tc, one_core_type_keeps_one_event);
  tcase_add_test(tc, hybrid_perf_event_reads_the_sum);
  tcase_add_test(tc, hybrid_thread_remedies_each_stuck_event);
  tcase_add_test(tc, hybrid_perf_event_never_reads_a_reused_descriptor);
  tcase_add_test(tc, hybrid_refuses_the_raw_fixed_counter);
  tcase_add_test(tc, hybrid_thread_opens_each_and_closes_at_exit);
  tcase_add_test(tc, hybrid_fork_child_closes_each_event);
  suite_add_tcase(s, tc);

  tc = tcase_create("real");
  tcase_add_checked_fixture(tc, real_sysfs, 0);
  tcase_add_test(tc, real_counters_fail_cleanly_or_count);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(perf_suite());
  int failed;
  /* Each test in its own process (the default; insisted on here): the
   * counters keep per-thread state, and the opener seam is global. */
  srunner_set_fork_status(sr, CK_FORK);
  cpucycles_perf_set_sysfs_root("/nonexistent-sysfs-for-tests");
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#else

int main(void)
{
  return 77; /* no Linux perf_event here: skipped */
}

#endif
