# copy_tree DEST: a pristine copy of the source tree $src into DEST: the
# files git knows (tracked, and new ones not ignored), so that a tree
# configured in place or full of build output does not get in the way
# (or into a tarball); every file but .git where $src is no git checkout.
# Sourced by the check scripts that build from a copy.
copy_tree() {
  mkdir -p "$1"
  if git -C "$src" rev-parse --git-dir > /dev/null 2>&1; then
    (cd "$src" && git ls-files -z --cached --others --exclude-standard |
       while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
       tar --null -T - -cf -) | tar -xf - -C "$1"
  else
    (cd "$src" && tar --exclude=./.git -cf - .) | tar -xf - -C "$1"
  fi
}
