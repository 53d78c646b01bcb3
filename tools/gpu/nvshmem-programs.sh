#!/usr/bin/env bash
# The NVSHMEM guide's programs on GPUs, built by the GPU machine's nvcc against rshmem's
# nvshmem.h and libshmem (as libnvshmem), for a machine with CUDA and no Rust: DIR holds the
# binaries tools/gpu/build.sh made (rshmem, libshmem.so).
#
#   tools/gpu/nvshmem-programs.sh [DIR]        (default .devbin; outputs under $OUT, default gpu-nvshmem/)
#
# NVSHMEM_NP sets the PE counts (default "2 4"), NVSHMEM_SKIP names programs to leave out (for
# runs on the network path, where the matrix multiplication's billion gets would take hours).
#
# Every runtime/capi/examples/nvshmem/NAME.cu is compiled with
#   nvcc -rdc=true -arch=sm_90 -I runtime/capi/include -L DIR -lnvshmem -lcuda
# and run with `rshmem oshrun -np N --gpu --share-gpus` at N = 2 and 4 (one GPU: the PEs share it).
# A run passes if it exits 0 and, where an expected-output file exists, its output matches it.
#
# Expected output: NAME.N.expected (for N PEs), else NAME.expected, next to NAME.cu. Each line
# of the file is a line the output must hold; order does not matter (PEs print concurrently),
# but count does: a line written twice must appear twice. Empty lines and lines starting with
# `#` are ignored, and the run's other output lines (rshmem's own, for instance) are allowed.
#
# A program the guide wrote with a bug that rshmem names has NAME.N.error (or NAME.error)
# instead: the run must fail, and each line of the file must appear in its output (as part of
# a line: the GPU and the simulator word the start of the message differently).
#
# A program whose output a race of the guide's own code may change has NAME.racy (what the race
# is): a run whose output differs from the expected is then reported, not failed.
#
# One failure does not stop the others; a summary line says how many passed, and the exit status
# is non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=$(realpath "${1:-.devbin}")
out=${OUT:-gpu-nvshmem}
arch=${NVSHMEM_ARCH:-sm_90}
mkdir -p "$out/lib"
out=$(realpath "$out")
# -lnvshmem: the guide's link line, resolved to libshmem.
ln -sf "$bin/libshmem.so" "$out/lib/libnvshmem.so"
export LD_LIBRARY_PATH="$bin:$out/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

read -ra pe_counts <<< "${NVSHMEM_NP:-2 4}"
read -ra skipped <<< "${NVSHMEM_SKIP:-}"
passed=0
total=0
# Whether every line of $1 (expected) is in $2 (output), as many times as it is expected.
matches() {
    python3 - "$1" "$2" <<'PY'
import collections, sys
want = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")]
have = collections.Counter(l.rstrip("\n") for l in open(sys.argv[2], errors="replace"))
missing = collections.Counter(want) - have
for line, n in missing.items():
    print(f"missing {n}x: {line}")
sys.exit(1 if missing else 0)
PY
}

# Every program is compiled first, side by side (nvcc is slow, GPU machines have cores).
for source in runtime/capi/examples/nvshmem/*.cu; do
    name=$(basename "$source" .cu)
    nvcc -rdc=true -arch="$arch" -O2 -I runtime/capi/include -L "$bin" -L "$out/lib" \
        -o "$out/$name" "$source" -lnvshmem -lcuda > "$out/$name.build.txt" 2>&1 &
done
wait

for source in runtime/capi/examples/nvshmem/*.cu; do
    name=$(basename "$source" .cu)
    exe="$out/$name"
    if [[ " ${skipped[*]} " == *" $name "* ]]; then
        echo "$name: skipped (NVSHMEM_SKIP)" | tee -a "$out/summary.txt"
        continue
    fi
    if [ ! -x "$exe" ]; then
        for n in "${pe_counts[@]}"; do
            total=$((total + 1))
            echo "$name -np $n: FAILED (does not compile: $out/$name.build.txt)" | tee -a "$out/summary.txt"
        done
        continue
    fi
    for n in "${pe_counts[@]}"; do
        total=$((total + 1))
        log="$out/$name.$n.txt"
        timeout 300 "$bin/rshmem" oshrun -np "$n" --gpu --share-gpus --timeout-s 240 "$exe" > "$log" 2>&1
        rc=$?
        verdict=ok
        expected=runtime/capi/examples/nvshmem/$name.$n.expected
        [ -f "$expected" ] || expected=runtime/capi/examples/nvshmem/$name.expected
        error=runtime/capi/examples/nvshmem/$name.$n.error
        [ -f "$error" ] || error=runtime/capi/examples/nvshmem/$name.error
        if [ -f "$error" ]; then
            if [ "$rc" -eq 0 ]; then
                verdict="FAILED (exit 0, but $error says it fails: $log)"
            else
                while IFS= read -r line; do
                    [ -z "$line" ] || grep -qF -- "$line" "$log" || verdict="FAILED (no '$line' in $log)"
                done < "$error"
            fi
        elif [ "$rc" -ne 0 ]; then
            verdict="FAILED (exit $rc: $log)"
        elif [ -f "$expected" ] && ! matches "$expected" "$log" > "$out/$name.$n.diff.txt"; then
            if [ -f "runtime/capi/examples/nvshmem/$name.racy" ]; then
                verdict="ok (the race of $name.racy showed: $(tr '\n' ' ' < "$log"))"
            else
                verdict="FAILED (output differs from $expected: $out/$name.$n.diff.txt)"
            fi
        fi
        case $verdict in ok*) passed=$((passed + 1)) ;; esac
        echo "$name -np $n: $verdict" | tee -a "$out/summary.txt"
    done
done
echo "NVSHMEM programs on GPUs: $passed of $total runs passed" | tee -a "$out/summary.txt"
[ "$passed" -eq "$total" ]
