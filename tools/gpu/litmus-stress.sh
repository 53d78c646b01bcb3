#!/usr/bin/env bash
# The litmus catalogue as GPU kernels, with and without stress (docs/litmus-on-gpu.md), for a
# GPU machine without Rust: runs `litmus-gpu` (built by tools/gpu/build.sh) once per mode and
# keeps each mode's markdown table. Each test's PEs run on distinct GPUs drawn at random from
# all the machine's (--gpu-placement random); with one GPU the PEs share it. Each mode runs under
# `timeout`, and every test of the modes off, on and placement is time-boxed, so that the
# default modes (off, then on) end within 8 minutes on one H200. The exit status is non-zero if
# a mode failed: a forbidden outcome, a test that could not run, or a timeout.
#
#   tools/gpu/litmus-stress.sh [BIN_DIR]                                  (default .devbin)
#   MODES=full tools/gpu/litmus-stress.sh                  (the full run, on an 8-GPU machine)
#
# Modes: off (the plain kernel), on (stress), placement (stress without memory stress, about 3
# more minutes), full (stress on, EXECUTIONS to the count with no time box, each test's
# executions divided among PLACEMENTS placements on random GPUs: about 1.5 minutes on one H200;
# on eight H200s we expect 3 to 6 minutes, not yet measured; its limit is 10 s a test).
#
# Environment: OUT (default litmus-stress/), EXECUTIONS per test (default 100000), MODES
# (default "off on"), TIME_BOX_S per test (default 3; not in mode full), PLACEMENTS per test in
# mode full (default 4), GPU_PLACEMENT (random or fixed, default random), SEED (default 1),
# COMMIT (what the binaries were built from, default this checkout's HEAD).
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-.devbin}
out=${OUT:-litmus-stress}
executions=${EXECUTIONS:-100000}
modes=${MODES:-off on}
time_box_s=${TIME_BOX_S:-3}
seed=${SEED:-1}
placements=${PLACEMENTS:-4}
gpu_placement=${GPU_PLACEMENT:-random}
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
    stress=$mode
    runs=(--time-box-s "$time_box_s")
    case $mode in
        off) limit=240 ;;
        # Every test: its compile, at most one time box of launches, and the last launch.
        on | placement) limit=$(awk -v n="$n_tests" -v t="$time_box_s" 'BEGIN { print int(n * (t + 1.5) + 30) }') ;;
        # Every test to the count: no time box, so the limit is generous (10 s a test).
        full) stress=on; runs=(--time-box-s 0 --gpu-placements "$placements"); limit=$((n_tests * 10 + 60)) ;;
        *) echo "litmus-stress: unknown mode '$mode' (off, on, placement or full)" >&2; exit 2 ;;
    esac
    start=$(date +%s)
    timeout --kill-after=10 "$limit" "$bin/litmus-gpu" --stress "$stress" --executions "$executions" \
        "${runs[@]}" --gpu-placement "$gpu_placement" --seed "$seed" --table "$out/litmus-$mode.md" \
        > "$out/litmus-$mode.txt" 2> "$out/litmus-$mode.log"
    rc=$?
    [ "$rc" -eq 0 ] || failures=$((failures + 1))
    verdict="exit $rc"
    [ "$rc" -eq 124 ] && verdict="TIMED OUT after $limit s (the table holds the tests done)"
    echo "mode $mode: $verdict, $(( $(date +%s) - start )) s; $(grep -m1 -e 'executions asked\.$' -e 'stopped short' "$out/litmus-$mode.md" 2>/dev/null) $(grep -m1 '^Weak outcomes seen' "$out/litmus-$mode.md" 2>/dev/null)" \
        | tee -a "$out/summary.txt"
    tail -n 3 "$out/litmus-$mode.log"
done
echo "failed: $failures of the modes ($modes)" | tee -a "$out/summary.txt"
[ "$failures" -eq 0 ]
