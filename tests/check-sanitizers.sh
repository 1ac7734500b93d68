#!/usr/bin/env bash
# CI steps behind doc/security.md's promises that make check alone cannot
# show.  Each builds out of tree in a scratch directory:
#   tsan      clang -fsanitize=thread, make check (suppressions: tests/tsan.supp)
#   asan      clang -fsanitize=address,undefined -fno-sanitize-recover=all:
#             the library, src/ tools, examples, every test program and make
#             bench's programs built so (every compiler call in the logs
#             checked for the flags), then make check
#   valgrind  gcc build; make check, then every test program (each Check
#             test in its own forked child, all under memcheck) and
#             cpucycles-info under valgrind --error-exitcode --leak-check=full;
#             "total heap usage: 0 allocs" for a minimal program
#   helgrind  tests/race-client (threads racing into the first call, and one
#             meeting the published counter unsynchronised) under valgrind
#             --tool=helgrind: the probe's choice, two OS clocks named, RDTSC
#             disabled; every report fails (lib/annotate.h).  Then the
#             test-only race build (-DCPUCYCLES_TEST_RACE: the scaled
#             wrapper's state written after its publication): it must be
#             reported, or the annotations hide races
#   drd       the same under valgrind --tool=drd
#   strace    no process created, no descriptor opened without O_CLOEXEC,
#             seen from outside with strace -f
#   fuzz      tests/check-fuzz.sh (FUZZ_SECONDS per target, default 30)
# Installs clang, libclang-rt-14-dev, valgrind, strace with apt-get when
# missing.  Prints PASS/FAIL per step and, last, "N passed, N failed".
# Usage: tests/check-sanitizers.sh [step...]   (default: all steps)
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/cpucycles-sanitizers.XXXXXX")
# Readable by all: tests/check-setuid.sh runs a setuid-nobody program
# that loads the library from the build directory.
chmod 755 "$work"
jobs=$(nproc 2>/dev/null || echo 2)
passed=0
failed=0
keep=0
export DEBIAN_FRONTEND=noninteractive

pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); keep=1; }
now() { date +%s; }

install_missing() {
  local missing=() p
  command -v clang >/dev/null 2>&1 || missing+=(clang)
  # libFuzzer and the sanitizer runtimes
  [ -n "$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-* 2>/dev/null)" ] || missing+=(libclang-rt-14-dev)
  command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
  command -v strace >/dev/null 2>&1 || missing+=(strace)
  pkg-config --exists check 2>/dev/null || missing+=(check pkg-config)
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing: ${missing[*]}"
  apt-get update -q >/dev/null 2>&1
  for p in "${missing[@]}"; do apt-get install -y -q "$p" >/dev/null 2>&1 || echo "could not install $p"; done
}

# The source tree must be autoreconf'ed and not configured in place.
prepare_tree() {
  if [ ! -x "$src/configure" ]; then
    (cd "$src" && autoreconf -fi) >"$work/autoreconf.log" 2>&1 || { cat "$work/autoreconf.log"; return 1; }
  fi
  if [ -f "$src/config.status" ]; then
    echo "the source tree is configured in place: out-of-tree builds refuse it (make distclean there)"
    return 1
  fi
}

# build DIR CONFIGURE-ARGS...: configure (--enable-werror: a warning of
# the project's code fails the build) and make in $work/DIR.
build() {
  local dir=$work/$1; shift
  mkdir -p "$dir"
  (cd "$dir" && "$src/configure" --enable-werror "$@" && make -j"$jobs") >"$dir/build.log" 2>&1 || {
    tail -n 40 "$dir/build.log"; return 1; }
}

# check DIR: make check; on failure show the failing tests' logs.
check() {
  local dir=$work/$1 log
  if (cd "$dir" && make -j"$jobs" check) >"$dir/check.log" 2>&1; then
    grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR)' "$dir/check.log" | tr '\n' ' '; echo
    return 0
  fi
  grep -E '^(FAIL|ERROR|SKIP|PASS):' "$dir/check.log"
  for log in $(grep -lE '^(FAIL|ERROR)' "$dir"/tests/*.log 2>/dev/null); do
    echo "--- $log"; tail -n 60 "$log"
  done
  return 1
}

# build_extra DIR: the programs and modules built only on demand
# (EXTRA_PROGRAMS, EXTRA_LTLIBRARIES: make bench's programs, the setuid
# helper), without running them.
build_extra() {
  local dir=$work/$1 extra
  extra=$(printf 'print-extra:\n\t@echo $(EXTRA_PROGRAMS) $(EXTRA_LTLIBRARIES)\n' |
          make -s -C "$dir" -f Makefile -f - print-extra)
  # shellcheck disable=SC2086
  (cd "$dir" && make -j"$jobs" $extra) >"$dir/extra.log" 2>&1 || {
    tail -n 40 "$dir/extra.log"; return 1; }
}

# flags_reached DIR COMPILER CFLAGS LDFLAGS: every call of COMPILER that
# the build logs show (configured with --disable-silent-rules; libtool's
# own calls included) has CFLAGS word for word where it compiles (-c),
# LDFLAGS where it links (libtool keeps only the flags it knows when it
# links a shared object: -fsanitize=, not -fno-sanitize-recover=).
# Prints how many compiled and linked, or the calls without.
flags_reached() {
  local dir=$work/$1 cc=$2 cflags=$3 ldflags=$4 calls compiles links missing
  calls=$(cat "$dir/build.log" "$dir/extra.log" "$dir/check.log" |
          grep -E "^(libtool: (compile|link): +)?$cc ")
  compiles=$(printf '%s\n' "$calls" | grep -E ' -c( |$)')
  links=$(printf '%s\n' "$calls" | grep -vE ' -c( |$)')
  missing=$( { printf '%s\n' "$compiles" | grep -vF -e "$cflags"
               printf '%s\n' "$links" | grep -vF -e "$ldflags"; } | grep .)
  if [ -z "$compiles" ] || [ -z "$links" ] || [ -n "$missing" ]; then
    printf '%s\n' "${missing:-no compiler call in the logs}" | head -n 20
    return 1
  fi
  echo "$(printf '%s\n' "$compiles" | wc -l) compiler calls and $(printf '%s\n' "$links" | wc -l) links"
}

step_tsan() {
  local t0; t0=$(now)
  export TSAN_OPTIONS="suppressions=$src/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
  if build tsan CC=clang CFLAGS="-fsanitize=thread -g -O1" LDFLAGS=-fsanitize=thread && check tsan; then
    pass "tsan: make check under ThreadSanitizer ($(( $(now) - t0 ))s)"
  else
    fail "tsan: make check under ThreadSanitizer"
  fi
  unset TSAN_OPTIONS
}

step_asan() {
  local t0; t0=$(now)
  local flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1"
  # use_sigaltstack=0: the probe's catcher takes SA_ONSTACK from the
  # handler it stands in for (ASan's, on ASan's alternate stack), and
  # ASan's handling of the siglongjmp out of an alternate stack reads
  # /proc/self/maps with malloc, which test-isolation's heap watch would
  # count against the library (valgrind's run shows 0 allocations).
  export ASAN_OPTIONS="detect_leaks=1 strict_string_checks=1 detect_stack_use_after_return=1 use_sigaltstack=0 ${ASAN_OPTIONS:-}"
  export UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1 ${UBSAN_OPTIONS:-}"
  local ldflags="-fsanitize=address,undefined" calls
  # --disable-silent-rules: the logs show each compiler call, for
  # flags_reached.
  if build asan --disable-silent-rules CC=clang CFLAGS="$flags" LDFLAGS="$ldflags" &&
     build_extra asan && check asan &&
     calls=$(flags_reached asan clang "$flags" "$ldflags"); then
    pass "asan: make check under AddressSanitizer+UndefinedBehaviorSanitizer, make bench's programs built so; $calls, each with the flags ($(( $(now) - t0 ))s)"
  else
    [ -n "${calls:-}" ] && printf '%s\n' "$calls"
    fail "asan: make check under AddressSanitizer+UndefinedBehaviorSanitizer, make bench's programs built so"
  fi
  unset ASAN_OPTIONS UBSAN_OPTIONS
}

# The plain build used by the valgrind and strace steps.
plain_build() {
  [ -f "$work/plain/.built" ] && return 0
  build plain CFLAGS="-g -O1" && check plain && touch "$work/plain/.built"
}

# --fair-sched=yes: valgrind runs one thread at a time, and its default
# lock lets a thread that never makes a system call (test-reliability's
# threads spinning on cpucycles() while the main thread forks) keep it for
# minutes: fork_among_spinners timed out (120 s) on an idle machine, and
# took 24 s for the whole program with the fair lock.
# vg NAME PROGRAM ARGS...: PROGRAM under memcheck; exit 99 means a memcheck
# error (in the program or in any forked child), 77 a program that skips
# itself under valgrind (test-sandbox: seccomp), anything else nonzero a
# test failure.
vg() {
  local name=$1; shift
  local log=$work/plain/vg-$name.log status
  # The environment make check gives tests (Makefile.am AM_TESTS_ENVIRONMENT).
  (cd "$work/plain" && srcdir=$src/tests top_builddir=. && export srcdir top_builddir &&
   ./libtool --mode=execute valgrind --fair-sched=yes --error-exitcode=99 \
     --suppressions="$src/tests/valgrind.supp" \
     --leak-check=full --errors-for-leak-kinds=definite,indirect \
     --show-leak-kinds=definite,indirect --track-fds=no "$@") >"$log" 2>&1
  status=$?
  if [ "$status" -eq 0 ]; then
    pass "valgrind: $name: no memcheck error, no leak"
  elif [ "$status" -eq 77 ]; then
    echo "valgrind: $name: skipped ($(grep -m 1 "not checked" "$log"))"
  else
    grep -E '^==[0-9]+== (Invalid|Conditional|Syscall|Use of|Mismatched|[0-9,]+ bytes in)|ERROR SUMMARY: [1-9]|:[EF]:' "$log" | head -n 30
    fail "valgrind: $name (exit $status; 99 = memcheck error)"
  fi
}

step_valgrind() {
  local t0 p out allocs; t0=$(now)
  plain_build || { fail "valgrind: plain build and make check"; return; }
  for p in "$work"/plain/tests/test-*; do
    case $p in *.o|*.log|*.trs) continue ;; esac
    [ -x "$p" ] || continue
    # CK_FORK=yes (the default): each test keeps its fresh first call, and
    # valgrind follows every forked child.
    CK_DEFAULT_TIMEOUT=300 vg "$(basename "$p")" "tests/$(basename "$p")"
  done
  vg cpucycles-info src/cpucycles-info
  # A minimal program that uses the library and writes with write(2):
  # whatever valgrind counts is the library's (and the loader's).
  out=$(cd "$work/plain" && valgrind tests/test-reliability minimal 2>&1)
  allocs=$(printf '%s\n' "$out" | sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p')
  if [ "$allocs" = "0" ]; then
    pass "valgrind: minimal program: total heap usage: 0 allocs"
  else
    printf '%s\n' "$out" | tail -n 15
    fail "valgrind: minimal program: total heap usage: ${allocs:-?} allocs"
  fi
  echo "valgrind steps: $(( $(now) - t0 ))s"
}

# race_log TOOL DIR LABEL [VAR=VALUE...] -- [ARGS...]: tests/race-client of
# the build in DIR under valgrind's race detector TOOL, into
# $work/DIR/TOOL-LABEL.log; its exit status (99: reports).
race_log() {
  local tool=$1 dir=$work/$2 label=$3
  shift 3
  local vars=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  (cd "$dir" && env "${vars[@]}" ./libtool --mode=execute \
     valgrind --tool="$tool" --error-exitcode=99 tests/race-client "$@") >"$dir/$tool-$label.log" 2>&1
}

# race_run TOOL LABEL [VAR=VALUE...] -- [ARGS...]: tests/race-client of the
# plain build under TOOL; a report (exit 99) or a client failure fails,
# exit 77 means the case does not exist on this machine.
race_run() {
  local tool=$1 label=$2 log status
  shift 2
  log=$work/plain/$tool-$label.log
  race_log "$tool" plain "$label" "$@"
  status=$?
  case $status in
    0) pass "$tool: racing client, $label: $(grep -oE 'ERROR SUMMARY: [0-9]+ errors' "$log" | head -n 1) ($(grep -E '^[a-z0-9]+-[a-z0-9-]+$' "$log" | tail -n 1))" ;;
    77) echo "$tool: racing client, $label: not on this machine" ;;
    *) grep -E 'ERROR SUMMARY|Possible data race|Conflicting (load|store)|^==[0-9]+==    (at|by) ' "$log" | head -n 40
       fail "$tool: racing client, $label (exit $status; 99 = reports)" ;;
  esac
}

race_steps() {
  local tool=$1
  plain_build || { fail "$tool: plain build and make check"; return; }
  race_run "$tool" probe --
  race_run "$tool" default-monotonic CPUCYCLES_COUNTER=default-monotonic --
  race_run "$tool" default-gettimeofday CPUCYCLES_COUNTER=default-gettimeofday --
  race_run "$tool" rdtsc-disabled -- no-tsc
}

# race_seen TOOL: the test-only race build's client under TOOL, with a
# scaled counter: the wrapper's state written after its publication
# (lib/adapters.c) must be reported, as that write (publish_wrapper) or as
# the read it conflicts with (scaled_read): which side a report names
# depends on the threads' timing (DRD gives no stack for a thread that
# has finished).
race_seen() {
  local tool=$1 dir=$work/race log status
  if [ ! -f "$dir/.built" ]; then
    build race CFLAGS="-g -O1" CPPFLAGS=-DCPUCYCLES_TEST_RACE &&
      (cd "$dir" && make tests/race-client) >>"$dir/build.log" 2>&1 &&
      touch "$dir/.built" || { fail "$tool: test-only race build"; return; }
  fi
  log=$dir/$tool-race.log
  race_log "$tool" race race CPUCYCLES_COUNTER=default-monotonic --
  status=$?
  if [ "$status" -eq 99 ] && grep -qE '(publish_wrapper|scaled_read) \(adapters\.c' "$log"; then
    pass "$tool: test-only race build, default-monotonic: the race reported ($(grep -oE 'ERROR SUMMARY: [0-9]+ errors' "$log" | head -n 1))"
  else
    tail -n 30 "$log"
    fail "$tool: test-only race build, default-monotonic: the race not reported (exit $status)"
  fi
}

step_helgrind() { race_steps helgrind; race_seen helgrind; }
step_drd() { race_steps drd; race_seen drd; }

step_strace() {
  local log=$work/plain/strace.log bad
  plain_build || { fail "strace: plain build"; return; }
  (cd "$work/plain" && strace -f -qq -o "$log" \
     -e trace=process,open,openat,openat2,creat,pipe,pipe2,dup,dup2,dup3,socket,perf_event_open \
     tests/test-reliability minimal) >/dev/null 2>&1 || { fail "strace: could not run"; return; }
  bad=$(grep -cE '(^| )(clone|clone3|fork|vfork)\(' "$log")
  if [ "$bad" -eq 0 ] && [ "$(grep -c 'execve(' "$log")" -eq 1 ]; then
    pass "strace: one execve (the program's own), no fork/clone/vfork"
  else
    grep -E 'execve\(|clone|fork' "$log"; fail "strace: a process was started"
  fi
  bad=$(grep -E '(open|openat|openat2|creat)\(' "$log" | grep -v 'O_CLOEXEC' | grep -v ' = -1 ')
  if [ -z "$bad" ] && ! grep -qE '(pipe|pipe2|dup|dup2|dup3|socket)\(' "$log"; then
    pass "strace: every descriptor opened close-on-exec ($(grep -cE '(open|openat)\(' "$log") opens)"
  else
    printf '%s\n' "$bad"; fail "strace: a descriptor opened without O_CLOEXEC"
  fi
  echo "files the first call looked at:"
  grep -E 'openat\(' "$log" | grep -vE '\.so|ld\.so\.cache' | sed 's/^[0-9]* */  /'
}

step_fuzz() {
  local out line p f t0; t0=$(now)
  out=$("$src/tests/check-fuzz.sh" 2>&1)
  printf '%s\n' "$out" | sed 's/^/  fuzz: /'
  line=$(printf '%s\n' "$out" | tail -n 1)
  p=$(echo "$line" | sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1/p')
  f=$(echo "$line" | sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\2/p')
  if [ -n "$p" ] && [ "$f" = 0 ]; then
    pass "fuzz: $p steps ($(( $(now) - t0 ))s)"
  else
    fail "fuzz: ${f:-?} of $(( ${p:-0} + ${f:-0} )) steps failed"
  fi
}

start=$(now)
install_missing
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(tsan asan valgrind helgrind drd strace fuzz)
if prepare_tree; then
  for s in "${steps[@]}"; do
    echo "== $s"
    "step_$s"
  done
else
  fail "source tree not usable for out-of-tree builds"
fi
echo "total: $(( $(now) - start ))s"
[ "$keep" -eq 1 ] && echo "scratch kept in $work" || rm -rf "$work"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
