#!/bin/sh
# The manual pages as configure wrote them: groff reads them without a
# warning; no bold word is followed by its own punctuation as a separate
# argument (".B word ," renders "word ,": .BR joins them); and each page's
# SEE ALSO names the project's other pages.
top=${top_builddir:-.}
failed=0
fail() { echo "FAIL: $*"; failed=1; }
pages="cpucycles.3 cpucycles-info.1 cpucycles-open.1"
for p in $pages; do
  [ -f "$top/doc/$p" ] || { echo "SKIP: $top/doc/$p not written by configure"; exit 77; }
done
for p in $pages; do
  f=$top/doc/$p
  if command -v groff > /dev/null 2>&1; then
    out=$(groff -man -ww -z -Tutf8 "$f" 2>&1)
    [ -z "$out" ] || fail "groff warns about $p: $out"
  fi
  bad=$(grep -n -E '^\.(B|I) [^ ]+ [,.;:)]+$' "$f")
  [ -z "$bad" ] || fail "$p: punctuation as its own argument of .B or .I: $bad"
  seealso=$(sed -n '/^\.SH SEE ALSO/,/^\.SH /p' "$f")
  for other in $pages; do
    [ "$other" = "$p" ] && continue
    name=${other%.*} section=${other##*.}
    echo "$seealso" | grep -q "^\.BR $name ($section)" ||
      fail "$p: SEE ALSO lacks $name($section)"
  done
done
[ "$failed" -eq 0 ] && echo "PASS: manual pages"
exit "$failed"
