#!/usr/bin/env bash
# The network path of PEs as processes (docs/multi-node.md) beside raw libfabric, in one run,
# over one provider (FI_PROVIDER, default tcp;ofi_rxm):
#   - ofi/raw_rma.c: fi_write, fi_read and atomics between two processes that poll libfabric
#     all the time (the floor);
#   - ofi/shmem_rma.c: the same measurements through OpenSHMEM (built with oshcc), at 2 PEs on
#     two nodes of the Slurm that SLURM_CONF names (tools/launch/slurm-one-host.sh), else on
#     this node with every peer forced onto libfabric (RSHMEM_TRANSPORT=ofi); twice: with the
#     progress thread waiting for the provider's descriptor between polls (at most 1 ms,
#     RSHMEM_OFI_PROGRESS_US=1000, the default where a node has fewer than two cores per PE)
#     and polling (RSHMEM_OFI_PROGRESS_US=0, the default elsewhere).
# ROUNDS times (default 5), the three runs interleaved so that a change in the machine's load
# falls on all of them; each cell is the median of its rounds. Prints one table with the
# ratios of the medians (time: rshmem / raw, above 1 is slower; bandwidth: rshmem as a share of
# raw).
#
#   ROUNDS=5 tools/bench/ofi.sh     (needs libfabric-dev, a C compiler, and libshmem: it builds it)
set -euo pipefail
cd "$(dirname "$0")/../.."
export FI_PROVIDER=${FI_PROVIDER:-tcp;ofi_rxm}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
[ -e target/release/libshmem.so ] || cargo build --release -p rshmem-capi
[ -e target/release/rshmem ] || cargo build --release -p tools --bin rshmem
cc -O2 tools/bench/ofi/raw_rma.c -o "$out/raw_rma" -lfabric
tools/osh/bin/oshcc -O2 tools/bench/ofi/shmem_rma.c -o "$out/shmem_rma"

rounds=${ROUNDS:-5}
if [ -n "${SLURM_CONF:-}" ] && sinfo -h >/dev/null 2>&1; then
    where="2 PEs on two Slurm nodes (srun -N 2 -n 2 --mpi=pmix)"
    launch() { srun -N 2 -n 2 --mpi=pmix "$@"; }
else
    where="2 PEs on one node, every peer on libfabric (RSHMEM_TRANSPORT=ofi rshmem run -n 2)"
    launch() { RSHMEM_TRANSPORT=ofi target/release/rshmem run -n 2 "$@"; }
fi
for round in $(seq "$rounds"); do
    "$out/raw_rma" > "$out/raw.$round.txt"
    RSHMEM_OFI_PROGRESS_US=1000 launch "$out/shmem_rma" > "$out/waiting.$round.txt"
    RSHMEM_OFI_PROGRESS_US=0 launch "$out/shmem_rma" > "$out/polling.$round.txt"
done

echo "provider $FI_PROVIDER; rshmem: $where; medians of $rounds rounds"
echo "rshmem's progress thread: waiting for the provider's descriptor (RSHMEM_OFI_PROGRESS_US=1000) | polling (RSHMEM_OFI_PROGRESS_US=0)"
echo
echo "| bytes | raw put µs | put µs | × raw | put µs, polling | × raw | raw get µs | get µs | × raw | get µs, polling | × raw | raw MB/s | MB/s | of raw | MB/s, polling | of raw |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
awk '
    # Lines "X: SIZE B: put P us, get G us, streamed put M MB/s", "X: fetch_add T us",
    # "X: add rate R M/s", "X: barrier T us"; FILENAME (RUN.ROUND.txt) tells the run.
    function keep(what, size, value,   k) {
        k = run SUBSEP what SUBSEP size
        values[k, ++count[k]] = value
    }
    # The median of what the rounds of RUN measured of WHAT at SIZE.
    function m(run, what, size,   k, n, i, j, a, t) {
        k = run SUBSEP what SUBSEP size; n = count[k]
        for (i = 1; i <= n; i++) a[i] = values[k, i]
        for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    {
        run = FILENAME; sub(/.*\//, "", run); sub(/\..*$/, "", run)
        if ($3 == "B:") {
            size = $2; keep("put", size, $5); keep("get", size, $8); keep("mb", size, $12)
            if (!(size in seen)) { seen[size] = 1; order[++n] = size }
        }
        else if ($2 == "fetch_add") keep("fadd", 0, $3)
        else if ($2 == "add") keep("rate", 0, $4)
        else if ($2 == "barrier") keep("barrier", 0, $3)
    }
    END {
        for (i = 1; i <= n; i++) {
            s = order[i]
            printf "| %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.0f | %.0f | %.0f%% | %.0f | %.0f%% |\n", s,
                m("raw", "put", s), m("waiting", "put", s), m("waiting", "put", s) / m("raw", "put", s), m("polling", "put", s), m("polling", "put", s) / m("raw", "put", s),
                m("raw", "get", s), m("waiting", "get", s), m("waiting", "get", s) / m("raw", "get", s), m("polling", "get", s), m("polling", "get", s) / m("raw", "get", s),
                m("raw", "mb", s), m("waiting", "mb", s), 100 * m("waiting", "mb", s) / m("raw", "mb", s), m("polling", "mb", s), 100 * m("polling", "mb", s) / m("raw", "mb", s)
        }
        printf "\n| | raw | rshmem | × raw | rshmem, polling | × raw |\n|---|---:|---:|---:|---:|---:|\n"
        printf "| 64-bit fetch-add µs | %.1f | %.1f | %.1f | %.1f | %.1f |\n", m("raw", "fadd", 0), m("waiting", "fadd", 0), m("waiting", "fadd", 0) / m("raw", "fadd", 0), m("polling", "fadd", 0), m("polling", "fadd", 0) / m("raw", "fadd", 0)
        printf "| 64-bit add, M/s | %.3f | %.3f | %.2f | %.3f | %.2f |\n", m("raw", "rate", 0), m("waiting", "rate", 0), m("waiting", "rate", 0) / m("raw", "rate", 0), m("polling", "rate", 0), m("polling", "rate", 0) / m("raw", "rate", 0)
        printf "| barrier µs | - | %.1f | - | %.1f | - |\n", m("waiting", "barrier", 0), m("polling", "barrier", 0)
    }
' "$out"/raw.*.txt "$out"/waiting.*.txt "$out"/polling.*.txt
