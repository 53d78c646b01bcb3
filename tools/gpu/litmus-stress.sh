#!/usr/bin/env bash
# The litmus catalogue as GPU kernels, with and without stress (docs/litmus-on-gpu.md), for a
# GPU machine without Rust: runs `litmus-gpu` (built by tools/gpu/build.sh) once per mode and
# keeps each mode's markdown table. With one GPU the PEs share it. Each mode runs under
# `timeout`, and every test of the stressed modes is time-boxed, so that the default modes
# (off, then on) end within 8 minutes on one H200. The exit status is non-zero if a mode failed:
# a forbidden outcome, a test that could not run, or a timeout.
#
#   tools/gpu/litmus-stress.sh [BIN_DIR]                                  (default .devbin)
#
# Environment: OUT (default litmus-stress/), EXECUTIONS per test (default 100000), MODES
# (default "off on"; "placement" is stress without memory stress, about 3 more minutes),
# TIME_BOX_S per test (default 3), SEED (default 1), COMMIT (what the binaries were built from,
# default this checkout's HEAD).
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-.devbin}
out=${OUT:-litmus-stress}
executions=${EXECUTIONS:-100000}
modes=${MODES:-off on}
time_box_s=${TIME_BOX_S:-3}
seed=${SEED:-1}
export RSHMEM_LITMUS_DIR=$PWD/tests/litmus/catalogue

if [ ! -x "$bin/litmus-gpu" ]; then
    echo "litmus-stress: no $bin/litmus-gpu; build it with tools/gpu/build.sh (no CUDA needed) and bring $bin here" >&2
    exit 2
fi
if ! nvidia-smi -L > /dev/null 2>&1; then
    echo "litmus-stress: nvidia-smi finds no GPU; run this on a GPU machine" >&2
    exit 2
fi
mkdir -p "$out"
{
    echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "commit: ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
    nvidia-smi -L
    nvidia-smi --query-gpu=driver_version --format=csv,noheader | sed 's/^/driver: /'
} | tee "$out/summary.txt"
n_tests=$(grep -l '^expect nv-nvl' "$RSHMEM_LITMUS_DIR"/*.litmus | wc -l)

failures=0
for mode in $modes; do
    case $mode in
        off) limit=240 ;;
        # Every test: its compile, at most one time box of launches, and the last launch.
        on | placement) limit=$(awk -v n="$n_tests" -v t="$time_box_s" 'BEGIN { print int(n * (t + 1.5) + 30) }') ;;
        *) echo "litmus-stress: unknown mode '$mode' (off, on or placement)" >&2; exit 2 ;;
    esac
    start=$(date +%s)
    timeout --kill-after=10 "$limit" "$bin/litmus-gpu" --stress "$mode" --executions "$executions" \
        --time-box-s "$time_box_s" --seed "$seed" --table "$out/litmus-$mode.md" \
        > "$out/litmus-$mode.txt" 2> "$out/litmus-$mode.log"
    rc=$?
    [ "$rc" -eq 0 ] || failures=$((failures + 1))
    verdict="exit $rc"
    [ "$rc" -eq 124 ] && verdict="TIMED OUT after $limit s (the table holds the tests done)"
    echo "stress $mode: $verdict, $(( $(date +%s) - start )) s; $(grep -m1 '^Weak outcomes seen' "$out/litmus-$mode.md" 2>/dev/null)" \
        | tee -a "$out/summary.txt"
    tail -n 3 "$out/litmus-$mode.log"
done
echo "failed: $failures of the modes ($modes)" | tee -a "$out/summary.txt"
[ "$failures" -eq 0 ]
