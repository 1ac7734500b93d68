#!/usr/bin/env bash
# check-static.sh: no finding of the static analysers that a maintainer or
# a reviewer runs on the library.  Each step analyses a copy of the tree:
#   scan-build  clang's analyzer over the full build: ./configure and make
#               run under scan-build (every program that `make` builds:
#               the library and the tools); any bug it reports fails
#   cppcheck    cppcheck --enable=warning,portability,performance over
#               lib/ and src/, once for this machine's configuration (the
#               configured config.h, and the compiler's and the system
#               headers' values of every macro the sources test) and once
#               for each other ISA and OS that has a counter or a file of
#               its own, so that every counter file (ppc32-mftb.c on an
#               x86-64 machine too) is analysed; any finding fails, and so
#               does a file of lib/ or src/ that no configuration analyses
# A false positive is made obvious to the analyser in the code (initialise,
# restructure) or suppressed on its line with the reason
# (// cppcheck-suppress ID -- why).
# Installs clang-tools (scan-build), cppcheck, gcc, make, autoconf,
# automake, libtool and pkg-config with apt-get when missing and root.
# Prints PASS/FAIL/SKIP per step and, last, "N passed, N failed".
# Usage: tests/check-static.sh [STEP...]   (default: all steps)
#        KEEP_WORK=1 keeps the work directory and its logs
set -u
export LC_ALL=C
export DEBIAN_FRONTEND=noninteractive
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/check-static.XXXXXX")
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
passed=0
failed=0
only=" $* "
cleanup() { if [ -z "${KEEP_WORK:-}" ]; then rm -rf "$work"; else echo "work dir kept: $work"; fi; }
trap cleanup EXIT

wanted() { [ "$only" = "  " ] || [[ $only == *" $1 "* ]]; }
pass() { echo "PASS: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1${2:+ ($2)}"; failed=$((failed + 1)); }
skip() { echo "SKIP: $1${2:+ ($2)}"; }
show_log() { echo "--- last lines of $1:"; tail -n 40 "$1" | sed 's/^/    | /'; }

# ensure COMMAND PACKAGE
ensure() {
  command -v "$1" > /dev/null 2>&1 && return 0
  [ "$(id -u)" -eq 0 ] || { echo "missing $1 (package $2), and not root to install it"; return 1; }
  if [ -z "${apt_updated:-}" ]; then apt-get update -q > /dev/null 2>&1; apt_updated=1; fi
  apt-get install -y -q --no-install-recommends "$2" > "$work/apt-$2.log" 2>&1 ||
    { show_log "$work/apt-$2.log"; return 1; }
}
for tool in gcc:gcc make:make autoreconf:autoconf aclocal:automake \
            libtoolize:libtool pkg-config:pkg-config \
            scan-build:clang-tools cppcheck:cppcheck; do
  ensure "${tool%%:*}" "${tool#*:}"
done
# scan-build's analyzer is clang (clang-tools depends on it);
# autoconf-archive gives AX_PTHREAD.
if [ "$(id -u)" -eq 0 ]; then
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

# ./configure and make, both under scan-build (configure must see its
# compiler wrapper as CC); --status-bugs: make's exit status is 1 when the
# analyzer reported a bug.
step_scan_build() {
  local dir=$work/scan status
  mkdir -p "$dir"
  if ! (cd "$dir" && scan-build "$work/tree/configure") > "$dir/configure.log" 2>&1; then
    show_log "$dir/configure.log"; return 1
  fi
  grep -q '^CC = .*ccc-analyzer' "$dir/Makefile" ||
    { echo "configure did not take scan-build's compiler"; grep '^CC =' "$dir/Makefile"; return 1; }
  (cd "$dir" && scan-build -o "$dir/reports" --status-bugs make -j"$jobs") > "$dir/make.log" 2>&1
  status=$?
  grep -E 'warning:' "$dir/make.log" | grep -v '^libtool: '
  grep -E '^scan-build: [0-9]+ bugs? found|No bugs found' "$dir/make.log"
  if [ "$status" -ne 0 ]; then
    grep -q 'bugs\? found' "$dir/make.log" || show_log "$dir/make.log"
    return 1
  fi
  echo "$(grep -cE '^ *CC ' "$dir/make.log") files analysed"
}

# The configurations cppcheck analyses besides this machine's: NAME and the
# macros that tell its ISA and OS.  Every counter file's guard is met by
# one of them; ppc32 takes glibc's __ppc_get_timebase_freq() and ppc64
# the /proc/cpuinfo reader, so that both ways of lib/timebase.c are read.
foreign_configs=(
  "x86 __linux__ __i386__"
  "arm32 __linux__ __arm__ __thumb2__"
  "arm64 __linux__ __aarch64__ __SIZEOF_INT128__=16"
  "loong64 __linux__ __loongarch__ __loongarch64 __SIZEOF_INT128__=16"
  "mips64 __linux__ __mips__ __mips64 __SIZEOF_INT128__=16"
  "ppc32 __linux__ __powerpc__ HAVE_PPC_GET_TIMEBASE_FREQ=1"
  "ppc64 __linux__ __powerpc__ __powerpc64__ __SIZEOF_INT128__=16"
  "riscv32 __linux__ __riscv __riscv_xlen=32"
  "riscv64 __linux__ __riscv __riscv_xlen=64 __SIZEOF_INT128__=16"
  "s390x __linux__ __s390x__ __SIZEOF_INT128__=16"
  "sparc64 __linux__ __sparc__ __arch64__ __SIZEOF_INT128__=16"
  "darwin __APPLE__ __MACH__ __x86_64__ __SIZEOF_INT128__=16 HAVE_SYSCTLBYNAME=1"
  "windows _WIN32 __x86_64__ __SIZEOF_INT128__=16"
)
# Macros of an ISA or an OS (never carried from this machine's
# configuration to another), and those of Linux alone.
isa_macros='^(__x86_64__|__i386__|__aarch64__|__arm__|__thumb__|__thumb2__|__powerpc__|__powerpc64__|__riscv|__riscv_xlen|__s390x__|__sparc__|__arch64__|__mips__|__mips64|__loongarch__|__loongarch64|__SIZEOF_INT128__|__linux__|_WIN32|__APPLE__|__MACH__|__CYGWIN__)$'
linux_macros='^(__GLIBC__|__NR_.*|SYS_.*|PR_.*|PERF_.*|MADV_WIPEONFORK|SA_RESTORER)$'

# cppcheck reads the project's headers and config.h but not the system's:
# the values of the macros that the sources test and do not define
# themselves (the compiler's and the system headers') come from the
# compiler, as -D options.  cppcheck cannot evaluate __has_include (it
# takes such a line as false), so the two macros defined under it come as
# options too: CPUCYCLES_PERF_AVAILABLE (lib/perf.h) wherever Linux is,
# HAVE_PPC_GET_TIMEBASE_FREQ (lib/timebase.c) in one PowerPC configuration.
# With a -D option cppcheck analyses that configuration alone.
step_cppcheck() {
  local cfg cc names defined probe config name defs files out n ok f
  cfg=$work/scan
  if [ ! -f "$cfg/config.h" ]; then
    cfg=$work/cfg
    mkdir -p "$cfg"
    (cd "$cfg" && "$work/tree/configure") > "$cfg/configure.log" 2>&1 ||
      { show_log "$cfg/configure.log"; return 1; }
  fi
  cc=${CC:-gcc}
  cd "$work/tree" || return 1
  files=$(ls lib/*.c lib/counters/*.c src/*.c)
  # The macros the sources test: upper-case or _-led names on #if lines
  # (comments and <header> names left out), less include guards and the
  # names that the project defines itself.
  names=$(grep -hE '^\s*#\s*(if|ifdef|ifndef|elif)\b' lib/*.[ch] lib/counters/*.c src/*.[ch] include/*.h |
          sed -E 's@/\*.*@@; s@<[^>]*>@@g; s/^\s*#\s*[a-z]+//' |
          grep -oE '\b[A-Z_][A-Za-z0-9_]*\b' |
          grep -vE '_H$|^defined$|^__has_include$' | sort -u)
  defined=$( { grep -hoE '^\s*#\s*define\s+[A-Za-z_][A-Za-z0-9_]*' lib/*.[ch] lib/counters/*.c src/*.[ch] include/*.h "$cfg/config.h" |
               awk '{print $NF}'; } | sort -u)
  names=$(comm -23 <(echo "$names") <(echo "$defined"))
  probe=$work/probe.c
  { echo '#define _GNU_SOURCE 1'
    grep -hoE '^\s*#\s*include\s*<[^>]+>' lib/*.[ch] lib/counters/*.c src/*.[ch] include/*.h |
      sed -E 's/.*(<.*>)/\1/' | grep -v '<config.h>' | sort -u |
      sed 's/.*/#if __has_include(&)\n#include &\n#endif/'
  } > "$probe"
  # NAME=VALUE, a VALUE that is another macro's name replaced by its value
  # (SYS_getdents64 is __NR_getdents64).
  $cc -dM -E "$probe" | awk -v names=" $(echo $names) " '
    $1 == "#define" && $2 !~ /\(/ { v = $3; for (i = 4; i <= NF; i++) v = v " " $i; value[$2] = v
                                     if (index(names, " " $2 " ")) wanted[++n] = $2 }
    END { for (i = 1; i <= n; i++) {
            v = value[wanted[i]]
            for (k = 0; k < 5 && (v in value); k++) v = value[v]
            print wanted[i] "=" v } }' > "$work/native.macros" || return 1
  if echo '#include "perf.h"' | $cc -E -dM -I lib -x c - 2>/dev/null | grep -q 'define CPUCYCLES_PERF_AVAILABLE'; then
    echo CPUCYCLES_PERF_AVAILABLE=1 >> "$work/native.macros"
  fi
  echo "this machine: $(tr '\n' ' ' < "$work/native.macros")"

  : > "$work/findings"
  : > "$work/analysed"
  for config in "native" "${foreign_configs[@]}"; do
    set -- $config
    name=$1; shift
    if [ "$name" = native ]; then
      defs=$(cat "$work/native.macros")
    else
      defs=$(awk -F= -v isa="$isa_macros" -v linux="$linux_macros" -v on_linux="$([[ " $* " == *" __linux__ "* ]] && echo 1)" '
               $1 ~ isa || $1 == "CPUCYCLES_PERF_AVAILABLE" { next }
               $1 ~ linux { if (on_linux) print; next }
               { print }
               END { if (on_linux) print "CPUCYCLES_PERF_AVAILABLE=1" }' "$work/native.macros"
             printf '%s\n' "$@")
    fi
    out=$work/cppcheck-$name.log
    # shellcheck disable=SC2046
    cppcheck -q -j"$jobs" --enable=warning,portability,performance --inline-suppr \
      --std=c11 --language=c --error-exitcode=0 \
      --template='{file}:{line}:{column}: {severity}: {message} [{id}]' \
      -I "$cfg" -I include -I lib -I src \
      $(echo "$defs" | grep . | sed 's/^/-D/' | tr -d ' ') $files > "$out" 2>&1
    # A file whose #error fires is not for this configuration.
    grep -vE '^[^:]+:[0-9]+:[0-9]+: error: #error .*\[preprocessorErrorDirective\]$' "$out" |
      grep . | sed "s/^/$name: /" >> "$work/findings"
    n=0
    for f in $files; do
      grep -qE "^$f:[0-9]+:[0-9]+: error: #error " "$out" && continue
      echo "$f" >> "$work/analysed"; n=$((n + 1))
    done
    echo "$name: $n files"
  done
  ok=0
  if [ -s "$work/findings" ]; then cat "$work/findings"; ok=1; fi
  for f in $files; do
    grep -qx "$f" "$work/analysed" || { echo "$f: analysed in no configuration"; ok=1; }
  done
  return $ok
}

run() {
  wanted "$1" || return 0
  local t0=$SECONDS
  echo "== $1"
  if (cd "$work" && "$2"); then pass "$1 ($((SECONDS - t0))s)"; else fail "$1" "$((SECONDS - t0))s"; fi
}

if command -v scan-build > /dev/null; then run scan-build step_scan_build
else wanted scan-build && fail scan-build "no scan-build"; fi
if command -v cppcheck > /dev/null; then run cppcheck step_cppcheck
else wanted cppcheck && fail cppcheck "no cppcheck"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
