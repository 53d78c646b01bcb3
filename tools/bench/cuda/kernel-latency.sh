#!/usr/bin/env bash
# Device-initiated latency over NVLink and over the network path (the kernel proxy), from one
# invocation, on a GPU machine with nvcc: DIR holds the binaries tools/gpu/build.sh made.
#
#   tools/bench/cuda/kernel-latency.sh [DIR]      (default .devbin; 2 PEs sharing the GPUs there are)
#
# Prints kernel_latency.cu's lines twice: PEs of one node (loads and stores), then every peer on
# the network path over tcp;ofi_rxm on loopback (RSHMEM_TRANSPORT=ofi).
set -euo pipefail
cd "$(dirname "$0")/../../.."
bin=$(realpath "${1:-.devbin}")
out=$(mktemp -d)
nvcc -rdc=true -arch="${NVSHMEM_ARCH:-sm_90}" -O2 -I runtime/capi/include -L "$bin" \
    -o "$out/kernel_latency" tools/bench/cuda/kernel_latency.cu -lshmem -lcuda
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! ldconfig -p | grep -q 'libfabric.so.1 ' && [ -d "$bin/ofi" ]; then
    export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$bin/ofi"
fi
echo "# one node (NVLink or a shared GPU)"
"$bin/rshmem" oshrun -np 2 --gpu --share-gpus --timeout-s 120 "$out/kernel_latency"
echo "# network path (RSHMEM_TRANSPORT=ofi, FI_PROVIDER=tcp;ofi_rxm)"
RSHMEM_TRANSPORT=ofi FI_PROVIDER='tcp;ofi_rxm' \
    "$bin/rshmem" oshrun -np 2 --gpu --share-gpus --timeout-s 120 "$out/kernel_latency"
