#!/usr/bin/env bash
# The GPU checks of the CUDA backend in one go, for a GPU machine without Rust: the unit
# tests, the conformance and device-API suites, the litmus catalogue as GPU kernels, the
# multi-process launcher, both symmetric heaps (tests/conformance/examples/cuda_heaps.rs), the
# C test programs that fit a GPU under `oshrun --gpu`, and
# `rshmem bench` beside NVSHMEM's benchmark in the same call.
# With one GPU the PEs share it (--share-gpus) and NVSHMEM, which needs a GPU per PE, is
# skipped. Every output goes to OUT (default gpu-check/); a summary is printed.
#
#   tools/gpu/check.sh [BIN_DIR] [NVSHMEM_BENCH_DIR]    (defaults: .devbin .bench/nvshmem)
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-.devbin}
nvshmem=${2:-.bench/nvshmem}
out=${OUT:-gpu-check}
mkdir -p "$out"
export RSHMEM_LITMUS_DIR=$PWD/tests/litmus/catalogue

gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
share=()
if [ "$gpus" -lt 2 ]; then share=(--share-gpus); fi
echo "GPUs: $gpus ${share[*]}" | tee "$out/summary.txt"
nvidia-smi topo -m > "$out/topology.txt" 2>&1

run() { # name, command...: runs it, keeps its output, records its exit status
    local name=$1; shift
    "$@" > "$out/$name.txt" 2>&1
    local rc=$?
    echo "$name: exit $rc; $(grep -E '^test result' "$out/$name.txt" | tr '\n' ' ')" \
        | tee -a "$out/summary.txt"
}

run hw-lib timeout 300 "$bin/hw-lib" cuda
run cuda_device timeout 300 "$bin/cuda_device" --test-threads=1
RSHMEM_LITMUS_TABLE=$out/litmus-gpu.md run cuda timeout 600 "$bin/cuda" --test-threads=1 --nocapture
run launcher timeout 300 "$bin/rshmem" run -n 2 "${share[@]}" --timeout-s 240 "$bin/cuda_conformance"
grep -c ': ok$' "$out/launcher.txt" | sed 's/^/launcher: bodies ok: /' | tee -a "$out/summary.txt"
# Both heaps with PEs as threads; one process per PE must refuse the host heap by name.
SHMEM_SYMMETRIC_SIZE=4m run heaps timeout 120 "$bin/cuda_heaps"
SHMEM_SYMMETRIC_SIZE=4m run heaps-processes bash -c "timeout 120 '$bin/rshmem' run -n 2 \
    ${share[*]} --timeout-s 100 '$bin/cuda_heaps' | grep 'set SHMEM_SYMMETRIC_SIZE'"

# The C test programs on GPUs (oshrun --gpu): shmem_malloc returns GPU memory there, so only
# the programs that never dereference symmetric memory on the host run. Left out: every
# other program of runtime/capi/tests/c, which stores into or reads symmetric memory from
# host code (the CUDA backend shares no host heap between processes yet), and
# autoconf_probe.c and static_data.c, whose globals are symmetric (no static data on CUDA yet).
for program in "$bin"/c/*; do
    name=c-$(basename "$program")
    LD_LIBRARY_PATH=$PWD/$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} run "$name" timeout 120 \
        "$bin/rshmem" oshrun -np 2 --gpu "${share[@]}" --timeout-s 100 "$program"
    tail -n 1 "$out/$name.txt" | sed "s/^/$name: /" | tee -a "$out/summary.txt"
done

if [ "$gpus" -ge 2 ] && [ -f "$nvshmem/run.sh" ]; then
    run nvshmem timeout 400 bash "$nvshmem/run.sh"
    run bench timeout 400 "$bin/rshmem" bench --nvshmem "$out/nvshmem.txt" --raw "$out/rshmem-bench.txt"
else
    echo "NVSHMEM's benchmark skipped: it needs 2 GPUs and $nvshmem/run.sh" | tee -a "$out/summary.txt"
    run bench timeout 400 "$bin/rshmem" bench "${share[@]}" --raw "$out/rshmem-bench.txt"
fi
