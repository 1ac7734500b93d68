#!/bin/sh
# The system calls the library makes, watched with strace, against the
# table of doc/security.md ("System calls, counter by counter"): during
# the first call, the row "every first call" plus the setup column of the
# counters tried (the named one, or all of them); during reads, the chosen
# counter's "each read"; in a second thread, its "each read" and "a
# thread's first read".  Any call outside the table fails.  Skipped
# without strace, where it cannot trace (no ptrace in a container), and
# in sanitizer builds (their runtimes make calls of their own).
#
# The same page's other figures about the library are read here too: the
# counts under the first table (default-perfevent on software
# events standing in for cycles events, through the seams:
# tests/syscall-standin-client), the size of the shared library's TLS
# segment ("Static TLS"), against `readelf -lW`, and the figures that a
# constant of the library or of its tests enforces (the stack bound, the
# EINTR retries, doc/persecond.md's plausible frequencies and
# doc/selection.md's reads and attempts of a trial), against that constant.
client="${top_builddir:-.}/tests/syscall-client"
standin="${top_builddir:-.}/tests/syscall-standin-client"
doc="${srcdir:-tests}/../doc/security.md"
[ -x "$client" ] || { echo "SKIP: no $client"; exit 77; }
[ -f "$doc" ] || { echo "FAIL: no $doc"; exit 1; }
failed=0

# The TLS segment of libcpucycles.so.1 on x86-64, as the page states it.
so="${top_builddir:-.}/lib/.libs/libcpucycles.so.1"
if [ "$(uname -m)" = x86_64 ] && [ -f "$so" ] && command -v readelf >/dev/null 2>&1; then
  stated=$(sed -n 's/.*`PT_TLS` segment of \([0-9]*\) bytes on x86-64.*/\1/p' "$doc")
  memsiz=$(readelf -lW "$so" | awk '$1 == "TLS" { print $6 }')
  if [ -z "$stated" ]; then
    echo "FAIL: $doc states no \`PT_TLS\` segment of N bytes on x86-64"; failed=1
  elif [ "$((memsiz))" -ne "$stated" ]; then
    echo "FAIL: $so's TLS segment is $((memsiz)) bytes, $doc says $stated"; failed=1
  else
    echo "PASS: the TLS segment: $stated bytes"
  fi
fi

# figure WHAT STATED VALUE [PAGE]: a figure of the page (doc/security.md
# unless named) against the constant that the library or its test holds.
figure() {
  if [ -z "$2" ] || [ "$2" != "$3" ]; then
    echo "FAIL: $1: ${4:-$doc} says '$2', the code '$3'"; failed=1
  else
    echo "PASS: $1: $2"
  fi
}
top_srcdir="${srcdir:-tests}/.."
# "A small thread stack": the bound test-stack asserts.
figure "the first call's stack bound" \
  "$(sed -n 's/.*It takes at most \([0-9]*\) bytes of it (`SMALL_STACK_BOUND`.*/\1/p' "$doc")" \
  "$(sed -n 's/^#define SMALL_STACK_BOUND \([0-9]*\).*/\1/p' "$top_srcdir/tests/cross/small-stack.h")"
# "Sandboxes": the retries of a call interrupted by a signal.
figure "EINTR retries" \
  "$(sed -n 's/.*at most \([0-9]*\) times in a row$/\1/p' "$doc")" \
  "$(sed -n 's/^#define CPUCYCLES_EINTR_TRIES \([0-9]*\).*/\1/p' "$top_srcdir/lib/readfile.h")"
# persecond.md, "Plausibility": the bounds of a frequency value.
persecond_doc="$top_srcdir/doc/persecond.md"
bounds=$(sed -n 's/^\*\*\[10^\([0-9]*\), 10^\([0-9]*\)\] Hz\*\* .*/\1 \2/p' "$persecond_doc")
power() { awk -v n="$1" 'BEGIN { if (n == "") exit; v = "1"; for (i = 0; i < n; i++) v = v "0"; print v }'; }
figure "the plausible frequencies' lower bound" \
  "$(power "${bounds% *}")" \
  "$(sed -n 's/^#define PERSECOND_MIN \([0-9]*\)ULL.*/\1/p' "$top_srcdir/lib/persecond.c")" "$persecond_doc"
figure "the plausible frequencies' upper bound" \
  "$(power "${bounds#* }")" \
  "$(sed -n 's/^#define PERSECOND_MAX \([0-9]*\)ULL.*/\1/p' "$top_srcdir/lib/persecond.c")" "$persecond_doc"
# persecond.md: how much of each file is read.
define() { sed -n "s/^#define $1 \\([0-9]*\\).*/\\1/p" "$top_srcdir/lib/persecond.c"; }
figure "the setting file's bytes read" \
  "$(sed -n 's/.*Of the file, the first \([0-9]*\) bytes are read;.*/\1/p' "$persecond_doc")" \
  "$(define SETTING_FILE_BYTES)" "$persecond_doc"
figure "a sysfs file's longest" \
  "$(sed -n 's/.*A sysfs file must be at most \([0-9]*\) bytes long\..*/\1/p' "$persecond_doc")" \
  "$(( $(define SYSFS_FILE_BYTES) - 1 ))" "$persecond_doc"
figure "/proc/cpuinfo's bytes read" \
  "$(sed -n 's/.*the first valid `cpu MHz`, or after \([0-9]*\) KiB\..*/\1/p' "$persecond_doc")" \
  "$(( $(define CPUINFO_LIMIT) / 1024 ))" "$persecond_doc"
figure "/proc/cpuinfo's read window" \
  "$(sed -n 's/.*a line longer than the \([0-9]*\)-byte read window.*/\1/p' "$persecond_doc")" \
  "$(define CPUINFO_WINDOW)" "$persecond_doc"

# selection.md, "Trying the counters": the reads and attempts of a trial.
selection_doc="$top_srcdir/doc/selection.md"
figure "a trial's reads" \
  "$(sed -n 's/^3\. \([0-9]*\) reads, back to back\..*/\1/p' "$selection_doc")" \
  "$(sed -n 's/^#define SELECT_SAMPLES \([0-9]*\).*/\1/p' "$top_srcdir/lib/select.h")" "$selection_doc"
figure "a trial's attempts" \
  "$(sed -n 's/.*repeated, up to \([0-9]*\) attempts, then the$/\1/p' "$selection_doc")" \
  "$(sed -n 's/^#define SELECT_ATTEMPTS \([0-9]*\).*/\1/p' "$top_srcdir/lib/select.h")" "$selection_doc"

perf_doc="$top_srcdir/doc/perf-counters.md"
figure "the events' share of the descriptor limit" \
  "$(sed -n 's/.*soft `RLIMIT_NOFILE` (`rlim_cur \/ \([0-9]*\)`.*/\1/p' "$perf_doc")" \
  "$(sed -n 's/.*return (long) (rl\.rlim_cur \/ \([0-9]*\));.*/\1/p' "$top_srcdir/lib/perf-event.c")" "$perf_doc"
figure "the stuck count's spin" \
  "$(sed -n 's/.*two spins of \([0-9]*\)$/\1/p' "$perf_doc")" \
  "$(sed -n 's/^ *for (i = 0; i < \([0-9]*\); i++) { }.*/\1/p' "$top_srcdir/lib/perf.c")" "$perf_doc"

skip() { echo "SKIP: $1"; [ "$failed" = 0 ] || exit 1; exit 77; }
command -v strace >/dev/null 2>&1 || skip "no strace"
strace -f -qq -o /dev/null true >/dev/null 2>&1 || skip "strace cannot trace here"
[ "$("$client" checked-by)" = nothing ] || skip "a sanitizer's runtime makes calls of its own"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/syscalls.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# The table: one line per counter and column, "NAME COLUMN call call ...",
# COLUMN 1 (first call), 2 (each read), 3 (a thread's first read).
for mark in 'syscalls: begin' 'syscalls: end' 'syscall counts: begin' 'syscall counts: end'; do
  grep -q "<!-- $mark" "$doc" || { echo "FAIL: no <!-- $mark marker in $doc"; exit 1; }
done
sed -n '/<!-- syscalls: begin/,/<!-- syscalls: end/p' "$doc" | awk -F'|' '
  /^\| *(---|counter) / || !/^\|/ { next }
  {
    names = $2
    if (names ~ /every first call/) names = "`*`"
    for (c = 1; c <= 3; c++) {
      cell = $(c + 2); calls = ""
      while (match(cell, /`[a-z0-9_]+`/)) {
        calls = calls " " substr(cell, RSTART + 1, RLENGTH - 2)
        cell = substr(cell, RSTART + RLENGTH)
      }
      n = names
      while (match(n, /`[^`]+`/)) {
        print substr(n, RSTART + 1, RLENGTH - 2), c, calls
        n = substr(n, RSTART + RLENGTH)
      }
    }
  }' > "$tmp/table"
[ -s "$tmp/table" ] || { echo "FAIL: no table in $doc"; exit 1; }
counters=$(awk '$1 != "*" { print $1 }' "$tmp/table" | sort -u)

# allowed NAME COLUMN: the calls the table gives NAME in COLUMN, one a line.
allowed() {
  awk -v n="$1" -v c="$2" '$1 == n && $2 == c { for (i = 3; i <= NF; i++) print $i }' "$tmp/table"
}

# made LOG FROM TO: the calls made between the marks FROM and TO (by the
# process that wrote FROM), one a line, as often as each is made, sorted.
made() {
  awk -v from="\"syscalls: $2\"" -v to="\"syscalls: $3\"" '
    index($0, "write(-1, " from) { pid = $1; on = 1; next }
    on && $1 == pid && index($0, "write(-1, " to) { on = 0; next }
    on && $1 == pid {
      line = $0; sub(/^[0-9]+ +/, "", line)
      if (line ~ /^(---|\+\+\+|<\.\.\.)/) next
      sub(/\(.*/, "", line); print line
    }' "$1" | sort
}
# observed LOG FROM TO: the same, each call once.
observed() { made "$@" | uniq; }

# check LABEL WHAT ALLOWED-FILE OBSERVED-FILE
check() {
  extra=$(sort -u "$3" | comm -13 - "$4" | tr '\n' ' ')
  if [ -n "$extra" ]; then
    echo "FAIL: $1: $2: not in doc/security.md's table: $extra"
    failed=1
  else
    echo "PASS: $1: $2: $(tr '\n' ' ' < "$4")"
  fi
}

# On x86-64 Linux every counter asks the kernel whether it may fault
# (prctl answers here): the first call installs no crash handler, so it
# makes none of the crash catcher's calls; and where no perf event opens
# (no PMU for user space), no signal call at all: the perf registry's lock
# needs no signal mask (lib/perf.c).
# no_catcher LABEL OBSERVED-FILE LOG
no_catcher() {
  [ "$(uname -m)" = x86_64 ] || return 0
  # without sysfs (a build chroot with no /sys) amd64-pmcff cannot ask
  # whether RDPMC is allowed, and is tried with crash signals caught
  [ -d /sys/bus/event_source/devices ] || return 0
  # where a perf event opens, its page may offer user reads, which the
  # probe tries caught (doc/security.md, "Ask, and catch only what cannot
  # be asked")
  grep -qE '^[0-9]+ +perf_event_open\(.*\) = [0-9]+' "$3" && return 0
  signals='rt_sigaction|rt_sigpending|kill|tgkill|getpid|rt_sigprocmask'
  catcher=$(grep -xE "$signals" "$2" | tr '\n' ' ')
  if [ -n "$catcher" ]; then
    echo "FAIL: $1: signal calls in an x86-64 first call: $catcher"
    failed=1
  fi
}

# On x86-64 the OS clocks read through the vDSO unless RDTSC is disabled
# or a seccomp filter may stand between the library and prctl (strace
# installs none): a named OS clock's reads make no clock system call.
# vdso_reads LABEL OBSERVED-FILE
vdso_reads() {
  [ "$(uname -m)" = x86_64 ] || return 0
  case $chosen in default-monotonic|default-gettimeofday) ;; *) return 0 ;; esac
  grep -q '^Seccomp:[[:space:]]*0$' /proc/self/status 2>/dev/null || return 0
  if grep -qxE 'clock_gettime|gettimeofday' "$2"; then
    echo "FAIL: $1: reads through the system call, not the vDSO"
    failed=1
  fi
}

# run LABEL [NAME] [trace]
run() {
  label=$1 name=$2 mode=$3 log=$tmp/strace.log
  if [ -n "$name" ]; then
    CPUCYCLES_COUNTER=$name strace -f -qq -o "$log" "$client" $mode > "$tmp/out" 2>&1
  else
    env -u CPUCYCLES_COUNTER strace -f -qq -o "$log" "$client" $mode > "$tmp/out" 2>&1
  fi || { echo "FAIL: $label: the client failed: $(cat "$tmp/out")"; failed=1; return; }
  chosen=$(tail -n 1 "$tmp/out")
  # the first call: the common row and the setup of every counter tried
  allowed '*' 1 > "$tmp/allowed"
  if [ -n "$name" ] && [ "$chosen" = "$name" ]; then
    allowed "$name" 1 >> "$tmp/allowed"
  else
    for c in $counters; do allowed "$c" 1; done >> "$tmp/allowed"
  fi
  observed "$log" "first call" "reads" > "$tmp/seen"
  check "$label ($chosen)" "first call" "$tmp/allowed" "$tmp/seen"
  no_catcher "$label ($chosen)" "$tmp/seen" "$log"
  allowed "$chosen" 2 > "$tmp/allowed"
  observed "$log" "reads" "end" > "$tmp/seen"
  check "$label ($chosen)" "reads" "$tmp/allowed" "$tmp/seen"
  vdso_reads "$label ($chosen)" "$tmp/seen"
  observed "$log" "thread reads" "thread end" > "$tmp/seen"
  check "$label ($chosen)" "a thread's reads" "$tmp/allowed" "$tmp/seen"
  allowed "$chosen" 3 >> "$tmp/allowed"
  observed "$log" "thread first read" "thread reads" > "$tmp/seen"
  check "$label ($chosen)" "a thread's first read" "$tmp/allowed" "$tmp/seen"
}

run probe
run traced "" trace
# The counters built in, as the trace names them, less those it lists
# only because libcpucycles' list for the ISA has them (NOT_BUILT in
# config.h's table): each must have a row, and each is named in turn (one
# that does not work here is the probe again, checked as such).  Named,
# default-zero makes only the calls of every first call: nothing probed.
unbuilt=$(grep -o 'NOT_BUILT([a-z0-9_]*, "[^"]*")' "${top_builddir:-.}/config.h" 2>/dev/null |
          sed 's/.*"\(.*\)")/\1/')
built=$(sed -n 's/^cpucycles tracesetup [0-9]* \([^ ]*\) .*/\1/p' "$tmp/out" |
        grep -vxF "$(printf '%s\n' $unbuilt '#none')")
[ -n "$built" ] || { echo "FAIL: no trace from the client"; exit 1; }
for c in $built; do
  printf '%s\n' $counters | grep -qx "$c" ||
    { echo "FAIL: $c is built in but has no row in doc/security.md's table"; failed=1; }
done
for c in $built; do
  run "$c named" "$c"
done

# How many: the counts table, "| `COUNTER` | WHEN | `call` `call` ... |",
# each call as often as it is made.  WHEN is "each read" (the client's
# 1000 reads, in the first thread and in the second), "a thread's first
# read", "a thread's first read, its count stuck at 0" (events opened
# disabled: their count is 0 until the library's remedy enables them),
# or, with the second thread's opens refused, its first read and its
# reads of the fallback clock.
sed -n '/<!-- syscall counts: begin/,/<!-- syscall counts: end/p' "$doc" | awk -F'|' '
  /^\| *(---|counter) / || !/^\|/ { next }
  {
    name = $2; sub(/^ *`/, "", name); sub(/` *$/, "", name)
    when = $3; sub(/^ */, "", when); sub(/ *$/, "", when)
    cell = $4; calls = ""
    while (match(cell, /`[a-z0-9_]+`/)) {
      calls = calls " " substr(cell, RSTART + 1, RLENGTH - 2)
      cell = substr(cell, RSTART + RLENGTH)
    }
    print name "|" when "|" calls
  }' > "$tmp/counts"
[ -s "$tmp/counts" ] || { echo "FAIL: no counts table in $doc"; exit 1; }

# stated COUNTER WHEN [TIMES]: the calls stated, each TIMES times, sorted.
stated() {
  awk -F'|' -v n="$1" -v w="$2" -v k="${3:-1}" '$1 == n && $2 == w {
    c = split($3, a, " "); for (i = 1; i <= c; i++) for (j = 0; j < k; j++) print a[i]; found = 1
  } END { if (!found) print "(no row: " n ", " w ")" }' "$tmp/counts" | sort
}
# count LABEL STATED-FILE MADE-FILE
count() {
  if cmp -s "$2" "$3"; then
    echo "PASS: $1: $(uniq -c < "$3" | awk '{ printf "%s%s x%s", s, $2, $1; s = ", " }')"
  else
    echo "FAIL: $1: doc/security.md's counts differ (-stated +made):"
    diff "$2" "$3" | sed -n 's/^\([<>]\) /  \1 /p' | sed 's/^  </  -/; s/^  >/  +/' | uniq -c
    failed=1
  fi
}
# unfiltered: the calls, less the clock's where a seccomp filter may be
# installed: the library then reads the clock through the system call
# (doc/security.md, footnote 1), which the counts leave out.
unfiltered() {
  if grep -q '^Seccomp:[[:space:]]*0$' /proc/self/status 2>/dev/null; then cat
  else grep -vx clock_gettime; fi
}
# counted MODE: default-perfevent on the stand-in's events.
counted() {
  log=$tmp/standin.log
  CPUCYCLES_COUNTER=default-perfevent strace -f -qq -o "$log" "$standin" "$1" > "$tmp/out" 2>&1
  rc=$?
  [ "$rc" = 77 ] && { echo "SKIP: $1: no perf events in this build"; return; }
  [ "$rc" = 0 ] && [ "$(tail -n 1 "$tmp/out")" = default-perfevent ] ||
    { echo "SKIP: $1: no software perf events here: $(tail -n 1 "$tmp/out")"; return; }
  made "$log" "thread first read" "thread reads" | unfiltered > "$tmp/made"
  if [ "$1" = stand-in ]; then
    stated default-perfevent "a thread's first read" > "$tmp/stated"
    count "default-perfevent: a thread's first read" "$tmp/stated" "$tmp/made"
    stated default-perfevent "each read" 1000 > "$tmp/stated"
    made "$log" "reads" "end" | unfiltered > "$tmp/made"
    count "default-perfevent: 1000 reads" "$tmp/stated" "$tmp/made"
    made "$log" "thread reads" "thread end" | unfiltered > "$tmp/made"
    count "default-perfevent: a thread's 1000 reads" "$tmp/stated" "$tmp/made"
  elif [ "$1" = stand-in-zero ]; then
    stated default-perfevent "a thread's first read, its count stuck at 0" > "$tmp/stated"
    count "default-perfevent: a thread's first read, stuck at 0" "$tmp/stated" "$tmp/made"
  else
    stated default-perfevent "a thread's first read, every privilege combination refused (\`EINVAL\`)" > "$tmp/stated"
    count "default-perfevent: a thread's first read, refused" "$tmp/stated" "$tmp/made"
    stated default-perfevent "each read of a thread refused its event" 1000 > "$tmp/stated"
    made "$log" "thread reads" "thread end" | unfiltered > "$tmp/made"
    count "default-perfevent: 1000 reads of a thread refused its event" "$tmp/stated" "$tmp/made"
  fi
}
if [ -x "$standin" ]; then
  counted stand-in
  counted stand-in-zero
  counted stand-in-einval
else
  echo "SKIP: no $standin: the counts are not checked"
fi
exit $failed
