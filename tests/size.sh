#!/bin/sh
# The size only shrinks (HACKING.md, "The rules every change keeps"): the
# lines of lib/'s sources, and the .text of the stripped shared library
# where it is built as the figure was measured (x86-64, gcc 12, a plain
# ./configure: CFLAGS "-g -O2", with configure's -pthread; elsewhere that
# half says SKIP).
top="${srcdir:-tests}/.."
doc="$top/HACKING.md"
failed=0
max_lines=$(sed -n 's/.*`lib\/` at most \([0-9,]*\) lines.*/\1/p' "$doc" | tr -d ,)
max_text=$(sed -n 's/.*`\.text` at most \([0-9,]*\) bytes.*/\1/p' "$doc" | tr -d ,)
if [ -z "$max_lines" ] || [ -z "$max_text" ]; then
  echo "FAIL: $doc states no \`lib/\` at most N lines and \`.text\` at most N bytes"
  exit 1
fi

lines=$(cat "$top"/lib/*.c "$top"/lib/*.h "$top"/lib/counters/*.c | wc -l)
if [ "$lines" -gt "$max_lines" ]; then
  echo "FAIL: lib/ has $lines lines, over $doc's $max_lines"; failed=1
else
  echo "PASS: lib/ has $lines lines (at most $max_lines)"
fi

so="${top_builddir:-.}/lib/.libs/libcpucycles.so.1"
case "${CFLAGS:-}" in "-g -O2" | "-g -O2 -pthread") plain=1 ;; *) plain=0 ;; esac
if [ "${CPUCYCLES_ISA:-}" != amd64 ] || [ "$plain" = 0 ] ||
   ! ${CC:-cc} --version 2>/dev/null | head -1 | grep -q '^gcc.* 12\.' || [ ! -f "$so" ]; then
  echo "SKIP: .text: not x86-64 with gcc 12 and CFLAGS \"-g -O2\" (CC ${CC:-cc}, CFLAGS \"${CFLAGS:-}\", ISA ${CPUCYCLES_ISA:-?})"
  exit "$failed"
fi
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
cp "$so" "$tmp" && strip "$tmp" || { echo "FAIL: cannot strip a copy of $so"; exit 1; }
text=$(readelf -SW "$tmp" | awk '$2 == ".text" { print $6 }')
text=$((0x$text))
if [ "$text" -gt "$max_text" ]; then
  echo "FAIL: stripped $so .text is $text bytes, over $doc's $max_text"; failed=1
else
  echo "PASS: stripped .text is $text bytes (at most $max_text)"
fi
exit "$failed"
