/* The first call from a thread with a small stack (doc/security.md, "A
 * small thread stack"), shared by tests/test-stack.c and
 * tests/cross/cross-stack.c.
 *
 * The thread gets max(16384, PTHREAD_STACK_MIN) bytes through
 * pthread_attr_setstack: a mapping filled with a pattern, with 64 KiB of
 * inaccessible pages below it, so that an overflow is a SIGSEGV rather
 * than a write into whatever lies below (a frame of 8 KiB jumps over a
 * single guard page).  After the call, the thread itself finds the
 * deepest byte of the pattern overwritten: from its own frame down to
 * there is what the call used (glibc keeps the thread's descriptor and
 * static TLS at the top of a stack it is given, and its thread exit may
 * reach deeper than the call: neither is counted).  The stack grows down
 * on every ISA of the matrix.
 *
 * A counter whose instruction faults in the probe (one that cannot ask
 * first, doc/security.md) costs a signal frame on the same stack, whose
 * size is the kernel's (the CPU's register state: a few KiB on x86-64
 * with AVX-512, more with SVE): where such a counter exists (not on x86),
 * it is measured too, as what a thread that catches one signal uses, and
 * added to the bound. */
#ifndef CPUCYCLES_TEST_SMALL_STACK_H
#define CPUCYCLES_TEST_SMALL_STACK_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "cpucycles.h"

/* The bound of doc/security.md: what the first call takes of the caller's
 * stack, traced or not, in bytes, besides a caught signal's frame. */
#define SMALL_STACK_BOUND 6144

#define SMALL_STACK_BYTES 16384
#define SMALL_STACK_GUARD 65536
#define SMALL_STACK_FILL 0xa5

static size_t small_stack_size(void)
{
  size_t size = SMALL_STACK_BYTES;
  long page = sysconf(_SC_PAGESIZE);
#ifdef PTHREAD_STACK_MIN
  /* a call to sysconf in glibc 2.34 and later: 128 KiB on arm64 */
  if ((size_t) PTHREAD_STACK_MIN > size) size = (size_t) PTHREAD_STACK_MIN;
#endif
  if (page > 0) size = (size + (size_t) page - 1) / (size_t) page * (size_t) page;
  return size;
}

struct small_stack {
  unsigned char *stack;  /* its lowest byte */
  size_t size;
  int traced;
  size_t used;           /* bytes below the thread body's frame */
  const char *answer;    /* the chosen counter */
};

/* The bytes used below here, in a thread of s: from the frame of the
 * caller (the thread body) down to the deepest byte overwritten. */
static __attribute__((noinline)) size_t small_stack_used_below(const struct small_stack *s,
                                                               const void *frame)
{
  size_t i;
  for (i = 0; i < s->size && s->stack[i] == SMALL_STACK_FILL; i++) continue;
  return (size_t) ((const unsigned char *) frame - (s->stack + i));
}

/* Runs body(s) in a thread on a small stack: 0, or -1 when the thread
 * could not be made. */
static int small_stack_run(void *(*body)(void *), struct small_stack *s)
{
  long page = sysconf(_SC_PAGESIZE);
  size_t guard;
  unsigned char *map;
  pthread_attr_t attr;
  pthread_t thread;
  int ok;

  s->size = small_stack_size();
  s->used = 0;
  if (page <= 0) return -1;
  guard = (SMALL_STACK_GUARD + (size_t) page - 1) / (size_t) page * (size_t) page;
  map = mmap(0, guard + s->size, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) return -1;
  if (mprotect(map, guard, PROT_NONE) != 0) {
    munmap(map, guard + s->size);
    return -1;
  }
  s->stack = map + guard;
  memset(s->stack, SMALL_STACK_FILL, s->size);
  ok = pthread_attr_init(&attr) == 0;
  if (ok) {
    ok = pthread_attr_setstack(&attr, s->stack, s->size) == 0
         && pthread_create(&thread, &attr, body, s) == 0;
    pthread_attr_destroy(&attr);
  }
  if (ok) ok = pthread_join(thread, 0) == 0;
  munmap(map, guard + s->size);
  return ok ? 0 : -1;
}

/* The first call, traced or not. */
static void *small_stack_first_call(void *arg)
{
  struct small_stack *s = arg;
  if (s->traced) cpucycles_tracesetup();
  cpucycles();
  s->used = small_stack_used_below(s, __builtin_frame_address(0));
  s->answer = cpucycles_implementation();
  return 0;
}

static void small_stack_caught(int sig, siginfo_t *info, void *context)
{
  (void) sig; (void) info; (void) context;
}

/* One signal caught, as the probe's catcher does (with SA_SIGINFO). */
static void *small_stack_signal(void *arg)
{
  struct small_stack *s = arg;
  raise(SIGUSR2);
  s->used = small_stack_used_below(s, __builtin_frame_address(0));
  return 0;
}

/* Whether a counter of the probe may fault here: every x86 counter asks
 * the kernel first (COUNTER_ASKS, lib/counter.h), so no fault is caught
 * there and the bound holds without a frame, as long as the kernel can
 * answer: without sysfs (a build chroot that mounts no /sys, as
 * pbuilder's), amd64-pmcff cannot ask about RDPMC and is tried caught. */
static int small_stack_catches(void)
{
#if defined(__x86_64__) || defined(__i386__)
  return access("/sys/bus/event_source/devices", F_OK) != 0;
#else
  return 1;
#endif
}

/* The stack one caught signal takes in a thread where the probe may catch
 * one, else 0: 0 and the bytes in *frame, or -1. */
static int small_stack_signal_frame(size_t *frame)
{
  struct sigaction catch_it, old;
  struct small_stack s;
  int r;

  *frame = 0;
  if (!small_stack_catches()) return 0;
  memset(&s, 0, sizeof s);
  memset(&catch_it, 0, sizeof catch_it);
  catch_it.sa_sigaction = small_stack_caught;
  catch_it.sa_flags = SA_SIGINFO;
  sigemptyset(&catch_it.sa_mask);
  if (sigaction(SIGUSR2, &catch_it, &old) != 0) return -1;
  r = small_stack_run(small_stack_signal, &s);
  sigaction(SIGUSR2, &old, 0);
  *frame = s.used;
  return r;
}

/* The first call (traced or not) on a small stack: 0, with the bytes it
 * used in *used and the chosen counter in *answer; -1 when the thread
 * could not be made. */
static int small_stack_measure(int traced, size_t *used, const char **answer)
{
  struct small_stack s;
  int r;

  memset(&s, 0, sizeof s);
  s.traced = traced;
  r = small_stack_run(small_stack_first_call, &s);
  *used = s.used;
  *answer = s.answer;
  return r;
}

#endif
