#!/bin/sh
# The shared library exports the five API symbols and nothing else.
lib="${top_builddir:-.}/lib/.libs/libcpucycles.so"
if [ ! -f "$lib" ]; then
  echo "SKIP: no shared library built ($lib)"
  exit 77
fi
actual=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort | tr '\n' ' ')
expected="cpucycles cpucycles_implementation cpucycles_persecond cpucycles_tracesetup cpucycles_version "
if [ "$actual" != "$expected" ]; then
  echo "FAIL: exported symbols: $actual"
  echo "      expected:         $expected"
  exit 1
fi
soname=$(objdump -p "$lib" | awk '/SONAME/ {print $2}')
if [ "$soname" != "libcpucycles.so.1" ]; then
  echo "FAIL: soname is '$soname', expected libcpucycles.so.1"
  exit 1
fi
echo "PASS: exports and soname"
