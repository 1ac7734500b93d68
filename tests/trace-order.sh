#!/bin/sh
# The trace of the first call comes in order with what the program printed
# to stdout before and after it, stdout being a pipe (fully buffered): the
# library flushes the caller's stdout before writing its lines to fd 1.
client="${top_builddir:-.}/tests/trace-client"
[ -x "$client" ] || { echo "SKIP: no $client"; exit 77; }
out=$("$client" | cat) || { echo "FAIL: the client failed"; exit 1; }
printf '%s\n' "$out" | awk '
  /^client before$/ { if (state != 0) bad = "before not first"; state = 1; next }
  /^cpucycles tracesetup / { if (state != 1 && state != 2) bad = "a trace line outside the client lines"; state = 2; traced++; next }
  /^client after$/ { if (state != 2) bad = "after before the trace"; state = 3; next }
  { bad = "unexpected line: " $0 }
  END {
    if (!bad && state != 3) bad = "lines missing"
    if (bad) { print "FAIL: " bad; exit 1 }
    print "PASS: " traced " trace lines between the client lines"
  }' || { printf '%s\n' "$out"; exit 1; }
