#!/usr/bin/env bash
# Packaging checks, each a counted step:
#   distcheck        make distcheck on a copy of this tree (VPATH build),
#                    configured with --enable-werror: no warning
#   tarball          the tarball holds the spec, license, NEWS, every
#                    fixture in tests/fixtures/*/FILES and every tracked
#                    source, test, example and doc file
#   install-layout   --prefix, multiarch --libdir and DESTDIR are honoured
#                    (built from the tarball with --enable-werror), and the
#                    files installed are those doc/packaging.md lists
#   pkgconfig-shared a client built with pkg-config --cflags --libs runs
#   pkgconfig-static a client built -static with pkg-config --static runs
#   examples         examples/*.c built with pkg-config against the
#                    installed library, and run
#   cmake            examples/CMakeLists.txt (pkg_check_modules ...
#                    IMPORTED_TARGET cpucycles) built and run against it
#   meson            examples/meson.build (dependency('cpucycles')) built
#                    and run against it
#   deb-build        dpkg-buildpackage -us -uc from the tarball as .orig
#   deb-checkout     dpkg-buildpackage -us -uc -b in a copy of this checkout
#   deb-contents     each binary package holds what it should, and none
#                    Breaks, Replaces or Conflicts with another
#   deb-hardening    blhc finds no missing hardening flags in the build log
#   deb-autopkgtest  debian/tests/* run against the unpacked .debs
#   deb-upgrade      Debian trixie's own libcpucycles1, libcpucycles-dev and
#                    cpucycles installed, upgraded to ours, downgraded back,
#                    then upgraded again by one dpkg -i of our three .debs
#                    (dpkg --audit empty after it; no file of Debian's in
#                    another package of ours), a client of each run at
#                    every stage, everything removed (root only; SKIP when
#                    trixie's packages cannot be fetched or the machine
#                    already has such packages)
#   lintian          no errors or warnings on the .changes
#   rpmbuild         rpmbuild --nodeps -ta builds the four packages
#   rpm-upgrade      the RPMs' versions sort above Fedora's, and every file
#                    of Fedora's packages that ours moves to another
#                    package is covered by an Obsoletes (rpm's own tools)
# Prints PASS/FAIL/SKIP per step and, as its last line,
# "N passed, N failed, N skipped".  Installs missing tools with apt-get
# when run as root.  Works in a temporary directory; the source tree is
# only read; deb-upgrade installs and removes packages and leaves the
# machine's package set as it found it.
#
# Usage: tests/check-packaging.sh [STEP...]   (default: all steps)
#        TARBALL=libcpucycles-V.tar.gz tests/check-packaging.sh
#          checks that tarball instead of making one (distcheck is skipped)
#        KEEP_WORK=1 keeps the work directory and its logs
set -u
export LC_ALL=C.UTF-8
export DEBIAN_FRONTEND=noninteractive

src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/check-packaging.XXXXXX")
# Searchable by all, as a build tree normally is: make check runs a
# setuid-nobody copy of a test program that loads the library from here.
chmod 755 "$work"
keep=${KEEP_WORK:-}
cleanup() { if [ -z "$keep" ]; then rm -rf "$work"; else echo "work dir kept: $work"; fi; }
trap cleanup EXIT

passed=0
failed=0
skipped=0
only=" $* "
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || echo lib)

wanted() { [ "$only" = "  " ] || [[ $only == *" $1 "* ]]; }

pass() { echo "PASS: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1${2:+ ($2)}"; failed=$((failed + 1)); }
skip() { echo "SKIP: $1${2:+ ($2)}"; skipped=$((skipped + 1)); }

# Runs "$@" with its output in $work/NAME.log; on failure shows its tail
# and, when make check failed somewhere in the work directory, the logs of
# the failing tests (automake's test-suite.log carries them).
logged() {
  local name=$1; shift
  if "$@" > "$work/$name.log" 2>&1; then
    return 0
  fi
  echo "--- last lines of $name.log:"
  tail -n 40 "$work/$name.log" | sed "s/^/    | /"
  show_failed_tests
  return 1
}

# The test-suite.log files in the work directory written since the
# current step began (run() marks it) that record a failure, at most 150
# lines each.
show_failed_tests() {
  local f
  find "$work" -name test-suite.log -newer "$work/.step-start" 2>/dev/null |
  while read -r f; do
    grep -qE '^# (FAIL|ERROR): *[1-9]' "$f" || continue
    echo "--- $f:"
    head -n 150 "$f" | sed "s/^/    | /"
  done
}

# ensure COMMAND PACKAGE: install PACKAGE when COMMAND is missing.
ensure() {
  command -v "$1" > /dev/null 2>&1 && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing $1 (package $2), and not root to install it"
    return 1
  fi
  if [ -z "${apt_updated:-}" ]; then
    apt-get update -q > "$work/apt-update.log" 2>&1
    apt_updated=1
  fi
  apt-get install -y -q --no-install-recommends "$2" > "$work/apt-$2.log" 2>&1 ||
    { tail -n 20 "$work/apt-$2.log"; return 1; }
}

ensure git git
ensure autoreconf autoconf
ensure gcc gcc
ensure make make
ensure pkg-config pkg-config
ensure dpkg-architecture dpkg-dev
# The build dependencies, from their single list in debian/control.
if ! (cd "$src" && dpkg-checkbuilddeps > /dev/null 2>&1) && [ "$(id -u)" -eq 0 ]; then
  apt-get update -q > "$work/apt-update.log" 2>&1
  apt_updated=1
  (cd "$src" && apt-get build-dep -y -q ./) > "$work/build-dep.log" 2>&1 || tail -n 20 "$work/build-dep.log"
fi

# shellcheck source=copy-tree.sh
. "$src/tests/copy-tree.sh"
copy_tree "$work/tree"
version=$(sed -n 's/^AC_INIT(\[libcpucycles\], *\[\([^]]*\)\].*/\1/p' "$work/tree/configure.ac")
# The Debian version, 0~YYYYMMDD-N (doc/packaging.md), and its upstream
# part, which names the .orig tarball.
deb_version=$(dpkg-parsechangelog -l "$work/tree/debian/changelog" -S Version 2>/dev/null)
deb_upstream=${deb_version%-*}
tarball=$work/build/libcpucycles-$version.tar.gz
echo "libcpucycles $version, multiarch $multiarch, work in $work"
if [ -n "${TARBALL:-}" ]; then
  mkdir -p "$work/build"
  cp "$TARBALL" "$tarball" || exit 1
fi

# --- distcheck ------------------------------------------------------------
step_distcheck() {
  logged autoreconf sh -c "cd '$work/tree' && autoreconf -fi" || return 1
  mkdir -p "$work/build"
  logged configure sh -c "cd '$work/build' && '$work/tree/configure' --enable-werror" || return 1
  logged distcheck make -C "$work/build" -j"$jobs" distcheck \
    DISTCHECK_CONFIGURE_FLAGS=--enable-werror || return 1
  [ -f "$tarball" ] || { echo "no $tarball"; return 1; }
  # Reproducible: made again after the sources' times changed and under
  # another umask, the tarball is the same, byte for byte.
  local first
  first=$(sha256sum < "$tarball")
  touch "$work/tree/README.md" "$work"/tree/lib/*.c
  logged dist-again sh -c "umask 002 && make -C '$work/build' dist" || return 1
  [ "$(sha256sum < "$tarball")" = "$first" ] || { echo "make dist is not reproducible"; return 1; }
  echo "make dist twice: the same tarball"
}

# --- tarball contents -----------------------------------------------------
step_tarball() {
  [ -f "$tarball" ] || { echo "no tarball (distcheck failed)"; return 1; }
  local list=$work/tarball.list top=libcpucycles-$version missing=0 f
  tar -tzf "$tarball" | sed "s|^$top/||" | sort > "$list"
  grep -qx "libcpucycles.spec" "$list" || { echo "no libcpucycles.spec"; missing=1; }
  grep -q "^Version: *$version\$" <(tar -xzOf "$tarball" "$top/libcpucycles.spec" 2>/dev/null) ||
    { echo "spec Version is not $version"; missing=1; }
  # Every fixture listed in a FILES file, and every tracked file that a
  # build, a test or a reader needs.
  {
    cat "$work"/tree/tests/fixtures/*/FILES 2>/dev/null
    (cd "$work/tree" && find LICENSE README.md NEWS SECURITY.md HACKING.md configure.ac \
        Makefile.am cpucycles.pc.in libcpucycles.spec.in include lib src tests doc bench \
        examples m4/cpucycles.m4 \
        -type f 2>/dev/null)
  } | sort -u | while read -r f; do
    grep -qxF "$f" "$list" || echo "missing from tarball: $f"
  done > "$work/tarball.missing"
  if [ -s "$work/tarball.missing" ]; then
    head -n 30 "$work/tarball.missing"
    missing=1
  fi
  [ "$missing" -eq 0 ]
}

# --- install layout, pkg-config ------------------------------------------
unpack() {  # unpack DIR: the tarball, unpacked into $work/DIR
  rm -rf "${work:?}/$1"; mkdir -p "$work/$1"
  tar -xzf "$tarball" -C "$work/$1" --strip-components=1
}

prefix=$work/prefix
libdir=$prefix/lib/$multiarch

step_install_layout() {
  [ -f "$tarball" ] || { echo "no tarball (distcheck failed)"; return 1; }
  unpack inst || return 1
  logged inst-configure sh -c "cd '$work/inst' && ./configure --enable-werror --prefix='$prefix' --libdir='$libdir'" || return 1
  logged inst-make make -C "$work/inst" -j"$jobs" || return 1
  logged inst-destdir make -C "$work/inst" install DESTDIR="$work/dest" || return 1
  local bad=0 f
  for f in include/cpucycles.h "lib/$multiarch/libcpucycles.so" "lib/$multiarch/libcpucycles.so.1" \
           "lib/$multiarch/libcpucycles.a" "lib/$multiarch/pkgconfig/cpucycles.pc" \
           bin/cpucycles-info share/man/man1/cpucycles-info.1 share/man/man3/cpucycles.3 \
           bin/cpucycles-open share/man/man1/cpucycles-open.1; do
    [ -e "$work/dest$prefix/$f" ] || { echo "DESTDIR install lacks $f"; bad=1; }
  done
  # Nothing outside DESTDIR+prefix, nothing in DESTDIR outside prefix.
  if [ -n "$(find "$work/dest" -mindepth 1 -not -path "$work/dest$prefix*" -not -type d)" ]; then
    echo "DESTDIR install wrote outside the prefix"; bad=1
  fi
  [ -e "$prefix" ] && { echo "DESTDIR install wrote into the real prefix"; bad=1; }
  grep -qx "libdir=$libdir" "$work/dest$libdir/pkgconfig/cpucycles.pc" ||
    { echo "cpucycles.pc libdir is not $libdir"; bad=1; }
  # Exactly the files doc/packaging.md's install layout table lists.
  install_table > "$work/install-doc.list"
  (cd "$work/dest$prefix" && find . -mindepth 1 -not -type d | sed 's|^\./||' | sort) \
    > "$work/install-real.list"
  if ! diff -u "$work/install-doc.list" "$work/install-real.list" > "$work/install-table.diff"; then
    echo "make install and doc/packaging.md's table differ (-doc +installed):"
    grep '^[-+][^-+]' "$work/install-table.diff"; bad=1
  fi
  # The real install, for the pkg-config clients.
  logged inst-install make -C "$work/inst" install || return 1
  [ "$bad" -eq 0 ]
}

# The first table of doc/packaging.md ("Install layout"), its LIBDIR,
# INCLUDEDIR, BINDIR and MANDIR spelled as install-layout configures them
# (relative to the prefix), sorted.
install_table() {
  awk '/^## Install layout/ { on = 1; next } /^## / { on = 0 } on' "$work/tree/doc/packaging.md" |
    sed -n 's/^| `\([A-Z]*DIR\)\/\([^`]*\)`.*/\1\/\2/p' |
    sed -e "s|^LIBDIR/|lib/$multiarch/|" -e 's|^INCLUDEDIR/|include/|' \
        -e 's|^BINDIR/|bin/|' -e 's|^MANDIR/|share/man/|' | sort
}

pc() { PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config "$@"; }

step_pkgconfig_shared() {
  [ -f "$libdir/pkgconfig/cpucycles.pc" ] || { echo "not installed"; return 1; }
  local flags
  flags=$(pc --cflags --libs cpucycles) || return 1
  echo "pkg-config --cflags --libs cpucycles: $flags"
  # shellcheck disable=SC2086
  logged client-shared gcc -Wall -Wextra -Werror -o "$work/client-shared" \
    "$src/tests/packaging/client.c" $flags || return 1
  LD_LIBRARY_PATH=$libdir "$work/client-shared" || return 1
  LD_LIBRARY_PATH=$libdir ldd "$work/client-shared" | grep -q "$libdir/libcpucycles.so.1" ||
    { echo "client-shared does not use $libdir/libcpucycles.so.1"; return 1; }
}

step_pkgconfig_static() {
  [ -f "$libdir/pkgconfig/cpucycles.pc" ] || { echo "not installed"; return 1; }
  local flags
  flags=$(pc --cflags --static --libs cpucycles) || return 1
  echo "pkg-config --static --libs cpucycles: $flags"
  # Fully static: the library's own dependencies come from Libs.private.
  # shellcheck disable=SC2086
  logged client-static gcc -Wall -Wextra -Werror -static -o "$work/client-static" \
    "$src/tests/packaging/client.c" $flags || return 1
  "$work/client-static" || return 1
  if ldd "$work/client-static" > /dev/null 2>&1; then
    echo "client-static is dynamically linked"; return 1
  fi
}

# --- the examples, with pkg-config, CMake and Meson -------------------------
# run_examples DIR: DIR/example and DIR/median run against the installed
# library (LD_LIBRARY_PATH names it, ldd must find it there) and print what
# they should.
run_examples() {
  local dir=$1 out
  LD_LIBRARY_PATH=$libdir ldd "$dir/example" | grep -q "$libdir/libcpucycles.so.1" ||
    { echo "$dir/example does not use $libdir/libcpucycles.so.1"; return 1; }
  out=$(LD_LIBRARY_PATH=$libdir "$dir/example") || { echo "$dir/example failed"; return 1; }
  echo "example: $out"
  echo "$out" | grep -Eqx -- '-?[0-9]+ cycles with [a-z0-9-]+' || return 1
  out=$(LD_LIBRARY_PATH=$libdir "$dir/median" 101) || { echo "$dir/median failed"; return 1; }
  echo "$out" | sed 's/^/median: /'
  echo "$out" | grep -Eq '^function: median -?[0-9]+ cycles, quartiles -?[0-9]+ and -?[0-9]+$' &&
    echo "$out" | grep -Eq '^empty interval: median -?[0-9]+ cycles, quartiles' ||
    { echo "median printed no median and quartiles"; return 1; }
}

step_examples() {
  [ -f "$libdir/pkgconfig/cpucycles.pc" ] || { echo "not installed"; return 1; }
  local dir=$work/examples-cc flags p
  mkdir -p "$dir"
  flags=$(pc --cflags --libs cpucycles) || return 1
  for p in example median; do
    # shellcheck disable=SC2086
    logged "examples-$p" gcc -Wall -Wextra -Werror -o "$dir/$p" \
      "$work/inst/examples/$p.c" $flags || return 1
  done
  run_examples "$dir"
}

step_cmake() {
  [ -f "$libdir/pkgconfig/cpucycles.pc" ] || { echo "not installed"; return 1; }
  ensure cmake cmake || return 1
  local dir=$work/examples-cmake
  rm -rf "$dir"
  logged cmake-configure env PKG_CONFIG_PATH="$libdir/pkgconfig" \
    cmake -S "$work/inst/examples" -B "$dir" || return 1
  logged cmake-build cmake --build "$dir" || return 1
  grep -i 'cpucycles' "$dir/CMakeCache.txt" | grep -E '^CPUCYCLES_(VERSION|LINK_LIBRARIES)' | sed 's/^/cmake: /'
  run_examples "$dir"
}

step_meson() {
  [ -f "$libdir/pkgconfig/cpucycles.pc" ] || { echo "not installed"; return 1; }
  ensure meson meson || return 1
  ensure ninja ninja-build || return 1
  local dir=$work/examples-meson
  rm -rf "$dir"
  logged meson-setup env PKG_CONFIG_PATH="$libdir/pkgconfig" \
    meson setup "$dir" "$work/inst/examples" || return 1
  grep -E 'Run-time dependency cpucycles found' "$work/meson-setup.log" | sed 's/^/meson: /'
  logged meson-compile meson compile -C "$dir" || return 1
  run_examples "$dir"
}

# --- Debian ----------------------------------------------------------------
step_deb_build() {
  [ -f "$tarball" ] || { echo "no tarball (distcheck failed)"; return 1; }
  ensure dpkg-buildpackage dpkg-dev || return 1
  ensure dh debhelper || return 1
  # As a Debian maintainer would: the release tarball as the .orig, with
  # debian/ from this tree added (the tarball does not carry it).
  # debian/changelog must name this release, in Debian's numbering.
  [ "$deb_upstream" = "0~$version" ] ||
    { echo "debian/changelog version $deb_version is not 0~$version-N"; return 1; }
  rm -rf "$work/deb"; mkdir -p "$work/deb"
  cp "$tarball" "$work/deb/libcpucycles_$deb_upstream.orig.tar.gz"
  unpack "deb/libcpucycles-$version" || return 1
  rm -rf "$work/deb/libcpucycles-$version/debian"
  cp -a "$work/tree/debian" "$work/deb/libcpucycles-$version/debian"
  # Source and binaries, so that lintian sees the source package too.
  logged deb-build sh -c "cd '$work/deb/libcpucycles-$version' && dpkg-buildpackage -us -uc -j$jobs" || return 1
  ls "$work"/deb/*.dsc || return 1
  ls "$work"/deb/*.deb
  [ "$(ls "$work"/deb/*.deb | grep -vc dbgsym)" -eq 3 ]
}

deb_has() {  # deb_has PACKAGE PATH...: PACKAGE's .deb holds each PATH
  local pkg=$1 deb list bad=0 f; shift
  deb=$(ls "$work"/deb/"${pkg}"_*.deb 2>/dev/null | head -n 1)
  [ -n "$deb" ] || { echo "no $pkg .deb"; return 1; }
  list=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|')
  for f; do
    echo "$list" | grep -qx -- "$f" || { echo "$pkg lacks $f"; bad=1; }
  done
  return $bad
}

# As README's readers and CI would: straight from a checkout, where
# dh_autoreconf generates the build system.
step_deb_checkout() {
  ensure dpkg-buildpackage dpkg-dev || return 1
  ensure dh debhelper || return 1
  rm -rf "$work/debco"
  copy_tree "$work/debco/libcpucycles"
  logged deb-checkout sh -c "cd '$work/debco/libcpucycles' && dpkg-buildpackage -us -uc -b -j$jobs" || return 1
  [ "$(ls "$work"/debco/*.deb | grep -vc dbgsym)" -eq 3 ]
}

step_deb_contents() {
  local bad=0 ma=$multiarch p f
  # cpucycles.3 in libcpucycles1, where Debian's packages have it.
  deb_has libcpucycles1 "/usr/lib/$ma/libcpucycles.so.1" \
    "/usr/share/doc/libcpucycles1/copyright" /usr/share/man/man3/cpucycles.3.gz || bad=1
  deb_has libcpucycles-dev /usr/include/cpucycles.h "/usr/lib/$ma/libcpucycles.so" \
    "/usr/lib/$ma/libcpucycles.a" "/usr/lib/$ma/pkgconfig/cpucycles.pc" || bad=1
  deb_has cpucycles /usr/bin/cpucycles-info /usr/share/man/man1/cpucycles-info.1.gz \
    /usr/bin/cpucycles-open /usr/share/man/man1/cpucycles-open.1.gz || bad=1
  # The release notes (compressed once they pass 4 KiB), and the examples
  # with the development files.
  deb_has libcpucycles-dev /usr/share/doc/libcpucycles-dev/examples/example.c \
    /usr/share/doc/libcpucycles-dev/examples/median.c || bad=1
  for p in libcpucycles-dev cpucycles; do
    deb_has "$p" "/usr/share/doc/$p/NEWS" > /dev/null ||
      deb_has "$p" "/usr/share/doc/$p/NEWS.gz" || bad=1
  done
  local deb
  deb=$(ls "$work"/deb/libcpucycles1_*.deb | head -n 1)
  [ -n "$deb" ] || return 1
  dpkg-deb -f "$deb" Multi-Arch | grep -qx same || { echo "libcpucycles1 not Multi-Arch: same"; bad=1; }
  rm -rf "$work/ctl"; dpkg-deb -e "$deb" "$work/ctl"
  grep -q '^ cpucycles_persecond@Base' "$work/ctl/symbols" 2>/dev/null ||
    { echo "libcpucycles1 has no symbols file"; bad=1; }
  # Programs built against ours must install with Debian's library: the
  # five symbols date from 0~20230115, as in Debian's symbols file.
  if grep '@Base' "$work/ctl/symbols" | grep -qv ' 0~20230115$'; then
    echo "libcpucycles1's symbols are not all 0~20230115:"; cat "$work/ctl/symbols"; bad=1
  fi
  deb=$(ls "$work"/deb/cpucycles_*.deb | head -n 1)
  # cpucycles-info holds the library's code (one probe in the process,
  # lib/select.h), not libcpucycles.so.1: the package needs no
  # libcpucycles1, so it mixes with Debian's library either way
  if dpkg-deb -f "$deb" Depends | grep -q 'libcpucycles'; then
    echo "cpucycles Depends: $(dpkg-deb -f "$deb" Depends)"; bad=1
  fi
  rm -rf "$work/cpucycles-x"
  dpkg-deb -x "$deb" "$work/cpucycles-x"
  if readelf -dW "$work/cpucycles-x/usr/bin/cpucycles-info" | grep -q 'NEEDED.*libcpucycles'; then
    echo "cpucycles-info needs libcpucycles.so.1"; bad=1
  fi
  # No file moves between Debian's packages and ours, so no package
  # Breaks or Replaces another (a Breaks stops a single dpkg -i of the
  # three over Debian's; deb-upgrade checks the file lists themselves).
  for deb in "$work"/deb/*.deb; do
    for f in Breaks Replaces Conflicts; do
      [ -z "$(dpkg-deb -f "$deb" "$f")" ] ||
        { echo "${deb##*/} $f: $(dpkg-deb -f "$deb" "$f")"; bad=1; }
    done
  done
  return $bad
}

step_deb_hardening() {
  [ -f "$work/deb-build.log" ] || { echo "no build log"; return 1; }
  ensure blhc blhc || return 1
  local bad=0 root=$work/hardroot deb
  # blhc reads the architecture and the hardening options from the log.
  logged blhc blhc "$work/deb-build.log" || bad=1
  # And the result: a PIE, full RELRO, BIND_NOW program and library.
  rm -rf "$root"; mkdir -p "$root"
  for deb in "$work"/deb/cpucycles_*.deb "$work"/deb/libcpucycles1_*.deb; do
    dpkg-deb -x "$deb" "$root" || bad=1
  done
  readelf -h "$root/usr/bin/cpucycles-info" | grep -q 'Type: *DYN' ||
    { echo "cpucycles-info is not PIE"; bad=1; }
  for f in "$root/usr/bin/cpucycles-info" "$root"/usr/lib/*/libcpucycles.so.1; do
    readelf -lW "$f" | grep -q GNU_RELRO || { echo "$f: no RELRO"; bad=1; }
    readelf -dW "$f" | grep -q BIND_NOW || { echo "$f: no BIND_NOW"; bad=1; }
  done
  [ "$bad" -eq 0 ] && echo "blhc clean; PIE, RELRO and BIND_NOW present"
  return $bad
}

# The autopkgtest scripts, run against the .debs unpacked into a root
# rather than installed, so that the check leaves the system alone.
step_deb_autopkgtest() {
  local root=$work/debroot deb t bad=0
  rm -rf "$root"; mkdir -p "$root"
  for deb in "$work"/deb/*.deb; do dpkg-deb -x "$deb" "$root"; done
  [ -x "$root/usr/bin/cpucycles-info" ] || { echo "no unpacked packages"; return 1; }
  for t in pkg-config-client cpucycles-info upstream-tests; do
    mkdir -p "$work/apt-$t"
    if (cd "$work/tree" &&
        PKG_CONFIG_PATH="$root/usr/lib/$multiarch/pkgconfig" \
        PKG_CONFIG_SYSROOT_DIR="$root" \
        LD_LIBRARY_PATH="$root/usr/lib/$multiarch" \
        PATH="$root/usr/bin:$PATH" AUTOPKGTEST_TMP="$work/apt-$t" \
        "debian/tests/$t") > "$work/autopkgtest-$t.log" 2>&1; then
      echo "autopkgtest $t: ok"
    else
      echo "autopkgtest $t: failed"; tail -n 20 "$work/autopkgtest-$t.log"; bad=1
    fi
  done
  return $bad
}

# --- Upgrading and downgrading Debian's own packages ------------------------
# Debian's packages of the original, from trixie (0~20240318-2), fetched
# with apt-get download through a private apt configuration naming the
# machine's own Debian mirror; the machine's sources are not touched.
debian_pkgs="libcpucycles1 libcpucycles-dev cpucycles"
debian_suite=${DEBIAN_SUITE:-trixie}

# The URI of the machine's Debian archive (not its security archive), as
# apt itself reads the sources (one-line and deb822 formats alike).
debian_mirror() {
  apt-get indextargets --format '$(ORIGIN)|$(LABEL)|$(REPO_URI)' 2>/dev/null |
    awk -F'|' '$1 == "Debian" && $2 == "Debian" { print $3; exit }'
}

# Sets $apt_private to the apt options of a private configuration for
# $debian_suite on the machine's mirror, with its lists downloaded.
private_apt() {
  local dir=$work/apt-private mirror keyring=/usr/share/keyrings/debian-archive-keyring.gpg opts=
  mirror=$(debian_mirror)
  # Lists never downloaded: the first non-security URI of the sources
  # themselves, one-line or deb822.
  [ -n "$mirror" ] || mirror=$( {
      sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([a-z]*:[^ ]*\) .*/\2/p' \
        /etc/apt/sources.list /etc/apt/sources.list.d/*.list
      sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources
    } 2>/dev/null | grep '/debian/*$' | head -n 1)
  [ -n "$mirror" ] || { echo "no Debian mirror in the machine's apt sources"; return 1; }
  rm -rf "$dir"; mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/get"
  [ -f "$keyring" ] && opts="[signed-by=$keyring] "
  echo "deb $opts${mirror%/} $debian_suite main" > "$dir/sources.list"
  # apt's download sandbox user must be able to write here.
  id _apt > /dev/null 2>&1 && chown -R _apt "$dir/lists" "$dir/cache" "$dir/get"
  apt_private="-o Dir::Etc::sourcelist=$dir/sources.list -o Dir::Etc::sourceparts=-
    -o Dir::State::Lists=$dir/lists -o Dir::Cache=$dir/cache"
  echo "private apt source: $(cat "$dir/sources.list")"
  # shellcheck disable=SC2086
  logged apt-private-update apt-get $apt_private -q update || return 1
  grep -q '^[WE]:' "$work/apt-private-update.log" &&
    { grep '^[WE]:' "$work/apt-private-update.log"; return 1; }
  return 0
}

installed_version() {  # installed_version PACKAGE: its version, or nothing
  dpkg-query -W -f='${db:Status-Status} ${Version}\n' "$1" 2>/dev/null |
    awk '$1 == "installed" { print $2 }'
}

# expect_versions V1 V2 V3: the installed versions of $debian_pkgs
expect_versions() {
  local p v bad=0
  for p in $debian_pkgs; do
    v=$(installed_version "$p")
    [ "$v" = "$1" ] || { echo "$p: installed '${v:-nothing}', expected $1"; bad=1; }
    shift
  done
  return $bad
}

# run_client NAME EXPECTED-VERSION: run $work/upgrade/NAME, which must
# print the version of the library installed now.
run_client() {
  local out
  out=$("$work/upgrade/$1" 2>&1) || { echo "$1 failed: $out"; return 1; }
  echo "$1: $out"
  case $out in
    *"libcpucycles $2,"*) ;;
    *) echo "$1 did not run against libcpucycles $2"; return 1 ;;
  esac
}

apt_get() {  # apt-get, waiting for the dpkg lock other jobs may hold
  apt-get -y -q -o DPkg::Lock::Timeout=300 "$@"
}

# dpkg -i, waiting as apt_get does (up to 300 s) while another job holds
# dpkg's lock; any other failure is returned at once.
dpkg_i() {
  local waited=0 rc
  while :; do
    dpkg -i "$@" > "$work/dpkg-i.out" 2>&1; rc=$?
    cat "$work/dpkg-i.out"
    [ "$rc" -ne 0 ] && [ "$waited" -lt 300 ] &&
      grep -q 'lock.* locked by another process' "$work/dpkg-i.out" || return $rc
    sleep 5; waited=$((waited + 5))
  done
}

# deb_moved: each file of Debian's packages ($dir/theirs) that ours
# ($dir/ours) ship in another package, as "FILE PACKAGE-OF-THEIRS
# PACKAGE-OF-OURS".  Such a move needs Breaks/Replaces, and a Breaks on
# a package stops a single dpkg -i of all three: nothing is printed
# when ours keep every file where Debian ships it.
deb_files() {  # deb_files DEB: the files (not directories) in DEB
  dpkg-deb -c "$1" | awk '$1 !~ /^d/ { print $6 }' | sed 's|^\./|/|'
}
deb_moved() {
  local deb pkg
  for deb in "$dir"/ours/*.deb; do
    pkg=$(dpkg-deb -f "$deb" Package)
    deb_files "$deb" | sed "s|\$| $pkg|"
  done > "$work/deb-owners-ours"
  for deb in "$dir"/theirs/*.deb; do
    pkg=$(dpkg-deb -f "$deb" Package)
    deb_files "$deb" | while read -r f; do
      awk -v f="$f" -v p="$pkg" '$1 == f && $2 != p { print f, p, $2 }' "$work/deb-owners-ours"
    done
  done
}

remove_all() {
  local p st left=
  apt_get purge $debian_pkgs > "$work/upgrade-purge.log" 2>&1
  for p in $debian_pkgs; do
    st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)
    case ${st:-not-installed} in
      not-installed) ;;
      *) left="$left $p ($st)" ;;
    esac
  done
  [ -z "$left" ] || { echo "still on the machine:$left"; tail -n 20 "$work/upgrade-purge.log"; return 1; }
}

step_deb_upgrade() {
  local dir=$work/upgrade theirs theirs_upstream ours p st bad=0 moved audit
  [ "$(id -u)" -eq 0 ] || { echo "not root: cannot install packages"; return 77; }
  ls "$work"/deb/libcpucycles1_*.deb > /dev/null 2>&1 || { echo "no .debs (deb-build failed)"; return 1; }
  for p in $debian_pkgs; do
    st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)
    case ${st:-not-installed} in
      not-installed) ;;
      *) echo "$p is already on this machine ($st): the test would change it"; return 77 ;;
    esac
  done
  if ! private_apt; then
    echo "cannot read Debian $debian_suite's package lists: not tested"; return 77
  fi
  # shellcheck disable=SC2086
  if ! (cd "$work/apt-private/get" && apt-get $apt_private -q download $debian_pkgs) \
       > "$work/apt-download.log" 2>&1; then
    tail -n 5 "$work/apt-download.log"
    echo "cannot download Debian $debian_suite's $debian_pkgs: not tested"; return 77
  fi
  rm -rf "$dir"; mkdir -p "$dir/theirs" "$dir/ours"
  mv "$work"/apt-private/get/*.deb "$dir/theirs/"
  for p in $debian_pkgs; do
    cp "$work"/deb/"${p}"_*.deb "$dir/ours/"
  done
  theirs=$(dpkg-deb -f "$dir"/theirs/libcpucycles1_*.deb Version)
  # 0~YYYYMMDD-N: the YYYYMMDD their cpucycles_version() returns.
  theirs_upstream=${theirs%-*}
  theirs_upstream=${theirs_upstream#0~}
  ours=$deb_version
  echo "Debian $debian_suite's packages: $theirs; ours: $ours"
  dpkg --compare-versions "$ours" gt "$theirs" || { echo "$ours does not sort above $theirs"; return 1; }
  # From here on the machine has packages installed: remove them whatever
  # happens.
  trap 'remove_all; cleanup' EXIT

  # 1. Debian's packages, and a client built against them as their users
  # build it (they ship no cpucycles.pc).
  logged upgrade-install-theirs apt_get install "$dir"/theirs/*.deb || { remove_all; return 1; }
  expect_versions "$theirs" "$theirs" "$theirs" || bad=1
  logged upgrade-client-theirs gcc -Wall -Wextra -o "$dir/client-theirs" \
    "$src/tests/packaging/client.c" -lcpucycles || bad=1
  run_client client-theirs "$theirs_upstream" || bad=1
  logged upgrade-info-theirs cpucycles-info || bad=1

  # 2. Upgraded to ours: the old client runs with our library; a client
  # built with ours' pkg-config and our cpucycles-info run; and so do the
  # autopkgtests, against the really installed packages.
  logged upgrade-install-ours apt_get install "$dir"/ours/*.deb || { remove_all; return 1; }
  expect_versions "$ours" "$ours" "$ours" || bad=1
  [ -e /usr/share/man/man3/cpucycles.3.gz ] || { echo "cpucycles.3 lost in the upgrade"; bad=1; }
  dpkg -S /usr/share/man/man3/cpucycles.3.gz | grep -q '^libcpucycles1' ||
    { echo "cpucycles.3: $(dpkg -S /usr/share/man/man3/cpucycles.3.gz)"; bad=1; }
  # shellcheck disable=SC2046
  logged upgrade-client-ours gcc -Wall -Wextra -o "$dir/client-ours" \
    "$src/tests/packaging/client.c" $(pkg-config --cflags --libs cpucycles) || bad=1
  run_client client-theirs "$version" || bad=1
  run_client client-ours "$version" || bad=1
  logged upgrade-info-ours cpucycles-info || bad=1
  rm -rf "$dir/tree"; copy_tree "$dir/tree"
  for p in pkg-config-client cpucycles-info upstream-tests; do
    mkdir -p "$dir/adt-$p"
    if (cd "$dir/tree" && AUTOPKGTEST_TMP="$dir/adt-$p" "debian/tests/$p") \
         > "$work/upgrade-autopkgtest-$p.log" 2>&1; then
      echo "autopkgtest $p on the installed packages: ok"
    else
      echo "autopkgtest $p on the installed packages: failed"
      tail -n 30 "$work/upgrade-autopkgtest-$p.log"; bad=1
    fi
  done

  # 3. Back to Debian's downloaded packages: both clients run with
  # Debian's library.
  logged upgrade-downgrade apt_get install --allow-downgrades "$dir"/theirs/*.deb ||
    { remove_all; return 1; }
  expect_versions "$theirs" "$theirs" "$theirs" || bad=1
  dpkg -S /usr/share/man/man3/cpucycles.3.gz | grep -q '^libcpucycles1' ||
    { echo "cpucycles.3 after the downgrade: $(dpkg -S /usr/share/man/man3/cpucycles.3.gz 2>&1)"; bad=1; }
  [ ! -e "/usr/lib/$multiarch/pkgconfig/cpucycles.pc" ] || { echo "cpucycles.pc left behind"; bad=1; }
  run_client client-theirs "$theirs_upstream" || bad=1
  run_client client-ours "$theirs_upstream" || bad=1

  # 4. Our tool alone next to Debian's library: its dependency accepts it.
  logged upgrade-mixed apt_get install "$dir"/ours/cpucycles_*.deb || bad=1
  expect_versions "$theirs" "$theirs" "$ours" || bad=1
  logged upgrade-info-mixed cpucycles-info || bad=1

  # 5. Debian's packages again, upgraded to ours by a single dpkg -i of
  # the three, in the order a user types them.  dpkg unpacks them one by
  # one and never deconfigures a package on its own, so this works only
  # when no package of ours Breaks one of Debian's: every file stays in
  # the package where Debian ships it.  dpkg --audit finds nothing left
  # half-done.
  moved=$(deb_moved)
  [ -z "$moved" ] || { echo "files that ours ship in another package than Debian:"; echo "$moved"; bad=1; }
  logged upgrade-theirs-again apt_get install --allow-downgrades "$dir"/theirs/*.deb ||
    { remove_all; return 1; }
  expect_versions "$theirs" "$theirs" "$theirs" || bad=1
  logged upgrade-dpkg-i dpkg_i "$dir"/ours/cpucycles_*.deb "$dir"/ours/libcpucycles-dev_*.deb \
    "$dir"/ours/libcpucycles1_*.deb || bad=1
  expect_versions "$ours" "$ours" "$ours" || bad=1
  audit=$(dpkg --audit $debian_pkgs 2>&1)
  [ -z "$audit" ] || { echo "dpkg --audit after dpkg -i:"; echo "$audit"; bad=1; }
  # The machine's whole audit too, unless another job is installing
  # packages right now (its half-done ones are not ours to judge).
  audit=$(dpkg --audit 2>&1)
  if [[ $audit == *"Another process has locked the database"* ]]; then
    echo "note: another process holds dpkg's lock; dpkg --audit of $debian_pkgs only"
  elif [ -n "$audit" ]; then
    echo "dpkg --audit after dpkg -i:"; echo "$audit"; bad=1
  fi
  [ -e /usr/share/man/man3/cpucycles.3.gz ] || { echo "cpucycles.3 lost in dpkg -i"; bad=1; }
  run_client client-theirs "$version" || bad=1
  run_client client-ours "$version" || bad=1
  logged upgrade-info-dpkg-i cpucycles-info || bad=1

  remove_all || bad=1
  trap cleanup EXIT
  return $bad
}

step_lintian() {
  ensure lintian lintian || return 1
  local changes
  changes=$(ls "$work"/deb/*.changes 2>/dev/null | head -n 1)
  [ -n "$changes" ] || { echo "no .changes (deb-build failed)"; return 1; }
  lintian --fail-on error,warning --info "$changes" > "$work/lintian.log" 2>&1
  local status=$?
  echo "lintian: $(grep -c '^E:' "$work/lintian.log") errors, $(grep -c '^W:' "$work/lintian.log") warnings"
  grep -E '^(E|W):' "$work/lintian.log"
  return $status
}

# --- RPM ---------------------------------------------------------------------
step_rpmbuild() {
  [ -f "$tarball" ] || { echo "no tarball (distcheck failed)"; return 1; }
  ensure rpmbuild rpm || return 1
  local top=$work/rpmbuild bad=0 p
  # Debian's rpm has no find-debuginfo: no -debuginfo packages here.
  logged rpmbuild rpmbuild --nodeps --define "_topdir $top" --define "debug_package %{nil}" \
    --define "_smp_mflags -j$jobs" -ta "$tarball" || return 1
  for p in libcpucycles libcpucycles-devel libcpucycles-static cpucycles; do
    ls "$top"/RPMS/*/"$p-$version"-*.rpm > /dev/null 2>&1 || { echo "no $p rpm"; bad=1; }
  done
  rpm -qlp "$top"/RPMS/*/libcpucycles-devel-"$version"-*.rpm 2>/dev/null | grep -q '/cpucycles.pc$' ||
    { echo "-devel lacks cpucycles.pc"; bad=1; }
  # (Debian's rpm names the directory libcpucycles-VERSION, Fedora's not.)
  rpm -qlp "$top"/RPMS/*/libcpucycles-"$version"-*.rpm 2>/dev/null |
    grep -Eq '/doc/libcpucycles(-[0-9]+)?/NEWS$' || { echo "libcpucycles lacks NEWS"; bad=1; }
  ls "$top"/RPMS/*/
  return $bad
}

# --- RPM: upgrading Fedora's packages -----------------------------------------
# Fedora's libcpucycles, as published (src.fedoraproject.org/rpms/libcpucycles,
# libcpucycles.spec, see doc/packaging.md): its versions, and its %files
# with the macros as rpm expands them here.  PACKAGE PATH per line; a
# manual page matches with or without a compression suffix.
fedora_versions="20260105 20260625"
# Fedora's files that ours does not ship (none): any file of Fedora's that
# ours lacks fails the step.
fedora_pending=""
fedora_files() {
  local libdir bindir mandir includedir
  libdir=$(rpm --eval '%{_libdir}') bindir=$(rpm --eval '%{_bindir}')
  mandir=$(rpm --eval '%{_mandir}') includedir=$(rpm --eval '%{_includedir}')
  cat <<EOF
libcpucycles $libdir/libcpucycles.so.1
libcpucycles $bindir/cpucycles-info
libcpucycles $bindir/cpucycles-open
libcpucycles $mandir/man1/cpucycles-info.1
libcpucycles $mandir/man1/cpucycles-open.1
libcpucycles-devel $includedir/cpucycles.h
libcpucycles-devel $libdir/libcpucycles.so
libcpucycles-devel $mandir/man3/cpucycles.3
libcpucycles-static $libdir/libcpucycles.a
EOF
}

vercmp() { rpm --eval "%{lua: print(rpm.vercmp('$1', '$2'))}"; }

step_rpm_upgrade() {
  local top=$work/rpmbuild bad=0 rpmf pkg path owner v f obs ours
  ls "$top"/RPMS/*/libcpucycles-"$version"-*.rpm > /dev/null 2>&1 || { echo "no RPMs (rpmbuild failed)"; return 1; }
  ours=$(rpm -qp --qf '%{VERSION}-%{RELEASE}' "$top"/RPMS/*/libcpucycles-"$version"-*.rpm)
  # Ours sorts above each of Fedora's versions, whatever their release.
  for v in $fedora_versions; do
    [ "$(vercmp "$ours" "$v-99.fc99")" = 1 ] || { echo "$ours does not sort above Fedora's $v"; bad=1; }
  done
  # Which of our packages owns each file of Fedora's.
  : > "$work/rpm-owners"
  for rpmf in "$top"/RPMS/*/*.rpm; do
    pkg=$(rpm -qp --qf '%{NAME}' "$rpmf")
    rpm -qlp "$rpmf" | sed "s|^|$pkg |" >> "$work/rpm-owners"
  done
  while read -r pkg path; do
    owner=$(awk -v p="$path" '$2 == p || (p ~ /\/man\/man/ && index($2, p ".") == 1) { print $1; exit }' "$work/rpm-owners")
    if [ -z "$owner" ]; then
      case " $fedora_pending " in
        *" $path "*) echo "note: Fedora's $pkg has $path, which ours does not ship yet" ;;
        *) echo "Fedora's $pkg has $path, which ours does not ship: an upgrade loses it"; bad=1 ;;
      esac
    elif [ "$owner" = "$pkg" ]; then
      echo "$path: $pkg in both"
    else
      # Moved: our package must obsolete every Fedora version of theirs.
      rpmf=$(ls "$top"/RPMS/*/"$owner-$version"-*.rpm | head -n 1)
      obs=$(rpm -qp --obsoletes "$rpmf" | awk -v p="$pkg" '$1 == p && $2 == "<" { print $3 }')
      if [ -z "$obs" ]; then
        echo "$path moves from $pkg to $owner, which does not obsolete $pkg"; bad=1; continue
      fi
      for v in $fedora_versions; do
        [ "$(vercmp "$v-99.fc99" "$obs")" = -1 ] ||
          { echo "$owner obsoletes $pkg < $obs, not Fedora's $v"; bad=1; }
      done
      # ...and never our own package of this or a later version.
      [ "$(vercmp "$ours" "$obs")" -ge 0 ] || { echo "$owner obsoletes our own $pkg $ours"; bad=1; }
      echo "$path: moves from $pkg to $owner (Obsoletes: $pkg < $obs)"
    fi
  done < <(fedora_files)
  return $bad
}

run() {  # run STEP FUNCTION
  wanted "$1" || return 0
  local t0=$SECONDS status
  touch "$work/.step-start"
  echo "== $1"
  "$2"; status=$?
  case $status in
    0) pass "$1 ($((SECONDS - t0))s)" ;;
    77) skip "$1" "$((SECONDS - t0))s" ;;
    *) fail "$1" "$((SECONDS - t0))s" ;;
  esac
}

[ -n "${TARBALL:-}" ] || run distcheck step_distcheck
run tarball step_tarball
run install-layout step_install_layout
run pkgconfig-shared step_pkgconfig_shared
run pkgconfig-static step_pkgconfig_static
run examples step_examples
run cmake step_cmake
run meson step_meson
run deb-build step_deb_build
run deb-checkout step_deb_checkout
run deb-contents step_deb_contents
run deb-hardening step_deb_hardening
run deb-autopkgtest step_deb_autopkgtest
run deb-upgrade step_deb_upgrade
run lintian step_lintian
run rpmbuild step_rpmbuild
run rpm-upgrade step_rpm_upgrade

echo "total time: ${SECONDS}s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
