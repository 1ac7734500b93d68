#!/usr/bin/env bash
# check-windows.sh: cross-build libcpucycles for Windows with mingw-w64 and
# run it under wine.
#
#   tests/check-windows.sh [TRIPLET...]
#
# With no argument, both x86_64-w64-mingw32 and i686-w64-mingw32.  Installs
# what is missing from Debian (gcc-mingw-w64-x86-64, gcc-mingw-w64-i686,
# wine64, wine; apt-get update only if an install fails).  For each target:
#  - configures out of tree, --host=TRIPLET --enable-werror (a warning of
#    the project's code fails the build), installs into a prefix under
#    the build directory (libcpucycles-1.dll, its import library, the static
#    library, cpucycles.pc, cpucycles-info.exe);
#  - checks the DLL's export table (exactly the five API symbols) and its
#    imports (Windows' own DLLs and the C runtime: no winpthread, no libgcc);
#  - under wine: cpucycles-info.exe (a counter other than default-zero, a
#    plausible frequency; then with CPUCYCLES_COUNTER=default-qpc), a
#    client linked against the DLL with `pkg-config --cflags --libs
#    cpucycles`, one linked statically with `pkg-config --static` (which
#    defines CPUCYCLES_STATIC);
#  - the portable Check programs (test-select, test-counters,
#    test-adapters, test-persecond, test-api) and tests/windows/test-windows.c,
#    built against tests/windows/check.h (Check's API as they use it: Debian
#    has no Check for mingw-w64) and run under wine, each test in a process
#    of its own.
# Debian 12's wine runs 32-bit programs only with wine32, which needs the
# i386 architecture enabled in dpkg.  Where wine32 is not installed, the
# script leaves dpkg alone: as root, it fetches wine32 and its i386
# libraries as .deb files with a private apt state (like check-cross.sh's
# Check), unpacks them into a private root, and runs the i686 programs in
# a mount namespace of their own (unshare -m) where an overlay lays that
# root's /usr/lib over the system's (/lib is /usr/lib on Debian 12), with
# a 32-bit wine prefix.  Where that cannot be done (not root, no overlay,
# WINE32=no), the i686 target is built and its DLL checked, and its
# programs are reported SKIP.
# A test is one check or one program run.  The last line is
# "N passed, N failed"; the exit status is nonzero when anything failed.
#
# WINDOWS_BUILD_DIR=DIR keeps the builds, logs and the wine prefix in DIR
# (default: a temporary directory, removed at the end when all passed).
# PROGRAM_TIMEOUT (default 120 s) bounds each program run under wine;
# CK_TIMEOUT_MULTIPLIER (default 10 here) multiplies each test's timeout.
set -u

ALL_TARGETS="x86_64-w64-mingw32 i686-w64-mingw32"
TEST_PROGRAMS="test-select test-counters test-adapters test-persecond test-windows test-api"

srcdir=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -gt 0 ]; then targets="$*"; else targets=$ALL_TARGETS; fi
export DEBIAN_FRONTEND=noninteractive
export WINEDEBUG=${WINEDEBUG:--all}
# Each test is a process of its own, which wine is slow to start.
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-10}
PROGRAM_TIMEOUT=${PROGRAM_TIMEOUT:-120}

passed=0
failed=0
skipped=0

result() { # target what PASS|FAIL|SKIP [note]
  printf '%-20s %-16s %s%s\n' "$1" "$2" "$3" "${4:+ ($4)}"
  case $3 in
    PASS) passed=$((passed + 1)) ;;
    FAIL) failed=$((failed + 1)) ;;
    SKIP) skipped=$((skipped + 1)) ;;
  esac
}

show_log() {
  echo "---- $1 (last 30 lines) ----"
  tail -n 30 "$1"
  echo "----"
}

apt_install() {
  apt-get install -y -q --no-install-recommends "$@" > "$build/apt-install.log" 2>&1 && return 0
  apt-get update -q > "$build/apt-update.log" 2>&1
  apt-get install -y -q --no-install-recommends "$@" >> "$build/apt-install.log" 2>&1
}

install_missing() {
  local missing= t
  for t in $targets; do
    command -v "$t-gcc" > /dev/null || case $t in
      x86_64-*) missing="$missing gcc-mingw-w64-x86-64" ;;
      i686-*) missing="$missing gcc-mingw-w64-i686" ;;
    esac
  done
  command -v wine > /dev/null || missing="$missing wine wine64"
  [ -n "$missing" ] || return 0
  echo "installing:$missing"
  apt_install $missing || { echo "apt-get install failed:"; tail -n 20 "$build/apt-install.log"; }
}

# Runs a Windows program under wine from DIR (where its DLLs are), output
# to LOG.  Returns the program's status, 124 on timeout.  $wine is the
# command: wine, or the private wine32 below.
wine=(wine)
run_wine() { # dir log program [args...]
  local dir=$1 log=$2; shift 2
  (cd "$dir" && timeout "$PROGRAM_TIMEOUT" "${wine[@]}" "$@") > "$log" 2>&1
}

# ---- wine32 without dpkg: a private root, seen through an overlay ----

wine32_root=

# $build/in-wine32-namespace COMMAND...: runs COMMAND in a mount namespace
# of its own where /usr/lib shows the private root's /usr/lib over the
# system's (a script, so that timeout can run it).
write_namespace_script() {
  cat > "$build/in-wine32-namespace" <<EOF
#!/bin/sh
exec unshare -m sh -c 'mount --make-rprivate / &&
  mount -t overlay overlay -o "lowerdir=\$0/usr/lib:/usr/lib" /usr/lib &&
  exec "\$@"' "$wine32_root" "\$@"
EOF
  chmod +x "$build/in-wine32-namespace"
}

setup_wine32() {
  local root=$build/wine32-root apt_dir=$build/apt-i386 f deb
  [ "${WINE32:-yes}" != no ] && [ "$(id -u)" = 0 ] && [ -L /lib ] &&
    command -v unshare > /dev/null || return 1
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/parts" "$root"
  : > "$apt_dir/status"
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && grep -q debian-archive-keyring "$f" && cp "$f" "$apt_dir/parts/"
  done
  if ! ls "$apt_dir/parts/"*.sources > /dev/null 2>&1; then
    grep -E '^deb ' /etc/apt/sources.list 2>/dev/null | grep -i debian > "$apt_dir/parts/debian.list"
  fi
  local opts=(-q -o "Dir::State::Lists=$apt_dir/lists"
    -o "Dir::Cache::Archives=$apt_dir/archives" -o "Dir::State::status=$apt_dir/status"
    -o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt_dir/parts"
    -o "APT::Architecture=i386" -o "APT::Architectures::=i386"
    -o "APT::Sandbox::User=root" -o "Debug::NoLocking=1")
  # An index that fails (a mirror mid-sync) is not fatal while the
  # packages can be found: nothing here must match the system's versions.
  apt-get "${opts[@]}" update > "$apt_dir/update.log" 2>&1
  apt-get "${opts[@]}" install -y --download-only --no-install-recommends wine32 \
    > "$apt_dir/download.log" 2>&1 || { show_log "$apt_dir/download.log"; return 1; }
  for deb in "$apt_dir/archives/"*.deb; do
    dpkg-deb -x "$deb" "$root" || return 1
  done
  # The i386 dynamic loader and libraries, under usr/lib where the overlay
  # shows them; zlib1.dll, which wine's user32 imports, is the system's
  # (libz-mingw-w64, a dependency of the installed wine).
  cp -a "$root/lib/ld-linux.so.2" "$root/usr/lib/" &&
    cp -an "$root/lib/i386-linux-gnu/." "$root/usr/lib/i386-linux-gnu/" || return 1
  for f in /usr/lib/x86_64-linux-gnu/wine/i386-windows/zlib1.dll /usr/share/mingw-w64/zlib1.dll; do
    [ -f "$f" ] && cp -L "$f" "$root/usr/lib/i386-linux-gnu/wine/i386-windows/" && break
  done
  wine32_root=$root
  write_namespace_script
  "$build/in-wine32-namespace" /usr/lib/wine/wine --version > "$build/wine32-version.log" 2>&1 ||
    { wine32_root=; show_log "$build/wine32-version.log"; return 1; }
}

# Whether wine runs this target's programs (32-bit ones need wine32).
wine_runs() { # target inst
  local log=$build/$1/wine-probe.log
  run_wine "$2/bin" "$log" ./cpucycles-info.exe --version && grep -q '^cpucycles-info (libcpucycles)' "$log"
}

check_dll() { # target inst
  local t=$1 dll=$2/bin/libcpucycles-1.dll objdump=$1-objdump dump exports imports bad
  if [ ! -f "$dll" ]; then result "$t" dll FAIL "no $dll"; return; fi
  dump=$build/$t/dll-objdump.txt
  "$objdump" -p "$dll" > "$dump"
  exports=$(sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' "$dump" |
            sed -n 's/^[[:space:]]*\[ *[0-9]*\] *//p' | sort | tr '\n' ' ')
  if [ "$exports" = "cpucycles cpucycles_implementation cpucycles_persecond cpucycles_tracesetup cpucycles_version " ]; then
    result "$t" dll-exports PASS "$exports"
  else
    result "$t" dll-exports FAIL "exports: $exports"
  fi
  imports=$(sed -n 's/^.*DLL Name: *//p' "$dump" | tr '\n' ' ')
  bad=$(for d in $imports; do
          case $(echo "$d" | tr 'A-Z' 'a-z') in
            kernel32.dll|advapi32.dll|msvcrt.dll|ucrtbase.dll|api-ms-win-*) ;;
            *) echo "$d" ;;
          esac
        done | tr '\n' ' ')
  if [ -z "$bad" ]; then
    result "$t" dll-imports PASS "$imports"
  else
    result "$t" dll-imports FAIL "imports $bad"
  fi
  # A data symbol is marked so in the import library: clients reach
  # cpucycles through __imp_cpucycles.
  if "$t-nm" "$2/lib/libcpucycles.dll.a" 2>/dev/null | grep -q -E ' __imp__?cpucycles$'; then
    result "$t" import-library PASS
  else
    result "$t" import-library FAIL "no __imp_cpucycles in libcpucycles.dll.a"
  fi
}

check_info() { # target inst runs
  local t=$1 bin=$2/bin log=$build/$1/cpucycles-info.log impl hz
  if [ "$3" = no ]; then result "$t" cpucycles-info SKIP "$why"; return; fi
  if ! run_wine "$bin" "$log" ./cpucycles-info.exe; then
    result "$t" cpucycles-info FAIL "exit status $?"; show_log "$log"; return
  fi
  impl=$(sed -n 's/^cpucycles implementation //p' "$log" | tr -d '\r')
  hz=$(sed -n 's/^cpucycles persecond //p' "$log" | tr -d '\r')
  case $impl in
    amd64-tsc|amd64-tscasm|x86-tsc|x86-tscasm|default-qpc) ;;
    *) result "$t" cpucycles-info FAIL "implementation '$impl'"; show_log "$log"; return ;;
  esac
  if [ -z "$hz" ] || [ "$hz" -lt 1000000 ] || [ "$hz" -gt 100000000000 ]; then
    result "$t" cpucycles-info FAIL "persecond '$hz'"; show_log "$log"; return
  fi
  result "$t" cpucycles-info PASS "$impl, $hz Hz"
  # The OS clock, which the TSC beats where RDTSC works, forced.
  log=$build/$1/cpucycles-info-qpc.log
  if CPUCYCLES_COUNTER=default-qpc run_wine "$bin" "$log" ./cpucycles-info.exe &&
     grep -q '^cpucycles implementation default-qpc' "$log"; then
    result "$t" default-qpc PASS "$(grep '^cpucycles tracesetup.*default-qpc' "$log" | tr -d '\r')"
  else
    result "$t" default-qpc FAIL "CPUCYCLES_COUNTER=default-qpc cpucycles-info.exe"; show_log "$log"
  fi
}

# A client of the installed library, as a user builds one: against the DLL
# (dynamic) or the static library (static), flags from pkg-config.
check_client() { # target inst runs dynamic|static
  local t=$1 inst=$2 runs=$3 how=$4 dir=$build/$1 exe pcflags imports log
  exe=$dir/client-$how.exe
  log=$dir/client-$how.log
  if [ "$how" = static ]; then
    pcflags=$(PKG_CONFIG_LIBDIR=$inst/lib/pkgconfig pkg-config --static --cflags --libs cpucycles)
    pcflags="-static $pcflags"
  else
    pcflags=$(PKG_CONFIG_LIBDIR=$inst/lib/pkgconfig pkg-config --cflags --libs cpucycles)
  fi
  if ! "$t-gcc" -Wall -Wextra -Werror "$srcdir/tests/windows/client.c" $pcflags \
       -o "$exe" > "$log" 2>&1; then
    result "$t" client-$how FAIL "does not build: $pcflags"; show_log "$log"; return
  fi
  imports=$("$t-objdump" -p "$exe" | sed -n 's/^.*DLL Name: *//p' | tr '\n' ' ')
  case "$how:$imports" in
    dynamic:*libcpucycles-1.dll*) ;;
    static:*libcpucycles-1.dll*) result "$t" client-$how FAIL "imports the DLL"; return ;;
    dynamic:*) result "$t" client-$how FAIL "does not import the DLL"; return ;;
  esac
  if [ "$runs" = no ]; then result "$t" client-$how SKIP "built; $why"; return; fi
  cp "$exe" "$inst/bin/"
  if run_wine "$inst/bin" "$log" "./$(basename "$exe")"; then
    result "$t" client-$how PASS "$(head -n 1 "$log" | tr -d '\r')"
  else
    result "$t" client-$how FAIL "exit status $?"; show_log "$log"
  fi
}

# The test programs, built against tests/windows/check.h and the library's
# internals (lib/.libs/libcpucycles-core.a, with libcpucycles-sys.a or, for
# test-select, the tests' seams in its place), test-api against the DLL.
build_tests() { # target inst
  local t=$1 inst=$2 dir=$build/$1 cflags prog srcs libs ok=yes
  cflags="$(sed -n 's/^CFLAGS = //p' "$dir/Makefile") -Wall -Wextra -Werror -DHAVE_CONFIG_H
    -I$dir -I$srcdir/include -I$srcdir/lib -I$srcdir/tests/windows -I$srcdir/tests"
  mkdir -p "$dir/tests"
  for prog in $TEST_PROGRAMS; do
    srcs=$srcdir/tests/$prog.c
    libs="-static $dir/lib/.libs/libcpucycles-core.a $dir/lib/.libs/libcpucycles-sys.a -lpthread"
    case $prog in
      test-select) srcs="$srcs $srcdir/tests/fake-counters.c $srcdir/tests/seams.c"
        libs="-static $dir/lib/.libs/libcpucycles-core.a -lpthread" ;;
      test-windows) srcs=$srcdir/tests/windows/test-windows.c ;;
      test-api) libs="-L$inst/lib -lcpucycles -Wl,-Bstatic -lpthread -Wl,-Bdynamic" ;;
    esac
    # shellcheck disable=SC2086
    if ! "$t-gcc" $cflags $srcs $libs -o "$dir/tests/$prog.exe" \
         > "$dir/tests/$prog-build.log" 2>&1; then
      result "$t" "$prog" FAIL "does not build"; show_log "$dir/tests/$prog-build.log"
      continue
    fi
  done
}

run_tests() { # target inst runs
  local t=$1 inst=$2 runs=$3 dir=$build/$1 prog log status note
  for prog in $TEST_PROGRAMS; do
    [ -f "$dir/tests/$prog.exe" ] || continue
    if [ "$runs" = no ]; then result "$t" "$prog" SKIP "built; $why"; continue; fi
    cp "$dir/tests/$prog.exe" "$inst/bin/"
    log=$dir/tests/$prog.log
    srcdir=$srcdir/tests run_wine "$inst/bin" "$log" "./$prog.exe"
    status=$?
    note=$(grep -E '^[0-9]+%: Checks:' "$log" | tail -n 1 | tr -d '\r')
    if [ $status -eq 0 ]; then
      result "$t" "$prog" PASS "$note"
    else
      result "$t" "$prog" FAIL "${note:-exit status $status}"; show_log "$log"
    fi
  done
}

run_target() {
  local t=$1 dir=$build/$1 inst=$build/$1/inst runs=yes
  mkdir -p "$dir"
  if ! command -v "$t-gcc" > /dev/null; then
    result "$t" build FAIL "no $t-gcc"; return
  fi
  # The build machine's pkg-config would find its own Check: point it
  # nowhere, so that configure builds no Check program for Windows.
  if ! (cd "$dir" && PKG_CONFIG_LIBDIR=/nonexistent "$srcdir/configure" \
          --host="$t" --prefix="$inst" --enable-werror) > "$dir/configure.log" 2>&1; then
    result "$t" configure FAIL; show_log "$dir/configure.log"; return
  fi
  sed -n 's/^ *counters: *//p' "$dir/configure.log" | sed "s/^/$t counters: /"
  if ! make -C "$dir" -j2 install > "$dir/make.log" 2>&1; then
    result "$t" build FAIL; show_log "$dir/make.log"; return
  fi
  if grep -q 'warning:' "$dir/make.log"; then
    result "$t" build FAIL "warnings"; grep 'warning:' "$dir/make.log" | head -n 20
  else
    result "$t" build PASS "$(cd "$inst" && ls bin/*.dll bin/*.exe lib/*.a lib/pkgconfig/*.pc | tr '\n' ' ')"
  fi
  check_dll "$t" "$inst"
  why=
  wine=(wine)
  case $t in
    i686-*) if [ ! -e /usr/lib/wine/wine ] && { [ -n "$wine32_root" ] || setup_wine32; }; then
              wine=("$build/in-wine32-namespace" env WINEARCH=win32 WINEPREFIX="$build/wineprefix32"
                    /usr/lib/wine/wine)
              echo "$t: wine32 from a private root ($wine32_root)"
            fi ;;
  esac
  if ! wine_runs "$t" "$inst"; then
    runs=no
    why="wine does not run $t programs here"
    case $t in
      i686-*) if [ -n "$wine32_root" ]; then
                why="the private wine32 does not run them (wine-probe.log)"
              elif [ ! -e /usr/lib/wine/wine ] || grep -q wine32 "$dir/wine-probe.log"; then
                why="wine32 is not installed and no private one could be set up"
              fi ;;
    esac
  fi
  check_info "$t" "$inst" $runs
  check_client "$t" "$inst" $runs dynamic
  check_client "$t" "$inst" $runs static
  build_tests "$t" "$inst"
  run_tests "$t" "$inst" $runs
}

# ---- main ----

if [ -n "${WINDOWS_BUILD_DIR:-}" ]; then
  build=$WINDOWS_BUILD_DIR; mkdir -p "$build"; keep=yes
else
  build=$(mktemp -d "${TMPDIR:-/tmp}/check-windows.XXXXXX"); keep=no
fi
build=$(cd "$build" && pwd)

if [ ! -x "$srcdir/configure" ]; then
  (cd "$srcdir" && autoreconf -fi) > "$build/autoreconf.log" 2>&1 ||
    { show_log "$build/autoreconf.log"; echo "0 passed, 1 failed"; exit 1; }
fi
if [ -f "$srcdir/config.status" ]; then
  echo "check-windows: $srcdir is configured in place; out-of-tree builds need"
  echo "it clean: run 'make distclean' there first"
  echo "0 passed, 1 failed"
  exit 1
fi

start=$(date +%s)
install_missing
# A wine prefix of our own, made on first use and stopped at the end.
export WINEPREFIX=$build/wineprefix
for t in $targets; do
  t_start=$(date +%s)
  run_target "$t"
  echo "$t: $(( $(date +%s) - t_start )) s"
done
command -v wineserver > /dev/null && wineserver -k > /dev/null 2>&1
[ -n "$wine32_root" ] && WINEPREFIX=$build/wineprefix32 "$build/in-wine32-namespace" /usr/lib/wine/wineserver -k > /dev/null 2>&1

echo
echo "windows ($(( $(date +%s) - start )) s, builds in $build)"
[ $skipped -gt 0 ] && echo "($skipped skipped: see the SKIP lines for why)"
[ $failed -eq 0 ] && [ $keep = no ] && rm -rf "$build"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
