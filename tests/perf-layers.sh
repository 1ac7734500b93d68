#!/bin/sh
# The perf code in one direction (doc/ARCHITECTURE.md, "Who calls whom"):
# the event layer (perf-event.h, perf-event.c, perf-sys.c) includes and
# calls nothing of the registry (perf-registry.h, perf-registry.c) or of
# the read path and setup (perf.h, perf.c); the registry nothing of the
# read path.  Names are those the higher headers declare or define,
# looked for outside comments.  No perf file over 400 lines.  And the
# wrappers' header (adapters.h) includes nothing of the probe (select.h),
# which sits above it.
lib="${srcdir:-tests}/../lib"
failed=0
for f in perf-event.h perf-event.c perf-sys.c perf-registry.h perf-registry.c perf.h perf.c; do
  [ -f "$lib/$f" ] || { echo "FAIL: no $lib/$f"; failed=1; }
done
[ "$failed" = 0 ] || exit 1

# code FILE: FILE without its comments.
code() {
  awk '{
    out = ""; line = $0
    while (line != "") {
      if (incomment) {
        i = index(line, "*/"); if (!i) { line = ""; break }
        line = substr(line, i + 2); incomment = 0
      } else {
        i = index(line, "/*"); if (!i) { out = out line; break }
        out = out substr(line, 1, i - 1); line = substr(line, i + 2); incomment = 1
      }
    }
    print out
  }' "$1"
}

# names HEADER: the functions HEADER itself declares or defines (a line
# that starts with their type) and its macros.
names() {
  code "$1" | sed -nE 's/^[a-z][a-z0-9_ ]*[ *](cpucycles_perf_[a-z0-9_]+) *\(.*/\1/p
                       s/^# *define +(CPUCYCLES_PERF_[A-Z0-9_]+).*/\1/p' | sort -u
}

# below FILE HEADER...: FILE includes none of the HEADERs, and uses none
# of their names.
below() {
  file=$1; shift
  for header in "$@"; do
    if code "$lib/$file" | grep -qE "^ *# *include +\"$header\""; then
      echo "FAIL: $file includes $header, a layer above it"
      failed=1
    fi
    used=$(for name in $(names "$lib/$header"); do
             code "$lib/$file" | grep -qw -- "$name" && printf '%s ' "$name"
           done)
    if [ -n "$used" ]; then
      echo "FAIL: $file uses $header's $used(a layer above it)"
      failed=1
    fi
  done
  [ "$failed" = 0 ] && echo "PASS: $file: nothing of $*"
}

below perf-event.h perf-registry.h perf.h
below perf-event.c perf-registry.h perf.h
below perf-sys.c perf-registry.h perf.h
below perf-registry.h perf.h
below perf-registry.c perf.h

if code "$lib/adapters.h" | grep -qE '^ *# *include +"select.h"'; then
  echo "FAIL: adapters.h includes select.h, a layer above it"
  failed=1
else
  echo "PASS: adapters.h: nothing of select.h"
fi

for f in "$lib"/perf*.c "$lib"/perf*.h; do
  n=$(wc -l < "$f")
  if [ "$n" -gt 400 ]; then
    echo "FAIL: $(basename "$f"): $n lines, over 400"
    failed=1
  fi
done
[ "$failed" = 0 ] && echo "PASS: every perf file 400 lines or fewer"
exit "$failed"
