#!/usr/bin/env bash
# expect_line.sh REGEX CMD [ARGS...]: runs CMD, passes its output through,
# and fails unless CMD succeeded and printed a line matching REGEX (grep
# -E). CMD's own failure is its status (77, a skip, included).
regex=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || exit $rc
if ! printf '%s\n' "$out" | grep -qE -- "$regex"; then
    echo "expect_line: no line matches: $regex"
    exit 1
fi
