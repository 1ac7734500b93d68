#!/bin/sh
# cpucycles-info: every line it prints parsed back with the patterns a
# script reading the original's output would use, in the original's order;
# the numbers checked against each other where the line says how they
# relate; the options' exit codes and streams, and that none of them runs
# the probe.
info="${top_builddir:-.}/src/cpucycles-info"
if [ ! -x "$info" ]; then
  echo "SKIP: $info not built"
  exit 77
fi
# The probe as a user gets it, whatever the caller's environment says.
unset CPUCYCLES_COUNTER cpucyclespersecond
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
failed=0
fail() {
  echo "FAIL: $*"
  failed=1
}

# --- the report ---------------------------------------------------------
"$info" > "$work/out" 2> "$work/err"
rc=$?
[ "$rc" -eq 0 ] || fail "cpucycles-info exited $rc"
[ -s "$work/err" ] && fail "cpucycles-info wrote to stderr: $(cat "$work/err")"

# Each line, in order: which kind it is (v t p i q o), or x for a line
# that matches no format.
kinds=$(awk '
  /^cpucycles version [^ ]+$/ { print "v"; next }
  /^cpucycles tracesetup [0-9]+ [a-z0-9-]+ precision -?[0-9]+ scaling [0-9]+\.[0-9]+ only32 [01]$/ { print "t"; next }
  /^cpucycles persecond [0-9]+$/ { print "p"; next }
  /^cpucycles implementation [a-z0-9-]+$/ { print "i"; next }
  /^cpucycles iqm -?[0-9]+ ([+-][0-9]+)+$/ { print "q"; next }
  /^cpucycles observed persecond [0-9]+\.\.\.[0-9]+ with [0-9]+ loops [0-9]+ microseconds$/ { print "o"; next }
  { print "x" }' "$work/out" | tr -d '\n')
echo "$kinds" | grep -E -q '^vt*piqo*$' ||
  fail "line kinds in order v t* p i q o* expected, got $kinds:
$(cat "$work/out")"

version=$(sed -n 's/^cpucycles version //p' "$work/out")
[ -n "$version" ] || fail "no version line"

# tracesetup lines are numbered from 0 in order, and the chosen counter is
# one of them.
awk '/^cpucycles tracesetup / { if ($3 != n) exit 1; n++ }' "$work/out" ||
  fail "tracesetup lines not numbered 0, 1, 2, ..."
implementation=$(sed -n 's/^cpucycles implementation //p' "$work/out")
if grep -q '^cpucycles tracesetup ' "$work/out"; then
  awk -v name="$implementation" '$2 == "tracesetup" && $4 == name { found = 1 }
    END { exit !found }' "$work/out" ||
    fail "implementation $implementation is not among the tracesetup lines"
fi

# The tracesetup lines are libcpucycles' list for the ISA (configure's
# CPUCYCLES_ISA): the ISA's counters and the default-* counters of
# lib/counters/order, in its order, built or not, then default-zero; a
# counter marked "own" (this library's alone) only where it is built.
order="${srcdir:-tests}/../lib/counters/order"
if [ -n "${CPUCYCLES_ISA:-}" ] && [ -f "$order" ]; then
  traced=$(sed -n 's/^cpucycles tracesetup [0-9]* \([^ ]*\) .*/\1/p' "$work/out" | tr '\n' ' ')
  expected=$(sed -e 's/#.*//' "$order" | awk -v isa="$CPUCYCLES_ISA" -v traced=" $traced" '
    NF == 0 { next }
    { name = $1; prefix = name; sub(/-.*/, "", prefix) }
    $2 == "own" { if (index(traced, " " name " ")) printf "%s ", name; next }
    prefix == isa || prefix == "default" { printf "%s ", name }
    END { printf "default-zero " }')
  [ "$traced" = "$expected" ] ||
    fail "tracesetup lines: $traced
libcpucycles' list for $CPUCYCLES_ISA: $expected"
  # On x86-64 Linux, the lines and indexes of libcpucycles' own trace.
  if [ "$CPUCYCLES_ISA" = amd64 ] && [ "$(uname -s)" = Linux ]; then
    [ "$(grep -c '^cpucycles tracesetup ' "$work/out")" -eq 10 ] ||
      fail "x86-64 Linux: $(grep -c '^cpucycles tracesetup ' "$work/out") tracesetup lines, libcpucycles prints 10"
    grep -q '^cpucycles tracesetup 6 default-mach precision 0 scaling 0\.000000 only32 0$' "$work/out" ||
      fail "x86-64 Linux: no dropped default-mach line at 6"
    grep -q '^cpucycles tracesetup 7 default-monotonic ' "$work/out" ||
      fail "x86-64 Linux: default-monotonic not at 7"
    grep -q '^cpucycles tracesetup 9 default-zero precision 0 scaling 0\.000000 only32 0$' "$work/out" ||
      fail "x86-64 Linux: default-zero not at 9"
  fi
else
  echo "note: CPUCYCLES_ISA or $order missing: the list is not checked"
fi

# iqm: exactly 64 signed deviations; the 64 differences they give back
# (iqm + deviation) have, as interquartile mean, the printed iqm: the mean
# of the middle 32 once sorted, rounded to the nearest integer.
grep '^cpucycles iqm ' "$work/out" | awk '{
    iqm = $3; s = $4; n = 0
    while (s != "") {
      if (!match(s, /^[+-][0-9]+/)) exit 1
      d[n++] = iqm + substr(s, 1, RLENGTH); s = substr(s, RLENGTH + 1)
    }
    if (n != 64) { print "deviations: " n; exit 1 }
    for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
      if (d[j] < d[i]) { z = d[i]; d[i] = d[j]; d[j] = z }
    sum = 0; for (i = 16; i < 48; i++) sum += d[i]
    mean = sum / 32; r = int(mean); if (r > mean) r--
    if (mean - r >= 0.5) r++
    if (r != iqm) { print "iqm " iqm " but the middle 32 average " mean; exit 1 }
  }' || fail "iqm line: $(grep '^cpucycles iqm ' "$work/out")"

# observed persecond: loop counts powers of two from 1024 to 1048576,
# increasing; more than 2 microseconds each (fewer are skipped); the
# lower bound not above the upper.
grep '^cpucycles observed persecond ' "$work/out" | awk '{
    split($4, b, /\.\.\./); lo = b[1] + 0; hi = b[2] + 0
    loops = $6 + 0; us = $8 + 0
    if (lo > hi) { print "bounds " $4; exit 1 }
    if (us <= 2) { print "microseconds " us; exit 1 }
    ok = 0; for (l = 1024; l <= 1048576; l *= 2) if (loops == l) ok = 1
    if (!ok || loops <= last) { print "loops " loops; exit 1 }
    last = loops
  }' || fail "observed persecond lines:
$(grep '^cpucycles observed ' "$work/out")"

# --- options ------------------------------------------------------------
# --help: usage on stdout, nothing else, exit 0.
"$info" --help > "$work/help" 2> "$work/help.err"
rc=$?
[ "$rc" -eq 0 ] || fail "--help exited $rc"
grep -q '^usage: cpucycles-info' "$work/help" || fail "--help printed no usage: $(cat "$work/help")"
[ -s "$work/help.err" ] && fail "--help wrote to stderr"
grep -q '^cpucycles ' "$work/help" && fail "--help printed report lines"

# --version: "cpucycles-info (libcpucycles) V", V the report's version.
"$info" --version > "$work/version" 2> "$work/version.err"
rc=$?
[ "$rc" -eq 0 ] || fail "--version exited $rc"
[ "$(cat "$work/version")" = "cpucycles-info (libcpucycles) $version" ] ||
  fail "--version printed '$(cat "$work/version")'"
[ -s "$work/version.err" ] && fail "--version wrote to stderr"

# An unknown option, a stray argument, an option given a value: the usage
# on stderr (the same text as --help's), nothing on stdout, exit 2.
for args in --bogus -x extra '--help extra' '--version=1' '--version --bogus'; do
  # shellcheck disable=SC2086
  "$info" $args > "$work/bad" 2> "$work/bad.err"
  rc=$?
  [ "$rc" -eq 2 ] || fail "'$args' exited $rc, expected 2"
  [ -s "$work/bad" ] && fail "'$args' wrote to stdout: $(cat "$work/bad")"
  grep -q '^usage: cpucycles-info' "$work/bad.err" || fail "'$args': no usage on stderr"
  grep -q '^cpucycles ' "$work/bad.err" && fail "'$args' printed report lines"
done

# None of the options runs the probe.  The probe's first step opens
# /etc/cpucyclespersecond; where strace works, that is watched: seen in a
# report, absent for each option.
libtool="${top_builddir:-.}/libtool"
if command -v strace > /dev/null 2>&1 && [ -x "$libtool" ] &&
   "$libtool" --mode=execute strace -f -qq -e trace=open,openat -o "$work/trace" \
     "$info" > /dev/null 2>&1 &&
   grep -q cpucyclespersecond "$work/trace"; then
  # One probe per process: the tool holds the library's code, once, and
  # loads no shared libcpucycles beside it (a second copy of the probe
  # and its state).
  grep -q 'libcpucycles\.so' "$work/trace" &&
    fail "the tool loads a shared libcpucycles beside its own probe"
  for args in --help --version --bogus; do
    rm -f "$work/trace"
    "$libtool" --mode=execute strace -f -qq -e trace=open,openat -o "$work/trace" \
      "$info" $args > /dev/null 2>&1
    grep -q cpucyclespersecond "$work/trace" && fail "'$args' ran the probe"
  done
else
  echo "note: strace unavailable; the probe is checked through the output only"
fi

[ "$failed" -eq 0 ] && echo "PASS: cpucycles-info"
exit "$failed"
