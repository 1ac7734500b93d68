/* What only Windows has: the probe's exception catcher (works-windows.c),
 * the one-time initialisation (once-windows.c), the registry's CPU
 * frequency (persecond-windows.c) and the QueryPerformanceCounter counter
 * (default-qpc).  Built and run by tests/check-windows.sh, under wine. */
#include <config.h>
#include <check.h>
#include "check-run.h"
#include <stdio.h>
#include <wchar.h>
#include <string.h>
#include <windows.h>
#include "counter.h"
#include "works-once.h"
#include "once-windows.h"
#include "persecond.h"
#include "persecond-windows.h"

/* ---- works-windows.c ---- */

static volatile int reached;

static void illegal_instruction(void *arg)
{
  (void) arg;
  reached = 1;
  __asm__ volatile ("ud2");
  reached = 2;
}

static void privileged_instruction(void *arg)
{
  (void) arg;
  reached = 1;
  __asm__ volatile ("hlt");
  reached = 2;
}

static void access_violation(void *arg)
{
  volatile int *nowhere = (volatile int *) arg;
  reached = 1;
  *nowhere = 1;
  reached = 2;
}

static void divide_by_zero(void *arg)
{
  volatile int zero = 0, seven = 7; /* unknown to the compiler: a real idiv */
  volatile int x;
  (void) arg;
  reached = 1;
  x = seven / zero;
  (void) x;
  reached = 2;
}

static void returns(void *arg)
{
  *(int *) arg += 1;
}

START_TEST(crash_exceptions_are_caught)
{
  static void (*const crashes[])(void *) = {
    illegal_instruction, privileged_instruction, access_violation,
    divide_by_zero,
  };
  size_t i;
  for (i = 0; i < sizeof crashes / sizeof crashes[0]; i++) {
    reached = 0;
    ck_assert_msg(cpucycles_works(crashes[i], 0) == -1, "crash %d not caught",
                  (int) i);
    ck_assert_int_eq(reached, 1);
  }
}
END_TEST

START_TEST(a_function_that_returns_works)
{
  int calls = 0;
  ck_assert_int_eq(cpucycles_works(returns, &calls), 0);
  ck_assert_int_eq(cpucycles_works(returns, &calls), 0);
  ck_assert_int_eq(calls, 2);
  /* and after a crash, a working function still works */
  ck_assert_int_eq(cpucycles_works(illegal_instruction, 0), -1);
  ck_assert_int_eq(cpucycles_works(returns, &calls), 0);
  ck_assert_int_eq(calls, 3);
}
END_TEST

/* The program's own handler, behind ours in the chain. */
static volatile LONG program_saw;
static volatile DWORD program_saw_thread;

#define PROGRAM_EXCEPTION 0xE0C0FFEE

static LONG CALLBACK program_handler(PEXCEPTION_POINTERS e)
{
  DWORD code = e->ExceptionRecord->ExceptionCode;
  if (code == PROGRAM_EXCEPTION) {
    InterlockedIncrement(&program_saw);
    program_saw_thread = GetCurrentThreadId();
    return EXCEPTION_CONTINUE_EXECUTION; /* continuable: RaiseException returns */
  }
  if (code == EXCEPTION_ACCESS_VIOLATION) {
    InterlockedIncrement(&program_saw);
    program_saw_thread = GetCurrentThreadId();
    /* skip the faulting "mov %eax,(%rdx)": 2 bytes, see fault_at_null */
#ifdef _WIN64
    e->ContextRecord->Rip += 2;
#else
    e->ContextRecord->Eip += 2;
#endif
    return EXCEPTION_CONTINUE_EXECUTION;
  }
  return EXCEPTION_CONTINUE_SEARCH;
}

/* A write to address 0 with a known two-byte instruction. */
static void fault_at_null(void)
{
#ifdef _WIN64
  __asm__ volatile ("xor %%edx, %%edx\n\tmov %%eax, (%%rdx)" ::: "rdx", "memory");
#else
  __asm__ volatile ("xor %%edx, %%edx\n\tmov %%eax, (%%edx)" ::: "edx", "memory");
#endif
}

static DWORD WINAPI other_thread_faults(LPVOID arg)
{
  (void) arg;
  fault_at_null();
  return 0;
}

/* A crash in another thread during the probe is that thread's, not ours:
 * it reaches the program's handler, and the trial is not disturbed. */
static void trial_with_a_crashing_thread(void *arg)
{
  HANDLE t = CreateThread(0, 0, other_thread_faults, 0, 0, 0);
  ck_assert_ptr_nonnull(t);
  WaitForSingleObject(t, INFINITE);
  CloseHandle(t);
  *(int *) arg = 1;
}

START_TEST(another_threads_crash_goes_to_its_handler)
{
  int finished = 0;
  PVOID h = AddVectoredExceptionHandler(0, program_handler);
  ck_assert_ptr_nonnull(h);
  program_saw = 0;
  ck_assert_int_eq(cpucycles_works(trial_with_a_crashing_thread, &finished), 0);
  ck_assert_int_eq(finished, 1);
  ck_assert_int_eq(program_saw, 1);
  ck_assert(program_saw_thread != GetCurrentThreadId());
  RemoveVectoredExceptionHandler(h);
}
END_TEST

static void raises_a_program_exception(void *arg)
{
  RaiseException(PROGRAM_EXCEPTION, 0, 0, 0);
  *(int *) arg = 1;
}

/* An exception that is not a crash goes on to the program's handlers even
 * from the probing thread. */
START_TEST(other_exceptions_go_to_the_program)
{
  int finished = 0;
  PVOID h = AddVectoredExceptionHandler(0, program_handler);
  ck_assert_ptr_nonnull(h);
  program_saw = 0;
  ck_assert_int_eq(cpucycles_works(raises_a_program_exception, &finished), 0);
  ck_assert_int_eq(finished, 1);
  ck_assert_int_eq(program_saw, 1);
  RemoveVectoredExceptionHandler(h);
}
END_TEST

/* Afterwards the library catches nothing: the probing thread's own crash
 * reaches the program's handler, put first in the chain before the
 * probe (ours went in front of it during the probe, and is gone). */
START_TEST(nothing_is_caught_afterwards)
{
  PVOID h = AddVectoredExceptionHandler(1, program_handler);
  ck_assert_ptr_nonnull(h);
  ck_assert_int_eq(cpucycles_works(illegal_instruction, 0), -1);
  program_saw = 0;
  fault_at_null();
  ck_assert_int_eq(program_saw, 1);
  ck_assert(program_saw_thread == GetCurrentThreadId());
  RemoveVectoredExceptionHandler(h);
}
END_TEST

/* ---- once-windows.c ---- */

static volatile LONG initialisations;
static volatile LONG finished_initialisations;

static void slow_initialisation(void)
{
  InterlockedIncrement(&initialisations);
  Sleep(50); /* so that the other threads arrive while it runs */
  InterlockedIncrement(&finished_initialisations);
}

static DWORD WINAPI racer(LPVOID arg)
{
  HANDLE start = arg;
  WaitForSingleObject(start, INFINITE);
  cpucycles_once_windows(slow_initialisation);
  /* no caller returns before the initialisation has finished */
  return (DWORD) finished_initialisations;
}

START_TEST(once_runs_once_and_everyone_waits)
{
  HANDLE start = CreateEventA(0, TRUE, FALSE, 0);
  HANDLE t[16];
  int i;
  ck_assert_ptr_nonnull(start);
  for (i = 0; i < 16; i++) {
    t[i] = CreateThread(0, 0, racer, start, 0, 0);
    ck_assert_ptr_nonnull(t[i]);
  }
  SetEvent(start);
  for (i = 0; i < 16; i++) {
    DWORD seen = 0;
    WaitForSingleObject(t[i], INFINITE);
    GetExitCodeThread(t[i], &seen);
    ck_assert_int_eq(seen, 1);
    CloseHandle(t[i]);
  }
  cpucycles_once_windows(slow_initialisation);
  ck_assert_int_eq(initialisations, 1);
  CloseHandle(start);
}
END_TEST

/* ---- persecond-windows.c ---- */

#define TEST_KEY L"Software\\libcpucycles-tests"

static wchar_t subkey[128];

static void key_setup(void)
{
  HKEY k;
  swprintf(subkey, sizeof subkey / sizeof subkey[0], TEST_KEY L"\\%lu",
           (unsigned long) GetCurrentProcessId());
  ck_assert_int_eq(RegCreateKeyExW(HKEY_CURRENT_USER, subkey, 0, 0, 0,
                                   KEY_ALL_ACCESS, 0, &k, 0), ERROR_SUCCESS);
  RegCloseKey(k);
}

static void key_teardown(void)
{
  RegDeleteKeyW(HKEY_CURRENT_USER, subkey);
}

static void put_value(DWORD type, const void *data, DWORD size)
{
  HKEY k;
  ck_assert_int_eq(RegOpenKeyExW(HKEY_CURRENT_USER, subkey, 0, KEY_SET_VALUE,
                                 &k), ERROR_SUCCESS);
  ck_assert_int_eq(RegSetValueExW(k, CPUCYCLES_REGISTRY_MHZ, 0, type,
                                  (const BYTE *) data, size), ERROR_SUCCESS);
  RegCloseKey(k);
}

static long long from_registry(void)
{
  long long hz = -7;
  if (cpucycles_persecond_from_registry(HKEY_CURRENT_USER, subkey, &hz) != 0)
    ck_assert_int_eq(hz, -7); /* left alone when refused */
  return hz;
}

static void put_mhz(DWORD mhz)
{
  put_value(REG_DWORD, &mhz, sizeof mhz);
}

START_TEST(registry_mhz_in_range)
{
  put_mhz(2400);
  ck_assert_int_eq(from_registry(), 2400000000LL);
  put_mhz(1);
  ck_assert_int_eq(from_registry(), 1000000LL);
  put_mhz(100000);
  ck_assert_int_eq(from_registry(), 100000000000LL);
}
END_TEST

START_TEST(registry_mhz_out_of_range)
{
  put_mhz(0);
  ck_assert_int_eq(from_registry(), -7);
  put_mhz(100001);
  ck_assert_int_eq(from_registry(), -7);
  put_mhz(0xffffffff);
  ck_assert_int_eq(from_registry(), -7);
}
END_TEST

START_TEST(registry_value_of_another_type)
{
  unsigned long long q = 2400;
  unsigned char two[2] = { 0x60, 0x09 };
  DWORD d = 2400;
  put_value(REG_SZ, L"2400", sizeof L"2400");
  ck_assert_int_eq(from_registry(), -7);
  put_value(REG_QWORD, &q, sizeof q);
  ck_assert_int_eq(from_registry(), -7);
  put_value(REG_BINARY, &d, sizeof d);
  ck_assert_int_eq(from_registry(), -7);
  put_value(REG_BINARY, two, sizeof two);
  ck_assert_int_eq(from_registry(), -7);
  put_value(REG_DWORD_BIG_ENDIAN, &d, sizeof d);
  ck_assert_int_eq(from_registry(), -7);
}
END_TEST

START_TEST(registry_value_or_key_missing)
{
  long long hz = -7;
  ck_assert_int_eq(from_registry(), -7); /* the key, no value */
  ck_assert_int_eq(cpucycles_persecond_from_registry(HKEY_CURRENT_USER,
                   TEST_KEY L"\\no such key", &hz), -1);
  ck_assert_int_eq(hz, -7);
}
END_TEST

/* The real system: the registry's value, when Windows (or wine) records
 * a plausible one, comes before the environment variable. */
START_TEST(estimate_prefers_the_registry)
{
  long long registry = 0;
  long long hz = cpucycles_persecond_estimate("", "1234567890");
  if (cpucycles_persecond_from_registry(HKEY_LOCAL_MACHINE,
                                        CPUCYCLES_REGISTRY_CPU0,
                                        &registry) == 0)
    ck_assert_int_eq(hz, registry);
  else
    ck_assert_int_eq(hz, 1234567890LL);
  hz = cpucycles_persecond_estimate("", 0);
  ck_assert_int_ge(hz, 1000000LL);
  ck_assert_int_le(hz, 100000000000LL);
}
END_TEST

/* ---- default-qpc ---- */

extern const struct counter cpucycles_counter_default_qpc;

START_TEST(qpc_is_an_os_clock_at_qpf)
{
  struct counter_info info;
  LARGE_INTEGER f;
  long long a, b;
  int i;
  memset(&info, 0, sizeof info);
  ck_assert_str_eq(cpucycles_counter_default_qpc.name, "default-qpc");
  ck_assert_int_eq(cpucycles_counter_default_qpc.setup(&info), 0);
  QueryPerformanceFrequency(&f);
  ck_assert_int_eq(info.kind, COUNTER_OSCLOCK);
  ck_assert_int_eq(info.frequency, f.QuadPart);
  ck_assert_int_eq(info.only32, 0);
  a = cpucycles_counter_default_qpc.read();
  for (i = 0; i < 1000000; i++) {
    b = cpucycles_counter_default_qpc.read();
    ck_assert_int_ge(b, a);
    if (b > a) break;
    a = b;
  }
  ck_assert_int_gt(b, a);
}
END_TEST

/* In the probe's table, in the order of lib/counters/order: after the
 * TSC counters, before default-gettimeofday. */
START_TEST(qpc_is_in_the_table)
{
  int i, qpc = -1, tsc = -1, gettimeofday = -1;
  for (i = 0; i < cpucycles_counter_count; i++) {
    const char *name = cpucycles_counter_table[i]->name;
    if (strcmp(name, "default-qpc") == 0) qpc = i;
    if (strstr(name, "-tsc")) tsc = i;
    if (strcmp(name, "default-gettimeofday") == 0) gettimeofday = i;
  }
  ck_assert_int_ge(qpc, 0);
  ck_assert_int_gt(qpc, tsc);
  ck_assert(gettimeofday < 0 || gettimeofday > qpc);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("windows");
  TCase *t;

  t = tcase_create("works");
  tcase_add_test(t, crash_exceptions_are_caught);
  tcase_add_test(t, a_function_that_returns_works);
  tcase_add_test(t, another_threads_crash_goes_to_its_handler);
  tcase_add_test(t, other_exceptions_go_to_the_program);
  tcase_add_test(t, nothing_is_caught_afterwards);
  suite_add_tcase(s, t);

  t = tcase_create("once");
  tcase_add_test(t, once_runs_once_and_everyone_waits);
  suite_add_tcase(s, t);

  t = tcase_create("registry");
  tcase_add_checked_fixture(t, key_setup, key_teardown);
  tcase_add_test(t, registry_mhz_in_range);
  tcase_add_test(t, registry_mhz_out_of_range);
  tcase_add_test(t, registry_value_of_another_type);
  tcase_add_test(t, registry_value_or_key_missing);
  tcase_add_test(t, estimate_prefers_the_registry);
  suite_add_tcase(s, t);

  t = tcase_create("qpc");
  tcase_add_test(t, qpc_is_an_os_clock_at_qpf);
  tcase_add_test(t, qpc_is_in_the_table);
  suite_add_tcase(s, t);
  return run_suite(s);
}
