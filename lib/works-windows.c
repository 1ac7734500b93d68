/* Running code that may fault, with the fault turned into a return value:
 * Windows' version of works.c (counter.h's cpucycles_catch_arm, _try and
 * _disarm).
 *
 * On Windows a counter that user mode may not execute raises an
 * exception (illegal or privileged instruction, access violation), not a
 * signal.  mingw-w64's gcc has no __try/__except, and a longjmp from
 * inside an exception handler would abandon Windows' exception dispatcher
 * in the middle of its work.  So the escape goes through the dispatcher's
 * own door, then jumps:
 *
 *  - a vectored exception handler, added first in the chain for the probe
 *    only (armed once, at the first counter that may fault), answers a crash exception of the probing thread by pointing
 *    the faulting context at escape() (instruction pointer, and a stack
 *    pointer a little below the faulting one, aligned as after a call)
 *    and returning EXCEPTION_CONTINUE_EXECUTION: the dispatcher finishes
 *    normally and Windows resumes the thread in escape();
 *  - escape(), now ordinary code on the thread's stack, jumps back into
 *    trial() with __builtin_longjmp (which restores the stack and frame
 *    pointers and the callee-saved registers, and unwinds nothing), and
 *    the trial reports failure;
 *  - every other exception, and every exception of every other thread,
 *    gets EXCEPTION_CONTINUE_SEARCH: it goes on to the handlers the
 *    program has (vectored, frame-based, the unhandled-exception filter)
 *    as if we were not there;
 *  - the handler is removed when the probe disarms: afterwards the
 *    library catches nothing.
 *
 * RtlCaptureContext and a resumption at the captured context would avoid
 * the jump, but on 32-bit x86 it captures its caller's caller (through
 * the frame pointer), which makes the resumption point depend on how the
 * compiler framed the function. */
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

/* What a counter's first use raises where user mode may not run it: the
 * analogues of SIGILL, SIGSEGV, SIGBUS and SIGFPE. */
static int is_crash(DWORD code)
{
  switch (code) {
    case EXCEPTION_ILLEGAL_INSTRUCTION:
    case EXCEPTION_PRIV_INSTRUCTION:
    case EXCEPTION_ACCESS_VIOLATION:
    case EXCEPTION_IN_PAGE_ERROR:
    case EXCEPTION_DATATYPE_MISALIGNMENT:
    case EXCEPTION_INT_DIVIDE_BY_ZERO:
    case EXCEPTION_INT_OVERFLOW:
      return 1;
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
      || !is_crash(e->ExceptionRecord->ExceptionCode))
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

/* The signal a POSIX system would have sent for the exception, for the
 * probe's report (cpucycles-info --explain). */
static int signal_of(DWORD code)
{
  switch (code) {
    case EXCEPTION_ILLEGAL_INSTRUCTION:
    case EXCEPTION_PRIV_INSTRUCTION:
      return SIGILL;
    case EXCEPTION_INT_DIVIDE_BY_ZERO:
    case EXCEPTION_INT_OVERFLOW:
      return SIGFPE;
    default:
      return SIGSEGV;
  }
}

/* The vectored handler is added once for the probe, only when a counter
 * that may fault is tried, and removed when the probe ends: nobody can
 * replace it, so there is nothing to check before each trial. */
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
