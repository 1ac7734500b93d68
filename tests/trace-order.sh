#!/bin/sh
# The trace of the first call comes in order with what the program printed
# to stdout before and after it, stdout being a pipe (fully buffered): the
# library flushes the caller's stdout before writing its lines to fd 1.
# Then again with another thread holding stdout's lock (flockfile) and
# timestamping its line with cpucycles() during the traced first call: no
# deadlock, every line printed, the trace in one piece after the lines
# printed before the first call.
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
lines=$(printf '%s\n' "$out" | grep -c '^cpucycles tracesetup ')

# A deadlock is the failure looked for: the client is stopped after 60 s.
# Its stdout is a file, fully buffered as a pipe is.
tmp=$(mktemp "${TMPDIR:-/tmp}/trace-order.XXXXXX") || exit 1
trap 'rm -f "$tmp"' EXIT
if command -v timeout >/dev/null 2>&1; then
  timeout 60 "$client" held > "$tmp"
else
  "$client" held > "$tmp"
fi
status=$?
held=$(cat "$tmp")
[ "$status" -eq 0 ] || {
  printf '%s\n' "$held"
  echo "FAIL: the client with stdout held by another thread did not end well (status $status; 124: still running after 60 s)"
  exit 1
}
printf '%s\n' "$held" | awk -v lines="$lines" '
  /^client before$/ { if (state != 0) bad = "before not first"; state = 1; next }
  /^logger line at [0-9]+$/ { if (state == 0 || state == 3) bad = "the logger line outside the client lines"; if (state == 2) state = 4; logged++; next }
  /^cpucycles tracesetup / { if (state != 1 && state != 2) bad = "the trace not in one piece between the client lines"; state = 2; traced++; next }
  /^client after$/ { if (state == 0 || state == 3) bad = "after in the wrong place"; state = 3; next }
  { bad = "unexpected line: " $0 }
  END {
    if (!bad && state != 3) bad = "lines missing"
    if (!bad && logged != 1) bad = "the logger line missing"
    if (!bad && traced != lines) bad = traced " trace lines, not " lines
    if (bad) { print "FAIL: stdout held: " bad; exit 1 }
    print "PASS: stdout held by another thread: " traced " trace lines and the logger line"
  }' || { printf '%s\n' "$held"; exit 1; }

# CPUCYCLES_COUNTER=default-zero with the trace: default-zero is chosen,
# and every counter is still measured for its line, as libcpucycles' trace
# has them (cpucycles(3), ENVIRONMENT): the same lines, and the counters
# that work here with their precision, not 0.
named=$(CPUCYCLES_COUNTER=default-zero "$client" chosen | cat) ||
  { echo "FAIL: the client failed with CPUCYCLES_COUNTER=default-zero"; exit 1; }
printf '%s\n' "$named" | awk -v lines="$lines" '
  /^cpucycles tracesetup / { traced++; last = $4; if (last != "default-zero" && $6 > 0) measured++; next }
  /^client chose / { chose = $3; next }
  END {
    if (traced != lines) bad = traced " trace lines, not " lines
    else if (last != "default-zero") bad = "the default-zero line not last"
    else if (!measured) bad = "no counter measured: every precision 0"
    else if (chose != "default-zero") bad = "chose " chose ", not default-zero"
    if (bad) { print "FAIL: CPUCYCLES_COUNTER=default-zero traced: " bad; exit 1 }
    print "PASS: CPUCYCLES_COUNTER=default-zero traced: " measured " counters measured, default-zero chosen"
  }' || { printf '%s\n' "$named"; exit 1; }
