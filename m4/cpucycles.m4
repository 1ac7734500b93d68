# cpucycles.m4 -- which counters compile for the host.
#
# CPUCYCLES_COUNTERS([EXCLUDED])
#
# Tries to compile every $srcdir/lib/counters/NAME.c by itself for the host,
# with the flags of the build, in the order of $srcdir/lib/counters/order
# (the probe's preference order, one reviewable list).  A counter file refuses (#error) on an ISA or
# OS where it cannot work, and an instruction the assembler does not know
# fails the same way, so "compiles" is the whole test: no per-triplet table.
# default-zero is always built and is the library's fallback, not a probed
# counter.  Names in EXCLUDED (commas or spaces) are left out.
#
# The table also names, without building them, the counters of
# libcpucycles' list for the ISA that did not compile or were left out:
# the counters named ISA-* for the ISA the compiler targets
# (CPUCYCLES_CHECK_ISA) and the default-* counters, except those marked "own"
# in the order file (this library's, not libcpucycles').  The probe
# reports each as a dropped line at its index, as libcpucycles' trace
# does, so the trace's lines and indexes are libcpucycles' on every ISA.
#
# Outputs:
#   COUNTER_OBJECTS (AC_SUBST)          lib/counters/NAME.lo for each counter
#   CPUCYCLES_COUNTER_TABLE (config.h)  COUNTER(NAME_) for each counter
#                                       built, NOT_BUILT(NAME_, "NAME") for
#                                       each listed one not built, in the
#                                       probe's order (lib/counters/order)
#   cpucycles_counter_names (shell)     the counters built, for the summary
#   cpucycles_not_built_names (shell)   the listed ones not built

# CPUCYCLES_CHECK_ISA
#
# The ISA the compiler targets, as the prefix of counter names (amd64, x86,
# arm64, arm32, ...), or "none" for an ISA libcpucycles has no counters
# for.  The conditions are those of the counter files' own #error guards.
# AC_SUBST and AC_DEFINE (a string) as CPUCYCLES_ISA.
m4_define([_CPUCYCLES_ISA_IF], [
  AS_IF([test "x$cpucycles_cv_isa" = xnone], [
    AC_COMPILE_IFELSE([AC_LANG_SOURCE([[#if !($2)
#error not $1
#endif
int cpucycles_isa_probe;]])], [cpucycles_cv_isa=$1])])
])
AC_DEFUN([CPUCYCLES_CHECK_ISA], [
  AC_CACHE_CHECK([which ISA's counters libcpucycles lists for $host],
    [cpucycles_cv_isa], [
    cpucycles_cv_isa=none
    _CPUCYCLES_ISA_IF([amd64], [defined(__x86_64__)])
    _CPUCYCLES_ISA_IF([x86], [defined(__i386__)])
    _CPUCYCLES_ISA_IF([arm64], [defined(__aarch64__)])
    _CPUCYCLES_ISA_IF([arm32], [defined(__arm__) && !defined(__aarch64__)])
    _CPUCYCLES_ISA_IF([loong64], [defined(__loongarch__) && defined(__loongarch64)])
    _CPUCYCLES_ISA_IF([mips64], [defined(__mips__) && defined(__mips64)])
    _CPUCYCLES_ISA_IF([ppc64], [defined(__powerpc64__)])
    _CPUCYCLES_ISA_IF([ppc32], [defined(__powerpc__) && !defined(__powerpc64__)])
    _CPUCYCLES_ISA_IF([riscv64], [defined(__riscv) && __riscv_xlen == 64])
    _CPUCYCLES_ISA_IF([riscv32], [defined(__riscv) && __riscv_xlen == 32])
    _CPUCYCLES_ISA_IF([s390x], [defined(__s390x__)])
    _CPUCYCLES_ISA_IF([sparc64], [defined(__sparc__) && defined(__arch64__)])
  ])
  CPUCYCLES_ISA=$cpucycles_cv_isa
  AC_SUBST([CPUCYCLES_ISA])
  AC_DEFINE_UNQUOTED([CPUCYCLES_ISA], ["$cpucycles_cv_isa"],
    [The ISA prefix of the counters libcpucycles lists for this host.])
])

AC_DEFUN([CPUCYCLES_COUNTERS], [
  AC_REQUIRE([CPUCYCLES_CHECK_ISA])
  cpucycles_excluded=`echo "$1" | tr ',' ' '`
  cpucycles_counter_names=
  cpucycles_not_built_names=
  COUNTER_OBJECTS=
  cpucycles_table=
  cpucycles_save_CPPFLAGS=$CPPFLAGS
  CPPFLAGS="$CPPFLAGS -I$srcdir/lib -I$srcdir/include"
  cpucycles_isa=$cpucycles_cv_isa
  dnl A line is a name, or a name and "own" (not in libcpucycles' list).
  cpucycles_lines=`sed -e 's/#.*//' -e 's/[[ 	]]*$//' -e '/^$/d' "$srcdir/lib/counters/order"`
  cpucycles_bad=`echo "$cpucycles_lines" | grep -v -E '^[[a-z0-9-]]+([[ 	]]+own)?$'`
  test -z "$cpucycles_bad" ||
    AC_MSG_ERROR([lib/counters/order: a line is a counter name, or a name and "own": $cpucycles_bad])
  cpucycles_order=`echo "$cpucycles_lines" | sed -e 's/[[ 	]].*//'`
  cpucycles_own=`echo "$cpucycles_lines" | sed -n -e 's/[[ 	]][[ 	]]*own$//p'`
  dnl Every counter file is in the order exactly once, and nothing else is.
  for cpucycles_name in `cd "$srcdir/lib/counters" && ls *.c | sed 's/\.c$//'`; do
    test "x$cpucycles_name" = xdefault-zero && continue
    test "`echo "$cpucycles_order" | grep -c -x -F "$cpucycles_name"`" = 1 ||
      AC_MSG_ERROR([lib/counters/order must list counter $cpucycles_name exactly once])
  done
  for cpucycles_name in $cpucycles_order; do
    test -f "$srcdir/lib/counters/$cpucycles_name.c" && test "x$cpucycles_name" != xdefault-zero ||
      AC_MSG_ERROR([lib/counters/order names $cpucycles_name, which is not a counter file])
  done
  for cpucycles_name in $cpucycles_order; do
    cpucycles_skip=no
    for cpucycles_x in $cpucycles_excluded; do
      test "x$cpucycles_x" = "x$cpucycles_name" && cpucycles_skip=yes
    done
    cpucycles_id=`echo $cpucycles_name | tr - _`
    AC_MSG_CHECKING([whether counter $cpucycles_name compiles for $host])
    if test "x$cpucycles_skip" = xyes; then
      AC_MSG_RESULT([excluded])
      cpucycles_built=no
    else
      AC_COMPILE_IFELSE([AC_LANG_SOURCE([[#include "$srcdir/lib/counters/$cpucycles_name.c"]])],
        [AC_MSG_RESULT([yes]); cpucycles_built=yes],
        [AC_MSG_RESULT([no]); cpucycles_built=no])
    fi
    if test "x$cpucycles_built" = xyes; then
      cpucycles_counter_names="$cpucycles_counter_names $cpucycles_name"
      COUNTER_OBJECTS="$COUNTER_OBJECTS lib/counters/$cpucycles_name.lo"
      cpucycles_table="$cpucycles_table COUNTER($cpucycles_id)"
      continue
    fi
    dnl Not built: still a line of the trace if libcpucycles lists it here.
    cpucycles_listed=no
    case $cpucycles_name in
      "$cpucycles_isa"-*) cpucycles_listed=yes ;;
      default-*) cpucycles_listed=yes
        test "`echo "$cpucycles_own" | grep -c -x -F "$cpucycles_name"`" = 0 ||
          cpucycles_listed=no ;;
    esac
    if test "x$cpucycles_listed" = xyes; then
      cpucycles_not_built_names="$cpucycles_not_built_names $cpucycles_name"
      cpucycles_table="$cpucycles_table NOT_BUILT($cpucycles_id, \"$cpucycles_name\")"
    fi
  done
  CPPFLAGS=$cpucycles_save_CPPFLAGS
  for cpucycles_x in $cpucycles_excluded; do
    test -f "$srcdir/lib/counters/$cpucycles_x.c" && test "x$cpucycles_x" != xdefault-zero ||
      AC_MSG_ERROR([--with-disabled-counters: no counter named '$cpucycles_x' (default-zero cannot be left out)])
  done
  AC_SUBST([COUNTER_OBJECTS])
  AC_DEFINE_UNQUOTED([CPUCYCLES_COUNTER_TABLE], [$cpucycles_table],
    [The counters that compile for the host, as COUNTER(name) entries, and
     those of libcpucycles' list for the ISA that do not, as
     NOT_BUILT(name, "name-with-dashes").])
])
