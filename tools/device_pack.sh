#!/usr/bin/env bash
# Packs programs of a build for a GPU machine that should not build them
# again: the library (under its soname), its plugins and the named
# programs, with run.sh, which runs one of them from the pack (the
# library found beside it, CUDA's runtime from CUDA_HOME or /usr/local/cuda).
# Build with nvcc for the GPU's architecture first (sm_90: the Makefile's
# CUDA build, or cmake -DCMAKE_CUDA_ARCHITECTURES=90); carry the pack's
# folder (listed in .git/info/exclude) and run `PACK/run.sh PROGRAM ARGS`
# there. The programs keep their build's absolute paths nowhere else.
#
# Usage: tools/device_pack.sh BUILD_DIR PACK_DIR PROGRAM...
#   PROGRAM: a path under BUILD_DIR (tests/dcuda_test_atomics,
#   bench/dcuda_bench) or an executable's name found under it.
set -euo pipefail

[ $# -ge 3 ] || { sed -n '/^# Usage:/,/^$/s/^# \{0,1\}//p' "$0" >&2; exit 2; }
build=$1
pack=$2
shift 2
[ -d "$build/src" ] || { echo "device_pack: $build is no dcuda build (no src/)" >&2; exit 2; }

lib=$(find "$build/src" -maxdepth 1 -name 'libdcuda.so.*' -type f | sort | tail -1)
[ -n "$lib" ] || { echo "device_pack: no libdcuda.so in $build/src" >&2; exit 2; }
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
rm -rf "$pack"
mkdir -p "$pack"
cp "$lib" "$pack/$soname"
for plugin in "$build"/src/libdcuda_*.so; do
    [ -f "$plugin" ] && cp "$plugin" "$pack/"
done
for p in "$@"; do
    if [ -f "$build/$p" ]; then
        path=$build/$p
    else
        path=$(find "$build" -type f -name "$p" -perm -u+x | head -1)
    fi
    [ -n "$path" ] && [ -x "$path" ] || { echo "device_pack: no program $p in $build" >&2; exit 2; }
    cp "$path" "$pack/"
done
cat >"$pack/run.sh" <<'EOF'
#!/usr/bin/env bash
# Runs a packed program with the packed library (tools/device_pack.sh).
here=$(cd "$(dirname "$0")" && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH="$here:$cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NVSHMEM_DISABLE_NVLS=1
prog=$1
shift
exec "$here/$prog" "$@"
EOF
chmod +x "$pack/run.sh"
echo "device_pack: $(ls "$pack" | wc -l) files, $(du -sh "$pack" | cut -f1) in $pack"
