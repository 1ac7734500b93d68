/* works.c's cpucycles_catch_arm, _try and _disarm for Windows, where a
 * fault is an exception, not a signal: a vectored handler resumes a crash
 * of the probing thread in escape(), which __builtin_longjmp()s back into
 * trial(), since mingw-w64's gcc has no __try and a longjmp from the
 * handler itself would abandon Windows' dispatcher half done
 * (doc/counters.md, "Windows", says the rest).  RtlCaptureContext and
 * resuming at the captured context would avoid the jump, but on 32-bit x86
 * it captures its caller's caller (through the frame pointer), which
 * depends on how the compiler framed the function. */
#ifndef _WIN32
#error "works-windows.c is for Windows"
#endif
#if !defined(__x86_64__) && !defined(__i386__)
#error "works-windows.c knows the x86 and x86-64 contexts only"
#endif

#include <signal.h>
#include <stdint.h>
#include <windows.h>
#include "counter.h"

/* Below the faulting stack pointer, the dispatcher's frames (dead once
 * the thread resumes) and then room for escape(). */
#define ESCAPE_STACK_GAP 256

static void *escape_buffer[5]; /* __builtin_setjmp's: five words */
static DWORD prober;
static volatile LONG armed;
static DWORD caught; /* the exception that stopped the trial */

/* What a counter's first use raises where user mode may not run it, as
 * the signal a POSIX system would send (for the probe's report,
 * cpucycles-info --explain); 0: any other exception. */
static int signal_of(DWORD code)
{
  switch (code) {
    case EXCEPTION_ILLEGAL_INSTRUCTION:
    case EXCEPTION_PRIV_INSTRUCTION:
      return SIGILL;
    case EXCEPTION_INT_DIVIDE_BY_ZERO:
    case EXCEPTION_INT_OVERFLOW:
      return SIGFPE;
    case EXCEPTION_ACCESS_VIOLATION:
    case EXCEPTION_IN_PAGE_ERROR:
    case EXCEPTION_DATATYPE_MISALIGNMENT:
      return SIGSEGV;
    default:
      return 0;
  }
}

/* Entered by no call: Windows resumes the faulting thread here. */
static __attribute__((noinline, noreturn, used)) void escape(void)
{
  __builtin_longjmp(escape_buffer, 1);
}

static LONG CALLBACK on_exception(PEXCEPTION_POINTERS e)
{
  CONTEXT *c = e->ContextRecord;
  if (!armed || GetCurrentThreadId() != prober
      || !signal_of(e->ExceptionRecord->ExceptionCode))
    return EXCEPTION_CONTINUE_SEARCH;
  armed = 0;
  caught = e->ExceptionRecord->ExceptionCode;
#ifdef __x86_64__
  c->Rsp = ((c->Rsp - ESCAPE_STACK_GAP) & ~(DWORD64) 15) - 8;
  c->Rip = (DWORD64) (uintptr_t) escape;
#else
  c->Esp = ((c->Esp - ESCAPE_STACK_GAP) & ~(DWORD) 15) - 4;
  c->Eip = (DWORD) (uintptr_t) escape;
#endif
  return EXCEPTION_CONTINUE_EXECUTION;
}

#ifdef __i386__
/* 32-bit Windows chains frame-based handlers through the thread's
 * ExceptionList, the first word of its TIB (fs:0); frames abandoned by the
 * jump may have linked some, so the jump puts the list back as it was.
 * (Read directly: mingw-w64's NtCurrentTeb trips gcc's -Warray-bounds.) */
static void *exception_list(void)
{
  void *list;
  __asm__ volatile ("movl %%fs:0, %0" : "=r" (list));
  return list;
}

static void set_exception_list(void *list)
{
  __asm__ volatile ("movl %0, %%fs:0" : : "r" (list) : "memory");
}
#endif

/* Not inlined: __builtin_longjmp must come from another function. */
static __attribute__((noinline)) int trial(void (*fn)(void *), void *arg)
{
#ifdef __i386__
  void *volatile list = exception_list();
#endif
  if (__builtin_setjmp(escape_buffer)) {
#ifdef __i386__
    set_exception_list(list);
#endif
    return -1;
  }
  armed = 1;
  fn(arg);
  armed = 0;
  return 0;
}

/* Added at the probe's first counter that may fault, removed at its end:
 * nobody can replace it, so nothing is checked before each trial. */
static PVOID handler;

int cpucycles_catch_arm(struct catch_status *status)
{
  if (status) {
    status->problem = CATCH_READY;
    status->signal = 0;
  }
  prober = GetCurrentThreadId();
  handler = AddVectoredExceptionHandler(1, on_exception);
  if (!handler) {
    if (status) status->problem = CATCH_ACTION_REFUSED;
    return -1;
  }
  return 0;
}

int cpucycles_catch_try(void (*fn)(void *), void *arg, int *stopped_by,
                        struct catch_status *status)
{
  int result;
  if (status) {
    status->problem = CATCH_READY;
    status->signal = 0;
  }
  if (stopped_by) *stopped_by = 0;
  caught = 0;
  result = trial(fn, arg);
  armed = 0;
  if (result != 0 && stopped_by) *stopped_by = signal_of(caught);
  return result;
}

void cpucycles_catch_disarm(void)
{
  if (handler) RemoveVectoredExceptionHandler(handler);
  handler = 0;
}
