#!/bin/sh
# The examples under examples/, as make check built them: the README's
# program prints a count and the counter's name, and is the README's text
# word for word; median prints the median and the quartiles, in order, for
# the function and for an empty interval, and refuses a bad run count.
top=${top_builddir:-.}
src=${srcdir:-tests}/..
failed=0
fail() { echo "FAIL: $*"; failed=1; }

out=$("$top/examples/example") || fail "examples/example exited $?"
echo "$out" | grep -Eqx -- '-?[0-9]+ cycles with [a-z0-9-]+' ||
  fail "examples/example printed: $out"

# The README shows examples/example.c: the C block that has main().
awk '/^```c$/ { block = ""; inside = 1; next }
     /^```$/ && inside { inside = 0; if (block ~ /int main/) { printf "%s", block; exit } next }
     inside { block = block $0 "\n" }' "$src/README.md" > readme-example.c.tmp
if ! cmp -s readme-example.c.tmp "$src/examples/example.c"; then
  fail "README.md's program differs from examples/example.c:
$(diff readme-example.c.tmp "$src/examples/example.c")"
fi
rm -f readme-example.c.tmp

out=$("$top/examples/median" 101) || fail "examples/median exited $?"
echo "$out" | head -n 1 | grep -Eqx 'counter [a-z0-9-]+, 101 runs each' ||
  fail "examples/median's first line: $out"
for what in "function" "empty interval"; do
  line=$(echo "$out" | grep "^$what: ")
  echo "$line" | grep -Eqx "$what: median -?[0-9]+ cycles, quartiles -?[0-9]+ and -?[0-9]+" ||
    { fail "examples/median: no $what line in: $out"; continue; }
  set -- $(echo "$line" | sed -E 's/.*median (-?[0-9]+) cycles, quartiles (-?[0-9]+) and (-?[0-9]+)/\2 \1 \3/')
  [ "$1" -le "$2" ] && [ "$2" -le "$3" ] || fail "examples/median: quartiles out of order: $line"
done
"$top/examples/median" 3 > /dev/null 2>&1
[ $? -eq 2 ] || fail "examples/median 3 did not refuse the run count"

[ "$failed" -eq 0 ] && echo "PASS: examples"
exit "$failed"
