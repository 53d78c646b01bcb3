#!/usr/bin/env bash
# NVSHMEM's side of the collective benchmark, for a GPU machine with CUDA and no Rust: builds
# tools/gpu/nvshmem/collectives.cu with nvcc against the NVSHMEM of Python's nvidia.nvshmem
# package and runs it at each PE count, one process per PE (PE i on GPU i % n_gpus), so that
# `rshmem bench --collectives --nvshmem LOG` can set rshmem's numbers beside NVSHMEM's.
#
#   tools/gpu/nvshmem-collectives.sh [PES...]        (default: 4 8)
#
# Prints PE 0's lines of every PE count on stdout (`NAME pes=N [bytes=B] us=X [algbw_GBps=Y]`,
# `#` lines are comments); progress goes to stderr. A PE count fails if any of its PEs exits
# non-zero (a CUDA or NVSHMEM error, or a wrong result) or runs past TIMEOUT_S; the other PEs'
# logs are printed then, and the exit status is non-zero if any PE count failed.
#
# With fewer GPUs than PEs the PEs share GPUs. NVSHMEM supports that fully only under CUDA MPS
# with the PEs' CUDA_MPS_ACTIVE_THREAD_PERCENTAGE adding up to at most 100 per GPU (without
# MPS its collectives on a stream exit), so the script then starts its own MPS control daemon
# (pipe and log folders under /tmp), gives each PE 100 / (PEs per GPU) percent, and quits the
# daemon at the end. Such numbers measure one GPU's memory, not NVSwitch: a `#` line says so.
#
# NVSHMEM_DISABLE_NVLS=1 (NVLink multicast must stay off on the GPU machines) and
# NVSHMEM_DISABLE_NCCL=1 (NVSHMEM's own collectives are measured, not NCCL's) are set.
#
# Environment: OUT (the PEs' logs and nvcc's output; default gpu-nvshmem-collectives/),
# NVSHMEM_ARCH (nvcc's -arch, default sm_90), TIMEOUT_S (seconds for one PE count, default 300).
set -uo pipefail

case ${1:-} in
    -h | --help)
        sed -n '2,/^$/{s/^# \{0,1\}//;/^set /d;p}' "$0"
        exit 0
        ;;
esac
pes=("$@")
[ ${#pes[@]} -gt 0 ] || pes=(4 8)
for n in "${pes[@]}"; do
    if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
        echo "error: PES are PE counts (positive integers), got '$n'; see --help" >&2
        exit 2
    fi
done
timeout_s=${TIMEOUT_S:-300}
arch=${NVSHMEM_ARCH:-sm_90}

cd "$(dirname "$0")/../.." || exit 1
out=${OUT:-gpu-nvshmem-collectives}
mkdir -p "$out"
out=$(realpath "$out")
export NVSHMEM_DISABLE_NVLS=1 NVSHMEM_DISABLE_NCCL=1

nvshmem=$(python3 -c 'import nvidia.nvshmem as m; print(list(m.__path__)[0])' 2>/dev/null)
if [ -z "$nvshmem" ] || [ ! -f "$nvshmem/lib/libnvshmem_host.so.3" ]; then
    echo "error: no NVSHMEM: python3 cannot import nvidia.nvshmem with lib/libnvshmem_host.so.3" \
        "(install it with pip install nvidia-nvshmem-cu12)" >&2
    exit 1
fi
if ! command -v nvcc > /dev/null; then
    echo "error: no nvcc on PATH (the CUDA toolkit's compiler builds the benchmark)" >&2
    exit 1
fi
source tools/gpu/visible-gpus.sh
if [ "$gpus" -lt 1 ]; then
    echo "error: no GPU: nvidia-smi -L lists none" >&2
    exit 1
fi

# The program is built aside (23 MB, no output worth keeping), and removed at the end.
build=$(mktemp -d "${TMPDIR:-/tmp}/nvshmem-collectives.XXXXXX")
trap 'rm -rf "$build"' EXIT
# -lnvshmem_host: the package ships only the versioned library.
ln -sf "$nvshmem/lib/libnvshmem_host.so.3" "$build/libnvshmem_host.so"
echo "nvshmem-collectives: building $build/collectives with $(command -v nvcc)" >&2
started=$SECONDS
if ! nvcc -O3 -rdc=true -arch="$arch" -I"$nvshmem/include" tools/gpu/nvshmem/collectives.cu \
    -o "$build/collectives" -L"$build" -lnvshmem_host "$nvshmem/lib/libnvshmem_device.a" -lcuda \
    > "$out/build.txt" 2>&1; then
    echo "error: nvcc failed to build tools/gpu/nvshmem/collectives.cu ($out/build.txt):" >&2
    tail -n 30 "$out/build.txt" >&2
    exit 1
fi
export LD_LIBRARY_PATH="$nvshmem/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "# NVSHMEM from $nvshmem, built in $((SECONDS - started)) s; $gpus GPU(s);" \
    "NVSHMEM_DISABLE_NVLS=1 NVSHMEM_DISABLE_NCCL=1"

# The PEs still running (by process id) when the script ends, and the MPS daemon it started.
pids=()
mps_started=0
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null; done
    if [ "$mps_started" -eq 1 ]; then
        echo quit | nvidia-cuda-mps-control > /dev/null 2>&1
        mps_started=0
    fi
    rm -rf "$build"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_mps() {
    if ! command -v nvidia-cuda-mps-control > /dev/null; then
        echo "# no nvidia-cuda-mps-control: PEs that share a GPU run without MPS"
        return
    fi
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/nvshmem-collectives-mps/pipe
    export CUDA_MPS_LOG_DIRECTORY=/tmp/nvshmem-collectives-mps/log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    if nvidia-cuda-mps-control -d; then
        mps_started=1
    else
        echo "# nvidia-cuda-mps-control -d failed: PEs that share a GPU run without MPS;" \
            "$(tail -n 3 "$CUDA_MPS_LOG_DIRECTORY/control.log" 2> /dev/null | tr '\n' ' ')"
    fi
}

# Whether process $1 still runs (a zombie does not).
running() {
    local stat
    stat=$(cat "/proc/$1/stat" 2> /dev/null) || return 1
    stat=${stat##*) }
    [[ $stat != Z* ]]
}

# Runs the benchmark with $1 PEs; prints PE 0's lines, or why it failed and every PE's log.
run_pes() {
    local n=$1 share=() i
    local per_gpu=$(((n + gpus - 1) / gpus))
    if [ "$per_gpu" -gt 1 ]; then
        local through="without MPS"
        [ "$mps_started" -eq 0 ] || through="through CUDA MPS"
        echo "# the $n PEs share $gpus GPU(s), $per_gpu per GPU $through: these numbers" \
            "measure one GPU's memory, not NVSwitch"
        share=(CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$((100 / per_gpu)))
    fi
    local uid=/tmp/nvshmem-collectives.$$.$n.uid
    rm -f "$uid"
    echo "nvshmem-collectives: $n PEs" >&2
    local begun=$SECONDS
    pids=()
    for ((i = 0; i < n; i++)); do
        local log=$out/pes$n.pe$i.log
        if [ "$i" -eq 0 ]; then
            timeout -k 10 "$timeout_s" env RANK=0 NRANKS="$n" UIDFILE="$uid" "${share[@]}" \
                "$build/collectives" > "$out/pes$n.txt" 2> "$log" &
        else
            timeout -k 10 "$timeout_s" env RANK="$i" NRANKS="$n" UIDFILE="$uid" "${share[@]}" \
                "$build/collectives" > "$log" 2>&1 &
        fi
        pids+=($!)
    done
    # Wait for all; once one has failed, give the others 10 s to fail too, then stop them
    # (they would wait for the failed one until the timeout).
    local statuses=() failed_at=-1 alive
    while :; do
        alive=0
        for ((i = 0; i < n; i++)); do
            [ -z "${statuses[i]:-}" ] || continue
            if running "${pids[i]}"; then
                alive=1
            else
                wait "${pids[i]}"
                statuses[i]=$?
                if [ "${statuses[i]}" -ne 0 ] && [ "$failed_at" -lt 0 ]; then failed_at=$SECONDS; fi
            fi
        done
        [ "$alive" -eq 1 ] || break
        if [ "$failed_at" -ge 0 ] && [ $((SECONDS - failed_at)) -ge 10 ]; then
            for ((i = 0; i < n; i++)); do [ -n "${statuses[i]:-}" ] || kill "${pids[i]}" 2> /dev/null; done
        fi
        sleep 0.2
    done
    pids=()
    rm -f "$uid"
    cat "$out/pes$n.txt"
    local bad=()
    for ((i = 0; i < n; i++)); do
        case ${statuses[i]} in
            0) ;;
            124 | 137) bad+=("PE $i ran past ${timeout_s} s") ;;
            143) bad+=("PE $i stopped after another failed") ;;
            *) bad+=("PE $i exited ${statuses[i]}") ;;
        esac
    done
    if [ ${#bad[@]} -eq 0 ]; then
        echo "# $n PEs: ok in $((SECONDS - begun)) s"
        return 0
    fi
    local reasons
    reasons=$(printf '%s; ' "${bad[@]}")
    echo "# $n PEs: FAILED in $((SECONDS - begun)) s (${reasons%; }); the PEs' logs:"
    # As comments, so that the output stays a benchmark log that `rshmem bench` reads.
    for ((i = 0; i < n; i++)); do
        echo "## PE $i ($out/pes$n.pe$i.log)"
        tail -n 20 "$out/pes$n.pe$i.log" | sed 's/^/#   /'
    done
    return 1
}

max_pes=0
for n in "${pes[@]}"; do [ "$n" -le "$max_pes" ] || max_pes=$n; done
[ "$max_pes" -le "$gpus" ] || start_mps

failures=0
for n in "${pes[@]}"; do
    run_pes "$n" || failures=$((failures + 1))
done
echo "# NVSHMEM collectives: ${#pes[@]} PE count(s), $failures failed"
[ "$failures" -eq 0 ]
