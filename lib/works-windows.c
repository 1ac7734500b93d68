/* Running code that may fault, with the fault turned into a return value:
 * Windows' version of works.c (counter.h's cpucycles_works).
 *
 * On Windows a counter that user mode may not execute raises an
 * exception (illegal or privileged instruction, access violation), not a
 * signal.  mingw-w64's gcc has no __try/__except, and a longjmp out of an
 * exception handler would leave Windows' exception dispatcher in the
 * middle of its work.  So the escape goes through the dispatcher's own
 * front door:
 *
 *  - before the trial, the probing thread records its registers with
 *    RtlCaptureContext, at a point where it then tests a flag;
 *  - a vectored exception handler, added for the trial only and first in
 *    the chain, answers the probing thread's crash exceptions by setting
 *    the flag and replacing the faulting context with the recorded one,
 *    and returns EXCEPTION_CONTINUE_EXECUTION: Windows resumes the thread
 *    at the recorded point (NtContinue), now with the flag set, and the
 *    trial reports failure;
 *  - every other exception, and every exception of every other thread,
 *    gets EXCEPTION_CONTINUE_SEARCH: it goes on to the handlers the
 *    program has (vectored, frame-based, the unhandled-exception filter)
 *    as if we were not there;
 *  - the handler is removed before cpucycles_works returns: afterwards
 *    the library catches nothing.
 *
 * Resuming at the recorded context is what setjmp/longjmp do, with the
 * same rule: nothing that lives in a register may change between the
 * capture and the resumption.  So the code after the capture reads only
 * a volatile static flag, and the trial's function and argument are
 * static too. */
#ifndef _WIN32
#error "works-windows.c is for Windows"
#endif

#include <windows.h>
#include "counter.h"

static CONTEXT resume;
static DWORD prober;
static void (*volatile trial_fn)(void *);
static void *volatile trial_arg;
static volatile LONG armed;
static volatile LONG faulted;

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

static LONG CALLBACK on_exception(PEXCEPTION_POINTERS e)
{
  if (!armed || GetCurrentThreadId() != prober
      || !is_crash(e->ExceptionRecord->ExceptionCode))
    return EXCEPTION_CONTINUE_SEARCH;
  armed = 0;
  faulted = 1;
  *e->ContextRecord = resume;
  return EXCEPTION_CONTINUE_EXECUTION;
}

/* Not inlined, so that the capture's frame is this function's alone and
 * lies above every frame of the trial. */
static __attribute__((noinline)) int trial(void)
{
  faulted = 0;
  RtlCaptureContext(&resume);
  /* Reached twice when the trial faults: first with faulted 0, then,
   * resumed by on_exception, with faulted 1. */
  if (faulted) return -1;
  armed = 1;
  trial_fn(trial_arg);
  armed = 0;
  return 0;
}

int cpucycles_works(void (*fn)(void *), void *arg)
{
  PVOID handler;
  int result;

  prober = GetCurrentThreadId();
  trial_fn = fn;
  trial_arg = arg;
  handler = AddVectoredExceptionHandler(1, on_exception);
  if (!handler) return -1;
  result = trial();
  armed = 0;
  RemoveVectoredExceptionHandler(handler);
  return result;
}
