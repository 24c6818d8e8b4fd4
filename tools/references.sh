#!/usr/bin/env bash
# Runs the project's reference programs of a GPU build and writes their
# rows in dcuda_bench's CSV format, for tools/bench_compare.py:
#   OUT/floors.csv   dcuda_ref_floors: raw flag ping-pongs, the pinned-flag
#                    round trip, kernel and copy-engine bandwidth
#   OUT/nvshmem.csv  dcuda_ref_nvshmem under mpirun, one PE a GPU (built
#                    where NVSHMEM was found): put_signal, signal_op,
#                    putmem between PEs 0 and 1, and the collectives over
#                    every PE; needs two GPUs (two PEs sharing one GPU hung
#                    in the first ping-pong on an H100 with NVSHMEM 3.4:
#                    tried only with DCUDA_REF_SHARE_GPU=1). DCUDA_REF_PES
#                    sets the PEs (default: the GPUs, at most 4), as
#                    dcuda_bench runs one process a GPU.
# Build them with `make references` (or the target dcuda_references).
# Usage: tools/references.sh BUILD_DIR OUT_DIR [--quick]
set -uo pipefail
build=${1:?usage: tools/references.sh BUILD_DIR OUT_DIR [--quick]}
out=${2:?usage: tools/references.sh BUILD_DIR OUT_DIR [--quick]}
quick=${3:-}
mkdir -p "$out"
export NVSHMEM_DISABLE_NVLS=1 # NVLink SHARP stays off on the lent machines
status=0
floors=$build/bench/dcuda_ref_floors
if [ -x "$floors" ]; then
    "$floors" $quick --csv "$out/floors.csv" || status=1
else
    echo "references: no $floors (a build without CUDA?)"
    status=1
fi
nvshmem=$build/bench/dcuda_ref_nvshmem
gpus=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU " || true)
if [ ! -x "$nvshmem" ]; then
    echo "references: no $nvshmem (NVSHMEM not found when configured: DCUDA_NVSHMEM_HOME)"
elif [ "${gpus:-0}" -lt 2 ] && [ "${DCUDA_REF_SHARE_GPU:-0}" != 1 ]; then
    echo "references: dcuda_ref_nvshmem needs 2 GPUs ($gpus visible): no NVSHMEM figures"
else
    run_as_root=
    [ "$(id -u)" = 0 ] && run_as_root=--allow-run-as-root
    pes=${DCUDA_REF_PES:-$gpus}
    [ "$pes" -gt 4 ] && pes=4
    [ "$pes" -lt 2 ] && pes=2
    timeout 300 mpirun $run_as_root --oversubscribe -np "$pes" -x NVSHMEM_DISABLE_NVLS "$nvshmem" \
        $quick --csv "$out/nvshmem.csv" ||
        echo "references: dcuda_ref_nvshmem failed (exit $?): no NVSHMEM figures"
fi
exit $status
