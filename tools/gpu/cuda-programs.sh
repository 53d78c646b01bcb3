#!/usr/bin/env bash
# The C++ CUDA test programs of runtime/capi/tests/cuda on GPUs, built by the GPU machine's nvcc
# against rshmem's nvshmem.h and libshmem (as libnvshmem), for a machine with CUDA and no Rust:
# DIR holds the binaries tools/gpu/build.sh made (rshmem, libshmem.so). The simulator runs the
# same programs in runtime/capi/tests/nvshmem_programs.rs, against the same expected output.
#
#   tools/gpu/cuda-programs.sh [DIR]        (default .devbin; outputs under $OUT, default gpu-cuda-programs/)
#
# Every program with an expected output NAME.N.expected ends with status 0 and prints, at N PEs,
# exactly those lines in any order (standard output only: standard error is rshmem's and the
# programs' diagnostics); with RSHMEM_TRANSPORT=ofi, NAME.N.network.expected where it exists
# (the output of a program that says whether nvshmem_ptr reached its peer). The programs that end on purpose (exit_*) and the one whose misuse a
# GPU's runtime answers with a fault (memcpy_wild_pointer: the simulator refuses it with a
# message) are the simulator's alone. With fewer GPUs than PEs, the PEs share them
# (--share-gpus), except in a program that sets its device to its node rank, which is skipped
# then with the reason. A summary line says how many passed; the exit status is non-zero if any
# failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=$(realpath "${1:-.devbin}")
out=${OUT:-gpu-cuda-programs}
arch=${NVSHMEM_ARCH:-sm_90}
src=runtime/capi/tests/cuda
mkdir -p "$out/lib"
out=$(realpath "$out")
ln -sf "$bin/libshmem.so" "$out/lib/libnvshmem.so"
export LD_LIBRARY_PATH="$bin:$out/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
source tools/gpu/visible-gpus.sh

# The programs of more than one file: the main file's name, then the others.
declare -A more_files=(
    [cxx_rdc_main]="cxx_rdc_weights.cu cxx_rdc_report.cpp"
    [rdc_histogram]="rdc_counters.cu rdc_summary.cpp"
)
programs=()
for expected in "$src"/*.[0-9]*.expected; do
    case $expected in *.network.expected) continue ;; esac
    name=$(basename "$expected" | sed -E 's/\.[0-9]+\.expected$//')
    case $name in exit_* | memcpy_wild_pointer) continue ;; esac
    [[ " ${programs[*]} " == *" $name "* ]] || programs+=("$name")
done

# Every program is compiled first, side by side (nvcc is slow, GPU machines have cores).
for name in "${programs[@]}"; do
    files=("$src/$name.cu")
    for more in ${more_files[$name]:-}; do files+=("$src/$more"); done
    nvcc -rdc=true -arch="$arch" -std=c++17 -O2 --extended-lambda -I runtime/capi/include -I "$src" \
        -L "$out/lib" -o "$out/$name" "${files[@]}" -lnvshmem -lcuda > "$out/$name.build.txt" 2>&1 &
done
wait

passed=0
total=0
for name in "${programs[@]}"; do
    for expected in "$src/$name".[0-9]*.expected; do
        case $expected in *.network.expected) continue ;; esac
        n=$(basename "$expected" | sed -E 's/.*\.([0-9]+)\.expected$/\1/')
        # Over the network path (RSHMEM_TRANSPORT=ofi) nvshmem_ptr of a peer is NULL, as it is
        # across nodes; a program whose output says so has NAME.N.network.expected.
        if [ "${RSHMEM_TRANSPORT:-}" = ofi ] && [ -f "$src/$name.$n.network.expected" ]; then
            expected=$src/$name.$n.network.expected
        fi
        total=$((total + 1))
        share=()
        [ "$gpus" -ge "$n" ] || share=(--share-gpus)
        log="$out/$name.$n"
        if [ ! -x "$out/$name" ]; then
            verdict="FAILED (does not compile: $out/$name.build.txt)"
        elif [ "${#share[@]}" -gt 0 ] && grep -q 'cudaSetDevice(nvshmem_team_my_pe' "$src/$name.cu"; then
            verdict="skipped (it sets its device to its node rank: $n PEs need $n GPUs, there are $gpus)"
            passed=$((passed + 1))
        else
            timeout 200 "$bin/rshmem" oshrun -np "$n" --gpu "${share[@]}" --timeout-s 180 "$out/$name" \
                > "$log.txt" 2> "$log.err"
            rc=$?
            if [ "$rc" -ne 0 ]; then
                verdict="FAILED (exit $rc: $log.txt, $log.err)"
            elif ! diff <(sort "$log.txt") <(sort "$expected") > "$log.diff"; then
                verdict="FAILED (output differs from $expected: $log.diff)"
            else
                verdict=ok
                passed=$((passed + 1))
            fi
        fi
        echo "$name -np $n: $verdict" | tee -a "$out/summary.txt"
    done
done
echo "CUDA test programs on GPUs: $passed of $total runs passed or skipped with a reason" \
    | tee -a "$out/summary.txt"
[ "$passed" -eq "$total" ]
