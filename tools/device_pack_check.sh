#!/usr/bin/env bash
# ctest tools.device_pack: tools/device_pack.sh packs dcuda_info from a
# build; the packed program runs from the pack with the packed library
# (ldd under run.sh's environment names the pack's copy), and a program
# the build lacks is refused.
# Usage: tools/device_pack_check.sh BUILD_DIR WORK_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1
pack=$2/pack
fail() { echo "FAIL: $*"; exit 1; }
"$here/device_pack.sh" "$build" "$pack" dcuda_info || fail "packing dcuda_info"
[ -x "$pack/run.sh" ] && [ -x "$pack/dcuda_info" ] || fail "the pack lacks run.sh or the program"
out=$("$pack/run.sh" dcuda_info 2>&1) || fail "the packed dcuda_info did not run: $out"
grep -q "dcuda" <<<"$out" || fail "the packed dcuda_info printed no version: $out"
lib=$(LD_LIBRARY_PATH="$pack" ldd "$pack/dcuda_info" | awk '/libdcuda\.so/ {print $3}')
[ "$(dirname "$lib")" = "$(cd "$pack" && pwd)" ] || fail "libdcuda resolves to $lib, not the pack's"
if "$here/device_pack.sh" "$build" "$pack" no_such_program >/dev/null 2>&1; then
    fail "a program the build lacks was packed"
fi
echo "device_pack: all checks passed"
