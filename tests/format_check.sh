#!/usr/bin/env bash
# The house style (.clang-format) holds on every tracked C and CUDA file:
# clang-format --dry-run -Werror over them; the files it would change are
# named with the command that changes them. The tree is formatted with
# clang-format 14 (Debian 12's); another major version lays some lines out
# otherwise, so this check skips there (exit 77) and says why, as it does
# outside a git checkout or without clang-format.
#   tests/format_check.sh <source dir>
set -u
src=${1:?source dir}
want=14
command -v clang-format >/dev/null || { echo "SKIP: no clang-format"; exit 77; }
major=$(clang-format --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
if [ "$major" != "$want" ]; then
    echo "SKIP: clang-format $major here; the tree is formatted with clang-format $want"
    exit 77
fi
files=$(git -C "$src" ls-files '*.c' '*.h' '*.cu' '*.cuh' 2>/dev/null) \
    || { echo "SKIP: $src is not a git checkout"; exit 77; }
[ -n "$files" ] || { echo "SKIP: no tracked C files under $src"; exit 77; }
bad=()
cd "$src" || exit 1
for f in $files; do
    [ -f "$f" ] || continue # deleted in the work tree, not yet in the index
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
count=$(echo "$files" | wc -l)
if [ ${#bad[@]} -gt 0 ]; then
    echo "FAIL: ${#bad[@]} of $count files are not in the house style:"
    printf '  %s\n' "${bad[@]}"
    echo "fix: clang-format -i ${bad[*]}"
    exit 1
fi
echo "PASS: $count files in the house style (clang-format $major)"
