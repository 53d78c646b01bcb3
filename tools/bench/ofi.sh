#!/usr/bin/env bash
# The network path of PEs as processes (RSHMEM_TRANSPORT=ofi, docs/multi-node.md) beside raw
# libfabric, in one run over loopback and one provider (tcp;ofi_rxm): libfabric's own
# fi_pingpong (Debian's libfabric-bin) between two processes, then the process backend's
# measurement `cost_over_libfabric` (hw/tests/process.rs) at 2 PEs. Prints one table: per size,
# fi_pingpong's round trip (twice its usec/xfer, as a put that waits for its delivery is a
# round trip), rshmem's put and get, and the ratios (above 1: rshmem is slower).
#
#   tools/bench/ofi.sh            (needs libfabric-bin; builds the test in release)
set -euo pipefail
cd "$(dirname "$0")/../.."
provider="tcp;ofi_rxm"
command -v fi_pingpong >/dev/null || { echo "ofi.sh: needs fi_pingpong (apt-get install libfabric-bin)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

fi_pingpong -p "$provider" -e rdm -I 1000 -S all > "$out/server.txt" 2>&1 &
server=$!
sleep 0.5
fi_pingpong -p "$provider" -e rdm -I 1000 -S all 127.0.0.1 > "$out/raw.txt" 2>&1
wait "$server" || true

cargo test --release -p hw --features process --test process cost_over_libfabric \
    -- --ignored --nocapture 2>/dev/null | grep '^measured:' > "$out/rshmem.txt"

echo "| bytes | fi_pingpong round trip µs | rshmem put µs | put / raw | rshmem get µs | get / raw | fi_pingpong MB/s | rshmem put MB/s |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
awk '
    # fi_pingpong writes sizes as 4k, 1m: back to bytes.
    function bytes(s) {
        if (s ~ /k$/) return substr(s, 1, length(s) - 1) * 1024
        if (s ~ /m$/) return substr(s, 1, length(s) - 1) * 1048576
        return s
    }
    FNR == NR { if ($1 ~ /^[0-9.]+[km]?$/) { b = bytes($1); raw_us[b] = 2 * $7; raw_mb[b] = $6 } ; next }
    /B: put/ {
        size = $2; put = $5; get = $10; put_mb = $7
        gsub(/[()]/, "", put_mb)
        if (size in raw_us) {
            printf "| %s | %.1f | %.1f | %.1fx | %.1f | %.1fx | %s | %s |\n", size, raw_us[size], put, put / raw_us[size], get, get / raw_us[size], raw_mb[size], put_mb
        } else {
            printf "| %s | - | %.1f | - | %.1f | - | - | %s |\n", size, put, get, put_mb
        }
    }
    /fetch_add/ { amo = $4 }
    END { if (amo != "") printf "\nrshmem 64-bit fetch_add: %s µs\n", amo }
' "$out/raw.txt" "$out/rshmem.txt"
