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
# Outputs:
#   COUNTER_OBJECTS (AC_SUBST)          lib/counters/NAME.lo for each counter
#   CPUCYCLES_COUNTER_TABLE (config.h)  COUNTER(NAME_) for each counter, in
#                                       the probe's order (lib/counters/order)
#   cpucycles_counter_names (shell)     the list, for the summary
AC_DEFUN([CPUCYCLES_COUNTERS], [
  cpucycles_excluded=`echo "$1" | tr ',' ' '`
  cpucycles_counter_names=
  COUNTER_OBJECTS=
  cpucycles_table=
  cpucycles_save_CPPFLAGS=$CPPFLAGS
  CPPFLAGS="$CPPFLAGS -I$srcdir/lib -I$srcdir/include"
  cpucycles_order=`sed -e 's/#.*//' -e 's/[[ 	]]*$//' -e '/^$/d' "$srcdir/lib/counters/order"`
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
    AC_MSG_CHECKING([whether counter $cpucycles_name compiles for $host])
    if test "x$cpucycles_skip" = xyes; then
      AC_MSG_RESULT([excluded])
      continue
    fi
    AC_COMPILE_IFELSE([AC_LANG_SOURCE([[#include "$srcdir/lib/counters/$cpucycles_name.c"]])],
      [AC_MSG_RESULT([yes])
       cpucycles_counter_names="$cpucycles_counter_names $cpucycles_name"
       COUNTER_OBJECTS="$COUNTER_OBJECTS lib/counters/$cpucycles_name.lo"
       cpucycles_table="$cpucycles_table COUNTER(`echo $cpucycles_name | tr - _`)"],
      [AC_MSG_RESULT([no])])
  done
  CPPFLAGS=$cpucycles_save_CPPFLAGS
  for cpucycles_x in $cpucycles_excluded; do
    test -f "$srcdir/lib/counters/$cpucycles_x.c" && test "x$cpucycles_x" != xdefault-zero ||
      AC_MSG_ERROR([--with-disabled-counters: no counter named '$cpucycles_x' (default-zero cannot be left out)])
  done
  AC_SUBST([COUNTER_OBJECTS])
  AC_DEFINE_UNQUOTED([CPUCYCLES_COUNTER_TABLE], [$cpucycles_table],
    [The counters that compile for the host, as COUNTER(name) entries.])
])
