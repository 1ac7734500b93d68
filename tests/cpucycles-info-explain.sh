#!/bin/sh
# cpucycles-info --explain and --json, run as a user runs them: every
# --explain line parsed with the patterns a script would use, the JSON
# parsed back by python3 (a strict parser), a source's text with quotes,
# backslashes and control characters carried through intact, and the
# warnings read from a fixture tree (CPUCYCLES_INFO_ROOT).
info="${top_builddir:-.}/src/cpucycles-info"
if [ ! -x "$info" ]; then
  echo "SKIP: $info not built"
  exit 77
fi
unset CPUCYCLES_COUNTER cpucyclespersecond
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
failed=0
fail() {
  echo "FAIL: $*"
  failed=1
}

# A fixture tree: a setting file whose text a JSON writer must escape
# (2400 Hz and a comment: implausible), a cpuinfo that answers, and what
# a benchmark should be warned about.
root="$work/root"
mkdir -p "$root/etc" "$root/proc" "$root/sys/devices/system/cpu/cpu0/cpufreq" \
  "$root/sys/devices/system/cpu/intel_pstate"
printf '2400 "MHz" \\ \t\001 end\n' > "$root/etc/cpucyclespersecond"
printf 'processor\t: 0\ncpu MHz\t\t: 2100.000\nflags\t\t: fpu tsc constant_tsc hypervisor\n\n' \
  > "$root/proc/cpuinfo"
echo powersave > "$root/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
echo 0 > "$root/sys/devices/system/cpu/intel_pstate/no_turbo"

# --- --explain -------------------------------------------------------------
CPUCYCLES_INFO_ROOT="$root" "$info" --explain > "$work/explain" 2> "$work/explain.err"
rc=$?
[ "$rc" -eq 0 ] || fail "--explain exited $rc"
[ -s "$work/explain.err" ] && fail "--explain wrote to stderr: $(cat "$work/explain.err")"

# Each line is one of: counter (c), persecond (p), persecond source (s),
# warning (w); in that order.
kinds=$(awk '
  /^counter [a-z0-9-]+: (chosen|dropped): [^ ].*$/ { print "c"; next }
  /^persecond [0-9]+: from [^ ]+$/ { print "p"; next }
  /^persecond source [^ ]+: rejected: [^ ].*$/ { print "s"; next }
  /^warning [a-z_]+: [^ ].*$/ { print "w"; next }
  { print "x" }' "$work/explain" | tr -d '\n')
echo "$kinds" | grep -E -q '^c+ps*w*$' ||
  fail "--explain line kinds c+ p s* w* expected, got $kinds:
$(cat "$work/explain")"
[ "$(grep -c '^counter [a-z0-9-]*: chosen: ' "$work/explain")" -eq 1 ] ||
  fail "--explain: not exactly one counter chosen"
tail_counter=$(grep '^counter ' "$work/explain" | tail -n 1 | cut -d: -f1)
[ "$tail_counter" = "counter default-zero" ] ||
  fail "--explain: default-zero is not the last counter line"

# The counters are the library's, in its probe order: the same names as
# the report's tracesetup lines.
"$info" > "$work/report" 2>/dev/null
sed -n 's/^cpucycles tracesetup [0-9]* \([^ ]*\) .*/\1/p' "$work/report" > "$work/names.report"
sed -n 's/^counter \([^:]*\): .*/\1/p' "$work/explain" > "$work/names.explain"
cmp -s "$work/names.report" "$work/names.explain" ||
  fail "--explain counters differ from the tracesetup lines:
$(diff "$work/names.report" "$work/names.explain")"

grep -q '^persecond 2100000000: from /proc/cpuinfo$' "$work/explain" ||
  fail "--explain: persecond not from the fixture's cpuinfo"
grep -qxF 'persecond source /etc/cpucyclespersecond: rejected: "2400 \"MHz\" \\ \t\x01 end": implausible (1 MHz to 100 GHz), read in Hz' \
  "$work/explain" || fail "--explain: the rejected setting file is not shown"
grep -q '^warning governor: frequency scaling: cpufreq governor powersave on cpu0: ' \
  "$work/explain" || fail "--explain: no governor warning"
grep -q '^warning turbo: turbo enabled ' "$work/explain" || fail "--explain: no turbo warning"
grep -q '^warning tsc_not_invariant: .*(nonstop_tsc missing' "$work/explain" ||
  fail "--explain: no invariant-TSC warning"
grep -q '^warning hypervisor: ' "$work/explain" || fail "--explain: no hypervisor warning"

# --- --json ----------------------------------------------------------------
CPUCYCLES_INFO_ROOT="$root" "$info" --json > "$work/json" 2> "$work/json.err"
rc=$?
[ "$rc" -eq 0 ] || fail "--json exited $rc"
[ -s "$work/json.err" ] && fail "--json wrote to stderr: $(cat "$work/json.err")"

if command -v python3 > /dev/null 2>&1; then
  python3 - "$work/json" "$root/etc/cpucyclespersecond" "$work/names.explain" <<'EOF' ||
import json, sys

def fail(why):
    print("FAIL: --json: " + why)
    sys.exit(1)

with open(sys.argv[1], "rb") as f:
    raw = f.read()
try:
    raw.decode("ascii")
except UnicodeDecodeError:
    fail("not plain ASCII")
d = json.loads(raw, parse_constant=lambda c: fail("constant " + c))
if not isinstance(d, dict):
    fail("not one object")
keys = {"version", "implementation", "named", "named_outcome", "persecond",
        "persecond_source", "persecond_sources", "counters", "kernel", "warnings"}
if set(d) != keys:
    fail("top-level keys %s" % sorted(d))
# Two spaces a level: top-level keys at 2, the kernel's at 4, the keys of
# the arrays' objects at 6.
lines = raw.decode("ascii").splitlines()
def indents(key):
    return {len(l) - len(l.lstrip(" ")) for l in lines
            if l.lstrip(" ").startswith('"%s": ' % key)}
for k in keys:
    if indents(k) != {2}:
        fail("top-level key %s indented %r" % (k, indents(k)))
if indents("rdpmc") != {4} or indents("verdict") != {6} or indents("outcome") != {6}:
    fail("nested keys indented %r %r %r" % (indents("rdpmc"), indents("verdict"),
                                           indents("outcome")))
if d["named_outcome"] is not None:
    fail("named_outcome %r without CPUCYCLES_COUNTER" % d["named_outcome"])
if d["persecond"] != 2100000000 or d["persecond_source"] != "/proc/cpuinfo":
    fail("persecond %r from %r" % (d["persecond"], d["persecond_source"]))
if d["named"] is not None:
    fail("named %r without CPUCYCLES_COUNTER" % d["named"])

source_keys = {"source", "verdict", "text", "text_cut", "unit", "errno", "value"}
verdicts = {"absent", "unreadable", "no_value", "not_a_number", "implausible",
            "accepted"}
for s in d["persecond_sources"]:
    if set(s) != source_keys:
        fail("source keys %s" % sorted(s))
    if s["verdict"] not in verdicts:
        fail("verdict %r" % s["verdict"])
first = d["persecond_sources"][0]
with open(sys.argv[2], "rb") as f:
    text = f.read().decode("latin-1")
if first["source"] != "/etc/cpucyclespersecond" or first["verdict"] != "implausible":
    fail("first source %r" % first)
if first["text"] != text:
    fail("text %r, the file holds %r" % (first["text"], text))
if d["persecond_sources"][-1]["verdict"] != "accepted":
    fail("the last source tried is not the one accepted")

counter_keys = {"index", "name", "chosen", "outcome", "fact", "action",
                "precision", "bump", "kind", "frequency", "rate_unknown",
                "stated_rate", "rate_seen", "rate_check", "ratio",
                "scaling", "only32", "signal", "stage", "refusal", "errno", "not_tried", "attempts", "backwards"}
outcomes = {"works", "refused", "crashed", "misfit", "backwards", "stuck",
            "fallback", "not_built"}
with open(sys.argv[3]) as f:
    names = f.read().split()
if [c["name"] for c in d["counters"]] != names:
    fail("counters %r, --explain says %r" % ([c["name"] for c in d["counters"]], names))
for i, c in enumerate(d["counters"]):
    if set(c) != counter_keys:
        fail("counter keys %s" % sorted(c))
    if c["index"] != i or c["outcome"] not in outcomes:
        fail("counter %r" % c)
    if (c["outcome"] == "works") != (c["precision"] is not None):
        fail("precision %r of a counter that %s" % (c["precision"], c["outcome"]))
    if (c["outcome"] == "works") != (c["bump"] is not None):
        fail("bump %r of a counter that %s" % (c["bump"], c["outcome"]))
    if c["outcome"] == "crashed" and (c["signal"] is None or c["stage"] is None):
        fail("crash without signal or stage: %r" % c)
    if c["outcome"] == "refused" and c["refusal"] is None and c["fact"] != "setup refused":
        fail("refusal without words: %r" % c)
chosen = [c["name"] for c in d["counters"] if c["chosen"]]
if chosen != [d["implementation"]]:
    fail("chosen %r, implementation %r" % (chosen, d["implementation"]))
if d["counters"][-1]["name"] != "default-zero" or d["counters"][-1]["outcome"] != "fallback":
    fail("default-zero is not last")

if set(d["kernel"]) != {"perf_event_paranoid", "rdpmc", "perf_user_access"}:
    fail("kernel keys %s" % sorted(d["kernel"]))
if {w["key"] for w in d["warnings"]} != {"governor", "turbo", "tsc_not_invariant",
                                         "hypervisor"}:
    fail("warnings %r" % d["warnings"])
for w in d["warnings"]:
    if set(w) != {"key", "text"}:
        fail("warning keys %s" % sorted(w))
EOF
  failed=1
else
  echo "note: python3 unavailable; the JSON is checked by shape only"
  head -c 1 "$work/json" | grep -q '{' || fail "--json does not start an object"
fi

# With CPUCYCLES_COUNTER, both say so, and what became of it.
CPUCYCLES_COUNTER=default-zero CPUCYCLES_INFO_ROOT="$root" "$info" --explain > "$work/named"
grep -q '^counter default-zero: chosen: named by CPUCYCLES_COUNTER$' "$work/named" ||
  fail "--explain with CPUCYCLES_COUNTER=default-zero: $(cat "$work/named")"
head -n 1 "$work/named" | grep -qx 'override default-zero: used: CPUCYCLES_COUNTER names it' ||
  fail "--explain with CPUCYCLES_COUNTER=default-zero: no override line first"
CPUCYCLES_COUNTER=nonsense CPUCYCLES_INFO_ROOT="$root" "$info" --explain > "$work/unknown"
head -n 1 "$work/unknown" |
  grep -q '^override nonsense: ignored: no counter of that name is built into this library (.*default-zero); the probe chose [a-z0-9-]* as without CPUCYCLES_COUNTER$' ||
  fail "--explain with CPUCYCLES_COUNTER=nonsense: $(cat "$work/unknown")"
grep -q 'named by' "$work/unknown" && fail "--explain: an unknown name named a counter"
# the names offered are those built in: not those of the original's list
# that this build lacks (default-mach on Linux)
for nb in $(sed -n 's/^counter \([^:]*\): dropped: not built into this library.*/\1/p' "$work/unknown"); do
  head -n 1 "$work/unknown" | grep -qE "[(, ]$nb[,)]" &&
    fail "--explain with CPUCYCLES_COUNTER=nonsense offers $nb, which is not built: $(head -n 1 "$work/unknown")"
done
CPUCYCLES_COUNTER=nonsense CPUCYCLES_INFO_ROOT="$root" "$info" --json > "$work/unknown.json"
grep -q '^  "named_outcome": "unknown",$' "$work/unknown.json" ||
  fail "--json with CPUCYCLES_COUNTER=nonsense: no named_outcome unknown"

# --- one probe ----------------------------------------------------------------
# --explain opens what the plain tool opens (the library's probe), and
# beyond it only kernel.perf_event_paranoid (the tool's explanation of a
# perf_event_open refusal) and the warnings' files: never again the rdpmc
# switches, kernel.perf_user_access or the PMU directories.
extra_ok='^(/proc/sys/kernel/perf_event_paranoid|/proc/cpuinfo|/sys/devices/system/cpu/cpu[0-9]+/cpufreq/scaling_governor|/sys/devices/system/cpu/intel_pstate/no_turbo|/sys/devices/system/cpu/cpufreq/boost|/sys/bus/event_source/devices/[A-Za-z0-9_]+/cpus)$'
opened() {
  sed -n 's/.*openat([^,]*, "\([^"]*\)".*/\1/p' "$1" | sort -u
}
if command -v strace > /dev/null 2>&1 &&
   strace -f -qq -e trace=openat -o "$work/strace.plain" "$info" > /dev/null 2>&1 &&
   [ -s "$work/strace.plain" ]; then
  strace -f -qq -e trace=openat -o "$work/strace.explain" "$info" --explain > /dev/null 2>&1 ||
    fail "--explain under strace"
  opened "$work/strace.plain" > "$work/opened.plain"
  opened "$work/strace.explain" | comm -23 - "$work/opened.plain" |
    grep -vE "$extra_ok" > "$work/opened.extra"
  [ -s "$work/opened.extra" ] &&
    fail "--explain opened what the probe did not: $(tr '\n' ' ' < "$work/opened.extra")"
else
  echo "strace not usable here: the comparison of opened files is skipped"
fi

[ "$failed" -eq 0 ] && echo "PASS: cpucycles-info --explain, --json"
exit "$failed"
