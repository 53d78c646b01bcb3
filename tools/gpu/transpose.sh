#!/usr/bin/env bash
# The transpose benchmark (tools/gpu/transpose/transpose.cu) side by side: the same source built
# by nvcc against NVSHMEM (Python's nvidia.nvshmem package) and against rshmem's nvshmem.h and
# libshmem, run one after the other at each PE count on this machine's GPUs, for a machine with
# CUDA and no Rust: DIR holds the binaries tools/gpu/build.sh made (rshmem, libshmem.so).
#
#   tools/gpu/transpose.sh [DIR [PES...]]     (default: .devbin 2 4; ORDER, ITERATIONS from the
#                                              environment, default 4096 and 10)
#
# rshmem's PEs start under `rshmem oshrun -np N --gpu --share-gpus`, which runs PEs that share a
# GPU under a CUDA MPS daemon of its own. NVSHMEM's start from RANK/NRANKS and a unique id in a
# file; where they share a GPU they run under an MPS daemon this script starts, each with
# CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = 100 / (PEs per GPU), without which NVSHMEM refuses its
# on-stream collectives. NVSHMEM_DISABLE_NVLS=1 is set (NVLink multicast stays off here).
#
# Prints each run's lines and then, per way and PE count, rshmem's rate over NVSHMEM's:
#   ratio way=WAY pes=N rshmem_GBps=R nvshmem_GBps=V ratio=R/V
# Exits non-zero if a run failed (a wrong transpose, an error, or TIMEOUT_S, default 300, passed).
set -uo pipefail
case ${1:-} in
    -h | --help)
        sed -n '2,/^$/{s/^# \{0,1\}//;/^set /d;p}' "$0"
        exit 0
        ;;
esac
cd "$(dirname "$0")/../.." || exit 1
bin=$(realpath "${1:-.devbin}")
shift || true
pes=("$@")
[ ${#pes[@]} -gt 0 ] || pes=(2 4)
order=${ORDER:-4096}
iterations=${ITERATIONS:-10}
timeout_s=${TIMEOUT_S:-300}
arch=${NVSHMEM_ARCH:-sm_90}
out=$(mktemp -d "${TMPDIR:-/tmp}/transpose.XXXXXX")
trap 'rm -rf "$out"' EXIT
export NVSHMEM_DISABLE_NVLS=1

nvshmem=$(python3 -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2> /dev/null)
if [ -z "$nvshmem" ] || [ ! -f "$nvshmem/lib/libnvshmem_host.so.3" ]; then
    echo "error: no NVSHMEM: python3 cannot import nvidia.nvshmem (pip install nvidia-nvshmem-cu12)" >&2
    exit 1
fi
source tools/gpu/visible-gpus.sh
[ "$gpus" -ge 1 ] || { echo "error: no GPU: nvidia-smi -L lists none" >&2; exit 1; }

# Both builds at once.
ln -sf "$nvshmem/lib/libnvshmem_host.so.3" "$out/libnvshmem_host.so"
ln -sf "$bin/libshmem.so" "$out/libnvshmem.so"
nvcc -O3 -rdc=true -arch="$arch" -I"$nvshmem/include" tools/gpu/transpose/transpose.cu \
    -o "$out/transpose-nvshmem" -L"$out" -lnvshmem_host "$nvshmem/lib/libnvshmem_device.a" -lcuda \
    > "$out/build-nvshmem.txt" 2>&1 &
nvshmem_build=$!
nvcc -O3 -rdc=true -arch="$arch" -I runtime/capi/include tools/gpu/transpose/transpose.cu \
    -o "$out/transpose-rshmem" -L"$out" -lnvshmem -lcuda > "$out/build-rshmem.txt" 2>&1 &
rshmem_build=$!
built=1
wait "$nvshmem_build" || built=0
wait "$rshmem_build" || built=0
for side in nvshmem rshmem; do
    if [ ! -x "$out/transpose-$side" ]; then
        echo "error: nvcc failed to build transpose.cu against $side:" >&2
        tail -n 30 "$out/build-$side.txt" >&2
    fi
done
[ "$built" -eq 1 ] && [ -x "$out/transpose-rshmem" ] && [ -x "$out/transpose-nvshmem" ] || exit 1

failed=0
declare -A rate
# Runs rshmem's build at $1 PEs.
run_rshmem() {
    local n=$1
    LD_LIBRARY_PATH="$bin:$out${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout -k 10 "$timeout_s" \
        "$bin/rshmem" oshrun -np "$n" --gpu --share-gpus --timeout-s "$timeout_s" \
        "$out/transpose-rshmem" "$order" "$iterations" > "$out/rshmem.$n.txt" 2>&1
}
# Runs NVSHMEM's build at $1 PEs, under MPS where they share a GPU.
run_nvshmem() {
    local n=$1 i pids=() status=0 share=() per_gpu=$(((n + gpus - 1) / gpus)) mps=0
    if [ "$per_gpu" -gt 1 ] && command -v nvidia-cuda-mps-control > /dev/null; then
        export CUDA_MPS_PIPE_DIRECTORY=$out/mps-pipe CUDA_MPS_LOG_DIRECTORY=$out/mps-log
        mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
        nvidia-cuda-mps-control -d && mps=1
        share=(CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100 / per_gpu)))
    fi
    rm -f "$out/uid"
    for ((i = 0; i < n; i++)); do
        env LD_LIBRARY_PATH="$nvshmem/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" RANK="$i" NRANKS="$n" \
            UIDFILE="$out/uid" "${share[@]}" timeout -k 10 "$timeout_s" \
            "$out/transpose-nvshmem" "$order" "$iterations" > "$out/nvshmem.$n.pe$i.txt" 2>&1 &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || status=1; done
    cat "$out"/nvshmem."$n".pe*.txt > "$out/nvshmem.$n.txt"
    if [ "$mps" -eq 1 ]; then
        echo quit | nvidia-cuda-mps-control > /dev/null 2>&1
        unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    fi
    return $status
}

for n in "${pes[@]}"; do
    for side in rshmem nvshmem; do
        echo "transpose.sh: $side at $n PEs ($gpus GPU(s), order $order, $iterations iterations)" >&2
        if ! "run_$side" "$n"; then
            echo "# $side at $n PEs FAILED:"
            tail -n 20 "$out/$side.$n.txt" | sed 's/^/#   /'
            failed=1
            continue
        fi
        grep '^transpose ' "$out/$side.$n.txt" | sed "s/^/$side /"
        while read -r _ way _ _ _ gbps _; do
            rate[$side.$n.${way#way=}]=${gbps#GBps=}
        done < <(grep '^transpose ' "$out/$side.$n.txt")
    done
done
for n in "${pes[@]}"; do
    for way in get ptr alltoall; do
        r=${rate[rshmem.$n.$way]:-} v=${rate[nvshmem.$n.$way]:-}
        [ -n "$r" ] && [ -n "$v" ] || continue
        echo "ratio way=$way pes=$n rshmem_GBps=$r nvshmem_GBps=$v ratio=$(python3 -c "print(f'{$r / $v:.2f}')")"
    done
done
exit $failed
