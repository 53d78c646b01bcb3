#!/usr/bin/env bash
# The GPU checks of the CUDA backend in one go, for a GPU machine without Rust: the unit
# tests, the conformance and device-API suites, the litmus catalogue as GPU kernels (plain and
# stressed), the multi-process launcher, both symmetric heaps
# (tests/conformance/examples/cuda_heaps.rs), the C test programs under `oshrun --gpu`,
# `rshmem bench` beside NVSHMEM's benchmark, and `rshmem bench --collectives` beside NVSHMEM's
# collectives (tools/gpu/nvshmem-collectives.sh), all in the same call.
# With one GPU the PEs share it (--share-gpus) and NVSHMEM, which needs a GPU per PE, is
# skipped (its collectives still run, the PEs sharing the GPU through CUDA MPS). Every output
# goes to OUT (default gpu-check/); a summary is printed, and the exit
# status is non-zero if any check failed.
#
#   tools/gpu/check.sh [BIN_DIR] [NVSHMEM_BENCH_DIR]    (defaults: .devbin .bench/nvshmem)
#
# CHECKS names the groups to run (default all): unit (the unit tests, the device-API suite,
# registered buffers with PEs as threads), cuda (the conformance suite), litmus, launcher,
# heaps, c (the C programs), network (PEs as processes whose peers are all on the network
# path, RSHMEM_TRANSPORT=ofi), cuda-programs (the C++ CUDA test programs), bench, collectives.
# A device session is short: CHECKS="unit launcher c" fits in one call.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
bin=$(realpath "${1:-.devbin}")
nvshmem=${2:-.bench/nvshmem}
out=${OUT:-gpu-check}
mkdir -p "$out"
export RSHMEM_LITMUS_DIR=$PWD/tests/litmus/catalogue

source tools/gpu/visible-gpus.sh
share=()
if [ "$gpus" -lt 2 ]; then share=(--share-gpus); fi
echo "GPUs: $gpus ${share[*]}" | tee "$out/summary.txt"
nvidia-smi topo -m > "$out/topology.txt" 2>&1

failures=0
want() { [[ " ${CHECKS:-unit cuda litmus launcher heaps c network cuda-programs bench collectives} " == *" $1 "* ]]; }
run() { # name, command...: runs it, keeps its output, records its exit status
    local name=$1; shift
    "$@" > "$out/$name.txt" 2>&1
    local rc=$?
    [ "$rc" -eq 0 ] || failures=$((failures + 1))
    echo "$name: exit $rc; $(grep -E '^test result' "$out/$name.txt" | tr '\n' ' ')" \
        | tee -a "$out/summary.txt"
}

if want unit; then
    run hw-lib timeout 300 "$bin/hw-lib" cuda
    run cuda_device timeout 300 "$bin/cuda_device" --test-threads=1
    run cuda_buffers timeout 120 "$bin/cuda_buffers" --test-threads=1
fi
if want cuda; then
    RSHMEM_LITMUS_TABLE=$out/litmus-gpu.md run cuda timeout 600 "$bin/cuda" --test-threads=1 --nocapture
fi
if want litmus; then
    # The catalogue as stressed kernels (docs/litmus-on-gpu.md): a forbidden outcome fails it.
    run litmus-stress timeout 300 "$bin/litmus-gpu" --stress on --time-box-s 2 --table "$out/litmus-stress.md"
    grep -m1 '^Weak outcomes seen' "$out/litmus-stress.md" | tee -a "$out/summary.txt"
fi
if want launcher; then
    run launcher timeout 300 "$bin/rshmem" run -n 2 "${share[@]}" --timeout-s 240 "$bin/cuda_conformance"
    grep -c ': ok$' "$out/launcher.txt" | sed 's/^/launcher: bodies ok: /' | tee -a "$out/summary.txt"
fi
if want heaps; then
    # Both heaps, with PEs as threads and with a process per PE.
    SHMEM_SYMMETRIC_SIZE=4m run heaps timeout 120 "$bin/cuda_heaps"
    SHMEM_SYMMETRIC_SIZE=4m run heaps-processes timeout 120 "$bin/rshmem" run -n 2 --share-gpus \
        --timeout-s 100 "$bin/cuda_heaps"
fi

# The C test programs on GPUs (oshrun --gpu), judged as runtime/capi/tests/programs.rs judges
# them. Their host code loads and stores symmetric memory, so shmem_malloc takes the host heap
# (SHMEM_SYMMETRIC_HEAP_DEFAULT=HOST); hello and on_stream, which only call SHMEM, also run
# with the GPU's default, the device heap. Each row: program, expectation (pass, status:N, or
# fail:WORD,WORD... that the output must hold), extra environment.
c_cases=(
    "hello pass" "autoconf_probe pass" "rma pass" "amo pass" "waits pass" "memory pass"
    "teams pass" "contexts pass" "collectives pass" "reductions pass"
    "deprecated_collectives pass" "locks pass" "signals pass" "on_stream pass"
    "static_data pass" "threads pass" "generic pass"
    "generic_rma pass" "generic_amo pass" "generic_sync pass" "generic_reduce pass"
    "spec_memory pass" "spec_rma pass" "spec_waits pass"
    "coll_in_place pass" "coll_zero_length pass" "coll_collect_twice pass"
    "team_split_strided pass" "team_get_config pass" "ctx_invalid pass" "ctx_on_teams pass"
    "coll_err_reduce_overlap fail:rshmem:,shmem_long_sum_reduce"
    "coll_err_alltoalls_stride fail:rshmem:,shmem_long_alltoalls"
    "ctx_err_invalid_put fail:rshmem:,shmem_ctx_long_p"
    "team_err_sync_invalid fail:rshmem:,shmem_team_sync"
    "global_exit status:7"
    "heap_exhausted pass SHMEM_SYMMETRIC_SIZE=1m"
    "err_pe_range fail:rshmem:,shmem_long_p"
    "err_not_symmetric fail:rshmem:,shmem_long_put"
    "err_misaligned_amo fail:rshmem:,shmem_long_atomic_fetch_add"
    "err_before_init fail:rshmem:,shmem_long_p,shmem_init"
    "err_collective_mismatch fail:rshmem:,shmem_broadcastmem"
    "err_wait_timeout fail:rshmem:,shmem_long_wait_until RSHMEM_WAIT_TIMEOUT_MS=500"
    "hello pass SHMEM_SYMMETRIC_HEAP_DEFAULT=DEVICE"
    "on_stream pass SHMEM_SYMMETRIC_HEAP_DEFAULT=DEVICE"
    "heat_exit pass" "bcast_in_place pass" "histogram pass" "thread_ctx pass"
    "big_heap pass SHMEM_SYMMETRIC_SIZE=2G"
    "threads_counter pass" "threads_flag pass"
)
c_failed=0
want c || c_cases=()
for case in "${c_cases[@]}"; do
    read -r program expect env <<< "$case"
    name=c-$program${env:+-${env%%=*}}
    name=${name,,}
    env LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        SHMEM_SYMMETRIC_HEAP_DEFAULT=HOST $env timeout 120 \
        "$bin/rshmem" oshrun -np 2 --gpu --share-gpus --timeout-s 100 "$bin/c/$program" \
        > "$out/$name.txt" 2>&1
    rc=$?
    verdict=ok
    case $expect in
        pass) [ "$rc" -eq 0 ] || verdict="FAILED (exit $rc, want 0)" ;;
        status:*) [ "$rc" -eq "${expect#status:}" ] || verdict="FAILED (exit $rc, want ${expect#status:})" ;;
        fail:*)
            if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then verdict="FAILED (exit $rc, want a failure)"; fi
            IFS=, read -ra words <<< "${expect#fail:}"
            for word in "${words[@]}"; do
                grep -qF -- "$word" "$out/$name.txt" || verdict="FAILED (no '$word' in the output)"
            done ;;
    esac
    [ "$verdict" = ok ] || c_failed=$((c_failed + 1))
    echo "$name: $verdict" | tee -a "$out/summary.txt"
done
want c && echo "C programs on GPUs: ${#c_cases[@]} runs, $c_failed failed" | tee -a "$out/summary.txt"
[ "$c_failed" -eq 0 ] || failures=$((failures + 1))

# The C++ CUDA test programs the simulator runs, built here by nvcc (tools/gpu/cuda-programs.sh).
if want network; then
    # PEs as processes sharing this machine's GPU with every peer forced onto the network
    # path (RSHMEM_TRANSPORT=ofi): each operation to a peer is a request to its proxy thread
    # over libfabric on loopback (docs/multi-node.md). A machine without libfabric uses the
    # copy build.sh packed (.devbin/ofi).
    ofi_lib=()
    if ! ldconfig -p | grep -q 'libfabric.so.1 ' && [ -d "$bin/ofi" ]; then
        ofi_lib=(LD_LIBRARY_PATH="$bin/ofi${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    fi
    net=(env "${ofi_lib[@]}" RSHMEM_TRANSPORT=ofi "FI_PROVIDER=tcp;ofi_rxm")
    net_bodies=(ring fenced_message_passing signal_message_passing fetch_add_counter
        get_after_barrier on_stream heap_growth device_api_ring device_api_calls)
    run network-bodies "${net[@]}" timeout 300 "$bin/rshmem" run -n 2 --share-gpus \
        --timeout-s 240 "$bin/cuda_conformance" "${net_bodies[@]}"
    grep -c ': ok$' "$out/network-bodies.txt" | sed 's/^/network: bodies ok: /' \
        | tee -a "$out/summary.txt"
    if command -v mpirun > /dev/null; then
        # The same under Open MPI's launcher (PMIx), its ranks crowding the one GPU.
        run network-mpirun "${net[@]}" timeout 300 mpirun --allow-run-as-root --oversubscribe \
            -np 2 -x RSHMEM_TRANSPORT -x FI_PROVIDER ${ofi_lib:+-x LD_LIBRARY_PATH} \
            "$bin/cuda_conformance" "${net_bodies[@]}"
    fi
    # Kernels reach PEs on the network path through their PE's kernel proxy: the NVSHMEM
    # programs built by nvcc, every peer a request away (the matrix multiplication's billion
    # gets would take hours that way).
    OUT=$out/network-nvshmem NVSHMEM_NP=2 NVSHMEM_SKIP=matmul run network-nvshmem "${net[@]}" \
        timeout 900 tools/gpu/nvshmem-programs.sh "$bin"
    tail -1 "$out/network-nvshmem.txt" | sed 's/^/network: /' | tee -a "$out/summary.txt"
    # And the C++ CUDA test programs the same way.
    OUT=$out/network-cuda-programs run network-cuda-programs "${net[@]}" \
        timeout 600 tools/gpu/cuda-programs.sh "$bin"
    tail -1 "$out/network-cuda-programs.txt" | sed 's/^/network: /' | tee -a "$out/summary.txt"
    # One hardware queue per context: every stream of the program runs behind its kernel that
    # spins for a peer's arrival. The proxies' copies and atomics that bring it run in a
    # context of their own, so they still land (docs/multi-node.md, "Kernels across nodes").
    programs=$out/network-cuda-programs
    run network-one-queue "${net[@]}" CUDA_DEVICE_MAX_CONNECTIONS=1 \
        LD_LIBRARY_PATH="$bin:$programs/lib${ofi_lib:+:$bin/ofi}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        timeout 200 "$bin/rshmem" oshrun -np 4 --gpu --share-gpus --timeout-s 120 \
        "$programs/cxx_stream_collectives"
    # Host code of the C programs loads and stores symmetric memory, so they take the host
    # heap, as in the c group above; hello and on_stream, which only call SHMEM, the device
    # heap too.
    net_c=(hello:HOST rma:HOST amo:HOST waits:HOST signals:HOST memory:HOST
        collectives:HOST reductions:HOST locks:HOST on_stream:HOST teams:HOST contexts:HOST
        hello:DEVICE on_stream:DEVICE)
    for case in "${net_c[@]}"; do
        program=${case%%:*} heap=${case##*:}
        name=network-c-$program-${heap,,}
        "${net[@]}" LD_LIBRARY_PATH="$bin${ofi_lib:+:$bin/ofi}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            SHMEM_SYMMETRIC_HEAP_DEFAULT=$heap timeout 200 "$bin/rshmem" oshrun -np 2 --gpu \
            --share-gpus --timeout-s 180 "$bin/c/$program" > "$out/$name.txt" 2>&1
        rc=$?
        if [ "$rc" -eq 0 ]; then verdict=ok; else verdict="FAILED (exit $rc)"; failures=$((failures + 1)); fi
        echo "$name: $verdict" | tee -a "$out/summary.txt"
    done
    SHMEM_SYMMETRIC_SIZE=4m run network-heaps "${net[@]}" timeout 200 "$bin/rshmem" run -n 2 \
        --share-gpus --timeout-s 180 "$bin/cuda_heaps"
fi

if want cuda-programs; then
    OUT=$out/cuda-programs run cuda-programs timeout 500 tools/gpu/cuda-programs.sh "$bin"
    tail -1 "$out/cuda-programs.txt" | tee -a "$out/summary.txt"
fi

if ! want bench; then
    :
elif [ "$gpus" -ge 2 ] && [ -f "$nvshmem/run.sh" ]; then
    run nvshmem timeout 400 bash "$nvshmem/run.sh"
    run bench timeout 400 "$bin/rshmem" bench --nvshmem "$out/nvshmem.txt" --raw "$out/rshmem-bench.txt"
else
    echo "NVSHMEM's benchmark skipped: it needs 2 GPUs and $nvshmem/run.sh" | tee -a "$out/summary.txt"
    run bench timeout 400 "$bin/rshmem" bench "${share[@]}" --raw "$out/rshmem-bench.txt"
fi
# The collectives at several PE counts beside NVSHMEM's (docs/collectives-bench.md), in this
# same call: NVSHMEM's side is built here with nvcc. PE counts beyond the GPUs share them
# (NVSHMEM through CUDA MPS), which measures one GPU's memory rather than NVLink: the output
# says so. COLL_PES overrides the PE counts (default 2 4 8; empty skips the collectives).
read -ra coll_pes <<< "${COLL_PES-2 4 8}"
want collectives || coll_pes=()
coll_share=()
for n in "${coll_pes[@]}"; do
    if [ "$n" -gt "$gpus" ]; then coll_share=(--share-gpus); fi
done
if [ ${#coll_pes[@]} -gt 0 ]; then
    OUT=$out/nvshmem-collectives-logs run nvshmem-collectives timeout 600 \
        bash tools/gpu/nvshmem-collectives.sh "${coll_pes[@]}"
    coll_list=$(IFS=,; echo "${coll_pes[*]}")
    if grep -q 'pes=' "$out/nvshmem-collectives.txt"; then
        run bench-collectives timeout 600 "$bin/rshmem" bench --collectives --pes "$coll_list" \
            "${coll_share[@]}" --nvshmem "$out/nvshmem-collectives.txt" --raw "$out/rshmem-collectives.txt"
    else
        run bench-collectives timeout 600 "$bin/rshmem" bench --collectives --pes "$coll_list" \
            "${coll_share[@]}" --raw "$out/rshmem-collectives.txt"
    fi
fi

echo "failed: $failures of the checks above" | tee -a "$out/summary.txt"
[ "$failures" -eq 0 ]
