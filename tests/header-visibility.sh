#!/bin/sh
# The public header declares the five symbols with default visibility, so
# that a program that hides its own symbols (#pragma GCC visibility
# push(hidden) around its includes, as some projects do) still links
# against the shared library: a hidden declaration would make the compiler
# address cpucycles as a local symbol, which the link then cannot find.
CC=${CC:-cc}
top_srcdir="${srcdir:-.}/.."
libdir="${top_builddir:-.}/lib/.libs"
skip() { echo "SKIP: $*"; exit 77; }
command -v "$CC" >/dev/null 2>&1 || skip "no C compiler ($CC)"
[ -f "$libdir/libcpucycles.so" ] || skip "no shared library built ($libdir)"
if nm -D "$libdir/libcpucycles.so" 2>/dev/null | grep -q -E ' U __(tsan|asan|ubsan)_'; then
  skip "the library is built with a sanitizer"
fi
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cat > "$work/client.c" <<'CEOF'
#pragma GCC visibility push(hidden)
#include <cpucycles.h>
#pragma GCC visibility pop
#include <stdio.h>
int main(void)
{
  long long t0 = cpucycles();
  long long t1 = cpucycles();
  printf("%s %s %lld\n", cpucycles_version(), cpucycles_implementation(), t1 - t0);
  cpucycles_tracesetup();
  return t1 >= t0 && cpucycles_persecond() > 0 ? 0 : 1;
}
CEOF
for pic in -fPIE -fPIC; do
  if ! "$CC" -Wall -Wextra -Werror $pic -I"$top_srcdir/include" "$work/client.c" \
       -L"$libdir" -lcpucycles -o "$work/client" > "$work/build.log" 2>&1; then
    cat "$work/build.log"
    echo "FAIL: a client including cpucycles.h under visibility hidden does not link ($pic)"
    exit 1
  fi
  if ! LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$work/client"; then
    echo "FAIL: the client did not run ($pic)"
    exit 1
  fi
done
echo "PASS: cpucycles.h under #pragma GCC visibility push(hidden)"
