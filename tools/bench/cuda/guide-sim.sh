#!/usr/bin/env bash
# The NVSHMEM guide's CUDA programs on the simulator, built by rshmem-nvcc, timed: the vector
# sum and the ring at 8 PEs of hgx8, the matrix multiplication at 4 PEs with the guide's size
# (1024^3, 2^30 nvshmem_float_g per PE) with mapped loads, and with --exact (every g an event)
# at a size that finishes (SIZE below, default 128), beside mapped loads at that size. Prints a
# Markdown table (BENCHMARKS.md): wall seconds, simulated time, events, peak memory.
#
#   tools/bench/cuda/guide-sim.sh [EXACT_SIZE]
set -euo pipefail
cd "$(dirname "$0")/../../.."
exact_size=${1:-128}
cargo build --release -q -p rshmem-capi -p tools
export PATH="$PWD/tools/osh/bin:$PATH"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
guide=runtime/capi/examples/nvshmem
rshmem-nvcc -O2 -rdc=true -o "$dir/vector_sum" "$guide/vector_sum.cu"
rshmem-nvcc -O2 -rdc=true -o "$dir/ring" "$guide/ring.cu"
rshmem-nvcc -O2 -rdc=true -o "$dir/matmul" "$guide/matmul.cu"
s=$exact_size
rshmem-nvcc -O2 -rdc=true -DM="$s" -DK="$s" -DN="$s" -o "$dir/matmul_small" "$guide/matmul.cu"

# Prints one row from the --json report (the last line of stdin).
row() {
    python3 -c '
import json, sys
what = sys.argv[1]
r = json.loads(sys.stdin.read().strip().splitlines()[-1])
assert r["ok"], r["failures"]
rss = r.get("process_rss_bytes_peak", 0) // 2**20
print("| %s | %d | %.2f | %.1f | %d | %d |" % (what, r["pes"], r["wall_s"], r["sim_time_ns"] / 1e3, r["events"], rss))
' "$@"
}

echo "| program | PEs | wall s | simulated µs | events | peak RSS MiB |"
echo "|---|---|---|---|---|---|"
oshrun -np 8 --sim hgx8 --json "$dir/vector_sum" | row "vector sum (hgx8)"
oshrun -np 8 --sim hgx8 --json "$dir/ring" | row "ring (hgx8)"
oshrun -np 4 --sim hgx8 --json "$dir/matmul" | row "matmul 1024^3, mapped loads (hgx8)"
oshrun -np 4 --sim hgx8 --json "$dir/matmul_small" | row "matmul ${s}^3, mapped loads (hgx8)"
oshrun -np 4 --sim hgx8 --exact --json "$dir/matmul_small" | row "matmul ${s}^3, --exact (hgx8)"
