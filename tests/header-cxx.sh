#!/bin/sh
# The public header works from C++: it compiles, and the program links
# against the library (a missing extern "C" would leave mangled names).
# The C++ compiler is the one configure found (CXX, from make check);
# skipped where there is none, or where it cannot link objects of the C
# compiler that built the library (a native c++ in a cross build).
CXX=${CXX:-c++}
CC=${CC:-cc}
# shellcheck disable=SC2086
set -- $CXX
if [ "$CXX" = no ] || ! command -v "$1" >/dev/null 2>&1; then
  echo "SKIP: no C++ compiler (${CXX})"
  exit 77
fi
top_srcdir="${srcdir:-.}/.."
lib="${top_builddir:-.}/lib/.libs/libcpucycles.a"
if [ ! -f "$lib" ]; then
  echo "SKIP: no static library built ($lib)"
  exit 77
fi
# A sanitizer build's library needs that sanitizer's runtime and flags at
# link time, which a plain C++ compiler call does not have; the header is
# checked by the ordinary build.
if nm "$lib" 2>/dev/null | grep -q -E ' U __(tsan|asan|ubsan)_'; then
  echo "SKIP: the library is built with a sanitizer"
  exit 77
fi
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
echo 'int cxx_probe_c(void) { return 0; }' > "$work/probe.c"
printf '%s\n' 'extern "C" int cxx_probe_c(void);' 'int main() { return cxx_probe_c(); }' > "$work/probe.cc"
# shellcheck disable=SC2086
if ! $CC $CFLAGS -c -o "$work/probe.o" "$work/probe.c" ||
   ! $CXX $CXXFLAGS -o "$work/probe" "$work/probe.cc" "$work/probe.o"; then
  echo "SKIP: $CXX cannot link objects of $CC"
  exit 77
fi
cat > "$work/client.cc" <<'CXXEOF'
#include <cpucycles.h>
#include <cstdio>
int main()
{
  long long t0 = cpucycles();
  long long t1 = cpucycles();
  std::printf("%s %s %lld %lld\n", cpucycles_version(), cpucycles_implementation(),
              cpucycles_persecond(), t1 - t0);
  return t1 >= t0 ? 0 : 1;
}
CXXEOF
# shellcheck disable=SC2086
if ! $CXX $CXXFLAGS -Wall -Wextra -Werror -I"$top_srcdir/include" "$work/client.cc" "$lib" \
     -lpthread -o "$work/client"; then
  echo "FAIL: a C++ client does not build against cpucycles.h"
  exit 1
fi
if ! "$work/client"; then
  echo "FAIL: the C++ client did not run"
  exit 1
fi
echo "PASS: cpucycles.h from C++"
