#!/bin/sh
# The public header defines libcpucycles' include guard, cpucycles_h, as
# well as its own: a program that tests #ifdef cpucycles_h after including
# it (to know that the API is declared) sees the header it expects.  It
# may be included twice, and a program that defines cpucycles_h itself
# before including it still gets the declarations.
CC=${CC:-cc}
top_srcdir="${srcdir:-.}/.."
command -v "$CC" >/dev/null 2>&1 || { echo "SKIP: no C compiler ($CC)"; exit 77; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cat > "$work/guard.c" <<'CEOF'
#include <cpucycles.h>
#include <cpucycles.h>
#ifndef cpucycles_h
#error "cpucycles.h does not define libcpucycles' guard cpucycles_h"
#endif
#ifndef CPUCYCLES_H
#error "cpucycles.h does not define its guard CPUCYCLES_H"
#endif
long long (**guard_pointer)(void) = &cpucycles;
CEOF
cat > "$work/predefined.c" <<'CEOF'
#define cpucycles_h 1
#include <cpucycles.h>
long long (**guard_pointer)(void) = &cpucycles;
void guard_trace(void) { cpucycles_tracesetup(); }
CEOF
for c in guard predefined; do
  # shellcheck disable=SC2086
  if ! "$CC" $CFLAGS -Wall -Wextra -Werror -I"$top_srcdir/include" -c \
       -o "$work/$c.o" "$work/$c.c" > "$work/$c.log" 2>&1; then
    cat "$work/$c.log"
    echo "FAIL: $c.c does not compile against cpucycles.h"
    exit 1
  fi
done
echo "PASS: cpucycles.h defines cpucycles_h and CPUCYCLES_H"
