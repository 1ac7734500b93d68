#!/usr/bin/env bash
# Fuzzes every parser of outside text (fuzz/*.c, libFuzzer with ASan and
# UBSan): replays the committed seed corpus fuzz/corpus/<target>/, then
# fuzzes each target for FUZZ_SECONDS (default 30) from that corpus.
# New inputs go to a scratch directory, never into the tree.  A crash, a
# sanitizer report or a failed assertion in a target fails its step; the
# input that did it is kept and its path printed.
#
# Prints PASS/FAIL per step and, last, "N passed, N failed".
# Usage: tests/check-fuzz.sh [target...]     (from anywhere)
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
seconds=${FUZZ_SECONDS:-30}
work=$(mktemp -d "${TMPDIR:-/tmp}/cpucycles-fuzz.XXXXXX")
keep=0
passed=0
failed=0
export DEBIAN_FRONTEND=noninteractive

pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
finish() {
  [ "$keep" -eq 1 ] || rm -rf "$work"
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit $?
}

need() { # command, packages...
  command -v "$1" >/dev/null 2>&1 && return 0
  shift
  apt-get update -q >/dev/null 2>&1
  apt-get install -y -q "$@" >/dev/null 2>&1
}
need clang clang libclang-rt-14-dev
# The fuzzer runtime comes from libclang-rt-*-dev, not from clang itself.
printf 'int LLVMFuzzerTestOneInput(const char*d,unsigned long n){(void)d;(void)n;return 0;}\n' > "$work/probe.c"
if ! clang -fsanitize=fuzzer "$work/probe.c" -o "$work/probe" >/dev/null 2>&1; then
  apt-get install -y -q libclang-rt-14-dev >/dev/null 2>&1
  clang -fsanitize=fuzzer "$work/probe.c" -o "$work/probe" >"$work/probe.log" 2>&1 || {
    cat "$work/probe.log"; fail "clang cannot build libFuzzer targets"; finish; }
fi

CFLAGS="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE -pthread"
INC="-I$src/lib -I$src/include -I$src/fuzz"
sources() {
  case $1 in
    select_name) echo "$src/lib/select.c $src/lib/works.c $src/lib/multiplier.c $src/lib/adapters.c $src/lib/multiplier-sys.c $src/lib/osclock.c $src/lib/readfile.c $src/lib/counters/default-zero.c" ;;
    *) echo "$src/lib/persecond.c $src/lib/readfile.c" ;;
  esac
}

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$src"/fuzz/*.c; do targets+=("$(basename "$f" .c)"); done
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
for t in "${targets[@]}"; do
  bin=$work/$t
  start=$(date +%s)
  # shellcheck disable=SC2046
  if ! clang $CFLAGS $INC "$src/fuzz/$t.c" $(sources "$t") -o "$bin" >"$work/$t.build.log" 2>&1; then
    cat "$work/$t.build.log"; fail "$t: build"; continue
  fi
  pass "$t: build"
  seeds=$src/fuzz/corpus/$t
  if [ ! -d "$seeds" ] || [ -z "$(ls -A "$seeds")" ]; then
    fail "$t: no seed corpus in fuzz/corpus/$t"; continue
  fi
  if "$bin" -runs=0 "$seeds" >"$work/$t.replay.log" 2>&1; then
    pass "$t: replay $(ls "$seeds" | wc -l) seeds"
  else
    tail -n 30 "$work/$t.replay.log"; fail "$t: replay"; keep=1
  fi
  mkdir -p "$work/$t.corpus" "$work/$t.crashes"
  if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="$work/$t.crashes/" -print_final_stats=1 \
       "$work/$t.corpus" "$seeds" >"$work/$t.fuzz.log" 2>&1; then
    runs=$(grep -E '^stat::number_of_executed_units' "$work/$t.fuzz.log" | awk '{print $2}')
    pass "$t: fuzzed ${seconds}s, ${runs:-?} runs, $(( $(date +%s) - start ))s with build"
  else
    tail -n 40 "$work/$t.fuzz.log"
    fail "$t: fuzzing found a failure; input kept in $work/$t.crashes/"; keep=1
  fi
done
finish
