#!/bin/sh
# cpucycles-open as a command: its options, exit codes and streams, a run
# against a fixture tree (--root), and that it cannot start a program.
# Every run here names a fixture tree with --root, so that even a broken
# option parser run by root changes nothing outside it.  (The logic itself
# is tested by tests/test-open against many fixture trees.)
open="${top_builddir:-.}/src/cpucycles-open"
if [ ! -x "$open" ]; then
  echo "SKIP: $open not built"
  exit 77
fi
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
failed=0
fail() {
  echo "FAIL: $*"
  failed=1
}
tree="$work/tree"
make_tree() {
  rm -rf "$tree"
  mkdir -p "$tree/proc/sys/kernel" "$tree/sys/bus/event_source/devices/cpu"
  echo 3 > "$tree/proc/sys/kernel/perf_event_paranoid"
  echo 1 > "$tree/proc/sys/kernel/nmi_watchdog"
  echo 0 > "$tree/sys/bus/event_source/devices/cpu/rdpmc"
}
values() {
  cat "$tree/proc/sys/kernel/perf_event_paranoid" "$tree/proc/sys/kernel/nmi_watchdog" \
    "$tree/sys/bus/event_source/devices/cpu/rdpmc" | tr '\n' ' '
}

# --- options ------------------------------------------------------------
make_tree
"$open" --root "$tree" --help > "$work/out" 2> "$work/err"
rc=$?
[ "$rc" -eq 0 ] || fail "--help exited $rc"
grep -q '^usage: cpucycles-open' "$work/out" || fail "--help printed no usage"
[ -s "$work/err" ] && fail "--help wrote to stderr"
[ "$(values)" = "3 1 0 " ] || fail "--help changed the tree: $(values)"

"$open" --root "$tree" --version > "$work/out" 2> "$work/err"
rc=$?
[ "$rc" -eq 0 ] || fail "--version exited $rc"
grep -E -q '^cpucycles-open \(libcpucycles\) [0-9]{8}$' "$work/out" ||
  fail "--version printed '$(cat "$work/out")'"
[ "$(values)" = "3 1 0 " ] || fail "--version changed the tree: $(values)"

for args in --bogus -n extra --root= --dry-run=1; do
  "$open" --root "$tree" $args > "$work/out" 2> "$work/err"
  rc=$?
  [ "$rc" -eq 2 ] || fail "'$args' exited $rc, expected 2"
  [ -s "$work/out" ] && fail "'$args' wrote to stdout: $(cat "$work/out")"
  grep -q '^usage: cpucycles-open' "$work/err" || fail "'$args': no usage on stderr"
  [ "$(values)" = "3 1 0 " ] || fail "'$args' changed the tree: $(values)"
done
# --root without its directory (a dry run, should it be taken as one)
"$open" --dry-run --root > "$work/out" 2> "$work/err"
rc=$?
[ "$rc" -eq 2 ] || fail "'--root' without a directory exited $rc, expected 2"

# --- a dry run, then a real one, on the tree ------------------------------
"$open" --root "$tree" --dry-run > "$work/out" 2> "$work/err"
rc=$?
[ "$rc" -eq 0 ] || fail "--dry-run exited $rc: $(cat "$work/err")"
grep -q '^would change kernel.perf_event_paranoid from 3 to 2 ' "$work/out" ||
  fail "--dry-run: $(cat "$work/out")"
[ "$(values)" = "3 1 0 " ] || fail "--dry-run changed the tree: $(values)"

"$open" --root "$tree" > "$work/out" 2> "$work/err"
rc=$?
if [ "$(id -u)" = 0 ]; then
  [ "$rc" -eq 0 ] || fail "a run as root exited $rc: $(cat "$work/err")"
  [ "$(values)" = "2 0 2 " ] || fail "a run as root left $(values)"
  grep -q "^changed kernel.perf_event_paranoid from 3 to 2; undo: echo 3 > $tree/proc/sys/kernel/perf_event_paranoid\$" \
    "$work/out" || fail "a run as root printed: $(cat "$work/out")"
else
  [ "$rc" -eq 1 ] || fail "a run as user $(id -u) exited $rc, expected 1"
  grep -q 'must be run as root' "$work/err" || fail "no refusal: $(cat "$work/err")"
  [ "$(values)" = "3 1 0 " ] || fail "a refused run changed the tree: $(values)"
fi

# --- it cannot start a program ------------------------------------------
if command -v nm > /dev/null 2>&1 && nm -u "$open" > "$work/symbols" 2> /dev/null; then
  if grep -E -w '(exec[lv]p?e?|execvpe|fexecve|system|popen|fork|vfork|clone|posix_spawnp?)(@.*)?$' \
       "$work/symbols"; then
    fail "cpucycles-open links a function that starts programs"
  fi
else
  echo "note: nm unavailable; the imports were not checked"
fi

[ "$failed" -eq 0 ] && echo "PASS: cpucycles-open"
exit "$failed"
