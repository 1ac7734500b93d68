#!/bin/sh
# The shared library exports the five API symbols and nothing else, and
# its soname is libcpucycles.so.1.  Uses the nm and objdump configure found
# (NM, OBJDUMP from make check), skipped where there are none.
lib="${top_builddir:-.}/lib/.libs/libcpucycles.so"
NM=${NM:-nm}
OBJDUMP=${OBJDUMP:-objdump}
if [ ! -f "$lib" ]; then
  echo "SKIP: no shared library built ($lib)"
  exit 77
fi
for tool in "$NM" "$OBJDUMP"; do
  # shellcheck disable=SC2086
  set -- $tool
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "SKIP: no $1 (binutils) to read the library with"
    exit 77
  fi
done
# shellcheck disable=SC2086
actual=$($NM -D --defined-only "$lib" | awk '{print $3}' | sort | tr '\n' ' ')
expected="cpucycles cpucycles_implementation cpucycles_persecond cpucycles_tracesetup cpucycles_version "
if [ "$actual" != "$expected" ]; then
  echo "FAIL: exported symbols: $actual"
  echo "      expected:         $expected"
  exit 1
fi
# shellcheck disable=SC2086
soname=$($OBJDUMP -p "$lib" | awk '/SONAME/ {print $2}')
if [ "$soname" != "libcpucycles.so.1" ]; then
  echo "FAIL: soname is '$soname', expected libcpucycles.so.1"
  exit 1
fi
echo "PASS: exports and soname"
