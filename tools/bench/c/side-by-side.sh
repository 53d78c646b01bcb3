#!/bin/sh
# side-by-side.sh: build osh_bench.c with rshmem's oshcc and with Open MPI's, run both at 2
# and 4 PEs on this machine, and print one markdown table (docs/c-bench.md).
#
# Usage: tools/bench/c/side-by-side.sh [--reps N] [--pes "2 4"]
#
# rshmem's side is built from this checkout (cargo build --release -p tools -p rshmem-capi);
# Open MPI's is Debian's (apt-get install openmpi-bin libopenmpi-dev, done here when missing
# and run as root). Open MPI runs with the settings that make Debian's 4.1 work on one node:
# OMPI_MCA_osc=^rdma (its osc/rdma crashes at exit), UCX over shared memory only, loopback
# for its own out-of-band traffic, and --allow-run-as-root --oversubscribe.
#
# The ratio is rshmem / Open MPI for latencies and Open MPI / rshmem for rates, so that in
# every row below 1 means rshmem is better. Raw outputs are left in target/osh-bench/.
set -eu

reps=5
pes="2 4"
while [ $# -gt 0 ]; do
    case $1 in
        --reps) reps=$2; shift 2 ;;
        --pes) pes=$2; shift 2 ;;
        -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "side-by-side.sh: unknown argument $1; see --help" >&2; exit 2 ;;
    esac
done

here=$(dirname "$(readlink -f "$0")")
root=$(cd "$here/../../.." && pwd)
out=$root/target/osh-bench
mkdir -p "$out"

if [ ! -x /usr/bin/oshcc ] || [ ! -x /usr/bin/oshrun ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "side-by-side.sh: Open MPI is not installed: apt-get install -y openmpi-bin libopenmpi-dev" >&2
        exit 2
    fi
    echo "installing Open MPI (openmpi-bin libopenmpi-dev)" >&2
    apt-get install -y -qq openmpi-bin libopenmpi-dev >&2
fi

echo "building rshmem (cargo build --release -p tools -p rshmem-capi)" >&2
(cd "$root" && cargo build --release -q -p tools -p rshmem-capi) >&2
"$root/tools/osh/bin/oshcc" -O2 -o "$out/osh_bench_rshmem" "$here/osh_bench.c"
/usr/bin/oshcc -O2 -o "$out/osh_bench_openmpi" "$here/osh_bench.c"

for np in $pes; do
    echo "running at $np PEs: rshmem" >&2
    "$root/tools/osh/bin/oshrun" -np "$np" --timeout-s 900 "$out/osh_bench_rshmem" "$reps" \
        >"$out/rshmem.$np.txt"
    echo "running at $np PEs: Open MPI" >&2
    OMPI_MCA_osc=^rdma UCX_TLS=self,sm OMPI_MCA_oob_tcp_if_include=lo \
        /usr/bin/oshrun --allow-run-as-root --oversubscribe -np "$np" \
        "$out/osh_bench_openmpi" "$reps" >"$out/openmpi.$np.txt"
done

# One row per metric, size and PE count, in the order the bench prints them.
echo "| metric | size (B) | PEs | rshmem | Open MPI | ratio (< 1: rshmem better) |"
echo "|---|---:|---:|---:|---:|---:|"
for np in $pes; do
    awk -v np="$np" '
        FNR == NR { ompi[$1 " " $2] = $3; next }
        {
            key = $1 " " $2
            o = (key in ompi) ? ompi[key] : ""
            ratio = "-"
            if (o != "" && o > 0 && $3 > 0)
                ratio = sprintf("%.2f", $4 == "us" ? $3 / o : o / $3)
            printf "| %s | %s | %s | %s %s | %s %s | %s |\n", $1, $2, np, $3, $4, o, $4, ratio
        }' "$out/openmpi.$np.txt" "$out/rshmem.$np.txt"
done
