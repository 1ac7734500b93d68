#!/usr/bin/env bash
# check-warnings.sh: no warning in the project's own code.  Each step
# builds a copy of the tree out of tree with ./configure --enable-werror
# (configure's warning set, every warning an error) and builds every
# program: the library, the tools, the test programs, the examples and the
# benchmarks.
#   gcc      the system's gcc, at configure's default -g -O2 (the format
#            checks at level 2 see what gcc 14's default level sees)
#   clang    the system's clang, -g -O2
#   werror   the configured flags turn a warning into a failed build: a
#            file with a snprintf truncation that gcc 14 warns about by
#            default must not compile with them
# Installs gcc, clang, make, autoconf, automake, libtool, pkg-config and
# Check with apt-get when missing and root.  Prints PASS/FAIL/SKIP per step
# and, last, "N passed, N failed".
# Usage: tests/check-warnings.sh [STEP...]   (default: all steps)
#        KEEP_WORK=1 keeps the work directory and its logs
set -u
export LC_ALL=C
export DEBIAN_FRONTEND=noninteractive
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/check-warnings.XXXXXX")
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
passed=0
failed=0
only=" $* "
cleanup() { if [ -z "${KEEP_WORK:-}" ]; then rm -rf "$work"; else echo "work dir kept: $work"; fi; }
trap cleanup EXIT

wanted() { [ "$only" = "  " ] || [[ $only == *" $1 "* ]]; }
pass() { echo "PASS: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1${2:+ ($2)}"; failed=$((failed + 1)); }
show_log() { echo "--- last lines of $1:"; tail -n 40 "$1" | sed 's/^/    | /'; }

# ensure COMMAND PACKAGE
ensure() {
  command -v "$1" > /dev/null 2>&1 && return 0
  [ "$(id -u)" -eq 0 ] || { echo "missing $1 (package $2), and not root to install it"; return 1; }
  if [ -z "${apt_updated:-}" ]; then apt-get update -q > /dev/null 2>&1; apt_updated=1; fi
  apt-get install -y -q --no-install-recommends "$2" > "$work/apt-$2.log" 2>&1 ||
    { show_log "$work/apt-$2.log"; return 1; }
}
for tool in gcc:gcc clang:clang make:make autoreconf:autoconf aclocal:automake \
            libtoolize:libtool pkg-config:pkg-config; do
  ensure "${tool%%:*}" "${tool#*:}"
done
# Check (the test programs) and autoconf-archive (AX_PTHREAD): no command.
if [ "$(id -u)" -eq 0 ]; then
  pkg-config --exists check 2>/dev/null ||
    apt-get install -y -q --no-install-recommends check > "$work/apt-check.log" 2>&1
  [ -f /usr/share/aclocal/ax_pthread.m4 ] ||
    apt-get install -y -q --no-install-recommends autoconf-archive > "$work/apt-archive.log" 2>&1
fi

# shellcheck source=copy-tree.sh
. "$src/tests/copy-tree.sh"
copy_tree "$work/tree"
if ! (cd "$work/tree" && autoreconf -fi) > "$work/autoreconf.log" 2>&1; then
  show_log "$work/autoreconf.log"
  echo "0 passed, 1 failed"
  exit 1
fi

# build NAME CC: configure with --enable-werror and build every program.
build() {
  local name=$1 cc=$2 dir=$work/$1 extra
  mkdir -p "$dir"
  if ! (cd "$dir" && "$work/tree/configure" --enable-werror CC="$cc") > "$dir/configure.log" 2>&1; then
    show_log "$dir/configure.log"; return 1
  fi
  grep -q '^WARN_CFLAGS = .*-Werror' "$dir/Makefile" || { echo "no -Werror in WARN_CFLAGS"; return 1; }
  sed -n 's/^WARN_CFLAGS = /flags: /p' "$dir/Makefile"
  # The benchmarks and their modules are EXTRA_PROGRAMS and
  # EXTRA_LTLIBRARIES, built only on demand.
  extra=$(printf 'print-extra:\n\t@echo $(EXTRA_PROGRAMS) $(EXTRA_LTLIBRARIES)\n' |
          make -s -C "$dir" -f Makefile -f - print-extra)
  if ! make -C "$dir" -j"$jobs" all > "$dir/make.log" 2>&1 ||
     ! make -C "$dir" -j"$jobs" check TESTS= >> "$dir/make.log" 2>&1 ||
     ! make -C "$dir" -j"$jobs" $extra >> "$dir/make.log" 2>&1; then
    grep -E 'error:|warning:' "$dir/make.log" | head -n 40
    show_log "$dir/make.log"; return 1
  fi
  # -Werror is the rule; a warning printed anyway (a flag outside it) fails too.
  if grep -E 'warning:' "$dir/make.log" | grep -v '^libtool: ' | head -n 20 | grep .; then
    return 1
  fi
  echo "$(grep -cE '^ *(CC|CCLD) ' "$dir/make.log") compile and link steps, no warning"
}

step_gcc() { build gcc gcc; }
step_clang() { build clang clang; }

# The flags as configured for gcc must reject what gcc 14 warns about by
# default (-Wformat-truncation, the warning Debian 13 users saw in
# explain.c) and what only level 2 sees (a truncated snprintf whose result
# is used): the proof that --enable-werror stops the next one here.
step_werror() {
  local dir=$work/gcc cc flags n
  [ -f "$dir/Makefile" ] || { build gcc gcc > "$work/werror-build.log" 2>&1 || { show_log "$work/werror-build.log"; return 1; }; }
  cc=$(sed -n 's/^CC = //p' "$dir/Makefile")
  flags=$(sed -n 's/^WARN_CFLAGS = //p' "$dir/Makefile")
  cat > "$work/truncates.c" <<'EOF'
#include <stdio.h>
struct pmu { char name[48]; int type; };
int pmu_paths(const struct pmu *p, int cpu);
int pmu_paths(const struct pmu *p, int cpu)
{
  char path[40], word[6];
  int n;
  snprintf(path, sizeof path, "/sys/devices/%s/cpus", p->name);
  n = snprintf(word, sizeof word, "cpu%d", cpu);
  puts(path);
  puts(word);
  return n;
}
EOF
  if $cc -O2 $flags -c "$work/truncates.c" -o "$work/truncates.o" > "$work/werror.log" 2>&1; then
    echo "$cc $flags compiled two snprintf calls that may truncate"
    return 1
  fi
  n=$(grep -c 'error:.*format-truncation' "$work/werror.log")
  [ "$n" -eq 2 ] || { echo "expected 2 format-truncation errors, saw $n"; show_log "$work/werror.log"; return 1; }
  grep 'error:' "$work/werror.log" | sed 's/^/rejected: /'
}

run() {
  wanted "$1" || return 0
  local t0=$SECONDS
  echo "== $1"
  if "$2"; then pass "$1 ($((SECONDS - t0))s)"; else fail "$1" "$((SECONDS - t0))s"; fi
}

command -v gcc > /dev/null && run gcc step_gcc || { wanted gcc && fail gcc "no gcc"; }
command -v clang > /dev/null && run clang step_clang || { wanted clang && fail clang "no clang"; }
command -v gcc > /dev/null && run werror step_werror

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
