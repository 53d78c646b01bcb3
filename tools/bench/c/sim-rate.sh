#!/usr/bin/env bash
# The simulator's speed for C programs, beside the Rust API's on the same simulator, in one
# run: SHMEM calls per wall second of tools/bench/c/sim_rate.c at 8 PEs of hgx8 (each call
# kind), the built-in msg-rate workload (Rust) at 8 PEs, and a run of 1024 PEs on ib-128 with
# its peak memory. Prints a Markdown table (BENCHMARKS.md).
#
#   tools/bench/c/sim-rate.sh [CALLS_PER_PE]
set -euo pipefail
cd "$(dirname "$0")/../../.."
calls=${1:-100000}
cargo build --release -q -p rshmem-capi -p tools
export PATH="$PWD/tools/osh/bin:$PATH"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
oshcc -O2 tools/bench/c/sim_rate.c -o "$dir/sim_rate"

# Prints one row from the --json report on stdin: what, PEs, calls, wall, calls/s, memory.
row() {
    python3 -c '
import json, sys
what, calls_per_pe = sys.argv[1], int(sys.argv[2])
r = json.loads(sys.stdin.read().strip().splitlines()[-1])
assert r["ok"], r["failures"]
# A quiet every 64 calls is a call too (sim_rate.c).
calls = r["pes"] * (calls_per_pe + calls_per_pe // 64) if calls_per_pe else r["ops"]
rate = calls / r["wall_s"] / 1e6
rss = r.get("process_rss_bytes_peak", 0) // 2**20
print("| %s | %d | %d | %.3f | %.2f | %d |" % (what, r["pes"], calls, r["wall_s"], rate, rss))
' "$@"
}

echo "| program | PEs | SHMEM calls | wall s | M calls per wall s | peak RSS MiB |"
echo "|---|---|---|---|---|---|"
for kind in p g fadd put; do
    oshrun -np 8 --sim hgx8 --json "$dir/sim_rate" "$calls" "$kind" | row "C sim_rate $kind (hgx8)" "$calls"
done
target/release/rshmem run msg-rate --pes 8 --topology hgx8 --json | row "Rust msg-rate (hgx8; ops)" 0
small=$((calls / 100))
oshrun -np 1024 --sim ib-128 --json "$dir/sim_rate" "$small" p | row "C sim_rate p (ib-128)" "$small"
