#!/bin/sh
# check-darwin.sh: default-mach, the macOS and iOS counter, compiles for
# Darwin and only for Darwin.
#
# This project has no Apple machine and no SDK, so default-mach has never
# run (doc/counters.md).  What can be shown here: clang compiles the
# counter file into an object for x86-64 and arm64 Darwin targets, against
# tests/darwin/ (declarations that match the SDK's <mach/mach_time.h>), as
# configure would there; and the file refuses (#error) for Linux targets,
# as configure relies on.  Ends with "N passed, N failed".
set -u
srcdir=$(cd "$(dirname "$0")/.." && pwd)
CLANG=${CLANG:-clang}
NM=${NM:-llvm-nm}  # binutils' nm does not read Mach-O
passed=0 failed=0
if ! command -v "$CLANG" > /dev/null 2>&1 || ! command -v "$NM" > /dev/null 2>&1; then
  apt-get install -y -q clang llvm > /dev/null 2>&1 || true
fi
if ! command -v "$CLANG" > /dev/null 2>&1 || ! command -v "$NM" > /dev/null 2>&1; then
  echo "FAIL: no $CLANG or $NM"
  echo "0 passed, 1 failed"
  exit 1
fi
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT

compile() { # target, output; the compiler's messages in $work/log
  "$CLANG" --target="$1" -std=c11 -O2 -Wall -Wextra -Werror \
    -ffreestanding -nostdlibinc -isystem "$srcdir/tests/darwin" \
    -I"$srcdir/lib" -I"$srcdir/include" \
    -c "$srcdir/lib/counters/default-mach.c" -o "$2" > "$work/log" 2>&1
}

for target in x86_64-apple-macos10.15 arm64-apple-macos11 arm64-apple-ios14; do
  if compile "$target" "$work/default-mach-$target.o" &&
     "$NM" "$work/default-mach-$target.o" 2>/dev/null | grep -q ' _cpucycles_counter_default_mach$'; then
    echo "PASS: default-mach compiles for $target"
    passed=$((passed + 1))
  else
    cat "$work/log"
    echo "FAIL: default-mach does not compile for $target"
    failed=$((failed + 1))
  fi
done
for target in x86_64-linux-gnu aarch64-linux-gnu; do
  if compile "$target" "$work/linux.o"; then
    echo "FAIL: default-mach compiles for $target (it must refuse off Darwin)"
    failed=$((failed + 1))
  elif grep -q 'default-mach needs macOS or iOS' "$work/log"; then
    echo "PASS: default-mach refuses $target"
    passed=$((passed + 1))
  else
    cat "$work/log"
    echo "FAIL: default-mach fails for $target, but not with its #error"
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
