#!/usr/bin/env bash
# The network path of PEs as processes (docs/multi-node.md) beside raw libfabric, in one run,
# over one provider (FI_PROVIDER, default tcp;ofi_rxm):
#   - ofi/raw_rma.c: fi_write, fi_read and atomics between two processes that poll libfabric
#     all the time (the floor);
#   - ofi/shmem_rma.c: the same measurements through OpenSHMEM (built with oshcc), at 2 PEs on
#     two nodes of the Slurm that SLURM_CONF names (tools/launch/slurm-one-host.sh), else on
#     this node with every peer forced onto libfabric (RSHMEM_TRANSPORT=ofi); twice: with the
#     default progress thread (a poll every 20 µs) and with RSHMEM_OFI_PROGRESS_US=0 (polling).
# Prints one table with the ratios (time: rshmem / raw, above 1 is slower; bandwidth: rshmem
# as a share of raw).
#
#   tools/bench/ofi.sh     (needs libfabric-dev, a C compiler, and libshmem: it builds it)
set -euo pipefail
cd "$(dirname "$0")/../.."
export FI_PROVIDER=${FI_PROVIDER:-tcp;ofi_rxm}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
[ -e target/release/libshmem.so ] || cargo build --release -p rshmem-capi
[ -e target/release/rshmem ] || cargo build --release -p tools --bin rshmem
cc -O2 tools/bench/ofi/raw_rma.c -o "$out/raw_rma" -lfabric
tools/osh/bin/oshcc -O2 tools/bench/ofi/shmem_rma.c -o "$out/shmem_rma"

"$out/raw_rma" > "$out/raw.txt"
if [ -n "${SLURM_CONF:-}" ] && sinfo -h >/dev/null 2>&1; then
    where="2 PEs on two Slurm nodes (srun -N 2 -n 2 --mpi=pmix)"
    launch() { srun -N 2 -n 2 --mpi=pmix "$@"; }
else
    where="2 PEs on one node, every peer on libfabric (RSHMEM_TRANSPORT=ofi rshmem run -n 2)"
    launch() { RSHMEM_TRANSPORT=ofi target/release/rshmem run -n 2 "$@"; }
fi
RSHMEM_OFI_PROGRESS_US=20 launch "$out/shmem_rma" > "$out/sleeping.txt"
RSHMEM_OFI_PROGRESS_US=0 launch "$out/shmem_rma" > "$out/polling.txt"

echo "provider $FI_PROVIDER; rshmem: $where"
echo "rshmem's progress thread: sleeping (a poll every 20 µs, the default) | polling (RSHMEM_OFI_PROGRESS_US=0)"
echo
echo "| bytes | raw put µs | put µs | × raw | put µs, polling | × raw | raw get µs | get µs | × raw | get µs, polling | × raw | raw MB/s | MB/s | of raw | MB/s, polling | of raw |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
awk '
    # Lines "X: SIZE B: put P us, get G us, streamed put M MB/s", "X: fetch_add T us",
    # "X: add rate R M/s", "X: barrier T us"; FILENAME tells the run.
    {
        run = FILENAME; sub(/.*\//, "", run); sub(/\.txt$/, "", run)
        if ($3 == "B:") {
            size = $2; put[run, size] = $5; get[run, size] = $8; mb[run, size] = $12
            if (!(size in seen)) { seen[size] = 1; order[++n] = size }
        }
        else if ($2 == "fetch_add") fadd[run] = $3
        else if ($2 == "add") rate[run] = $4
        else if ($2 == "barrier") barrier[run] = $3
    }
    END {
        for (i = 1; i <= n; i++) {
            s = order[i]
            printf "| %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f | %.0f | %.0f%% | %.0f | %.0f%% |\n", s,
                put["raw", s], put["sleeping", s], put["sleeping", s] / put["raw", s], put["polling", s], put["polling", s] / put["raw", s],
                get["raw", s], get["sleeping", s], get["sleeping", s] / get["raw", s], get["polling", s], get["polling", s] / get["raw", s],
                mb["raw", s], mb["sleeping", s], 100 * mb["sleeping", s] / mb["raw", s], mb["polling", s], 100 * mb["polling", s] / mb["raw", s]
        }
        printf "\n| | raw | rshmem | × raw | rshmem, polling | × raw |\n|---|---:|---:|---:|---:|---:|\n"
        printf "| 64-bit fetch-add µs | %.1f | %.1f | %.1f | %.1f | %.1f |\n", fadd["raw"], fadd["sleeping"], fadd["sleeping"] / fadd["raw"], fadd["polling"], fadd["polling"] / fadd["raw"]
        printf "| 64-bit add, M/s | %.3f | %.3f | %.2f | %.3f | %.2f |\n", rate["raw"], rate["sleeping"], rate["sleeping"] / rate["raw"], rate["polling"], rate["polling"] / rate["raw"]
        printf "| barrier µs | - | %.1f | - | %.1f | - |\n", barrier["sleeping"], barrier["polling"]
    }
' "$out/raw.txt" "$out/sleeping.txt" "$out/polling.txt"
