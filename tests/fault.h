/* A deliberate SIGSEGV by defined means, for the tests of the crash-signal
 * catcher (lib/works.c).  A store through a null pointer is undefined
 * behaviour: a compiler may turn it into a trap or delete it, and gcc's
 * -fsanitize=undefined reports it ("store to null pointer") and exits
 * instead of letting it fault.  A store into a page mapped PROT_NONE is
 * defined: the kernel answers it with SIGSEGV, si_code SEGV_ACCERR and
 * the page's address in si_addr (on Windows a PAGE_NOACCESS page: an
 * access violation). */
#ifndef FAULT_H
#define FAULT_H

#include <signal.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <sys/mman.h>
#include <unistd.h>
#endif

static inline void *fault_page_map(void)
{
#ifdef _WIN32
  /* an access violation, which lib/works-windows.c reports as SIGSEGV */
  return VirtualAlloc(0, 4096, MEM_RESERVE | MEM_COMMIT, PAGE_NOACCESS);
#else
  void *page = mmap(0, (size_t) sysconf(_SC_PAGESIZE), PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return page == MAP_FAILED ? 0 : page;
#endif
}

static inline void fault_page_unmap(void *page)
{
#ifdef _WIN32
  VirtualFree(page, 0, MEM_RELEASE);
#else
  munmap(page, (size_t) sysconf(_SC_PAGESIZE));
#endif
}

/* The page, mapped on first use and kept for the life of the process: a
 * catcher that jumps out of the store leaves nothing to unmap.  Threads
 * racing to map it agree on one; the losers unmap theirs. */
static inline volatile int *fault_page(void)
{
  static void *page;
  void *mine, *none = 0;
  mine = __atomic_load_n(&page, __ATOMIC_ACQUIRE);
  if (mine) return mine;
  mine = fault_page_map();
  if (!mine) return 0;
  if (!__atomic_compare_exchange_n(&page, &none, mine, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    fault_page_unmap(mine);
    return none;
  }
  return mine;
}

/* Store into the page: SIGSEGV.  Where no page could be mapped, the
 * same signal is raised, so that the test still sees SIGSEGV (though not
 * a fault's siginfo). */
static inline void fault_segv(void)
{
  volatile int *p = fault_page();
  if (p)
    *p = 1;
  else
#ifdef _WIN32
    RaiseException(EXCEPTION_ACCESS_VIOLATION, 0, 0, 0);
#else
    raise(SIGSEGV);
#endif
}

#endif
