/*
 * The device primitives that code built by rshmem-nvcc for the simulator runs inline: a `g`
 * of a PE whose memory the simulator lets kernels load directly (its own, or an NVLink or PCIe
 * peer's, unless the run is --exact or under the race detector) is a plain load through the
 * running PE's table of mapped heaps, counted for the PE's clock; any other `g` is a get
 * operation of libshmem (rshmemd_g_op). See docs/nvshmem-programs.md.
 */
#ifndef RSHMEM_DEVICE_SIM_H
#define RSHMEM_DEVICE_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct rsim_mapped_heap {
    uint64_t local_base;
    uint64_t len_bytes;
    const uint64_t *peer_base; /* per PE; 0: loads are operations */
};

struct rsim_mapped {
    uint32_t n_heaps;
    uint32_t n_pes;
    struct rsim_mapped_heap heaps[4];
    uint64_t *peer_bytes;
    uint64_t loaded_bytes;
};

extern "C" __device__ struct rsim_mapped *__rsim_mapped;
extern "C" __device__ void rshmemd_g_op(void *out, const void *src, int type, int pe);

static __device__ __forceinline__ void rshmemd_g(void *out, const void *src, int type, int pe) {
    struct rsim_mapped *table = __rsim_mapped;
    size_t size = (size_t)(type & 0xff);
    if (table && (unsigned)pe < table->n_pes) {
        for (uint32_t h = 0; h < table->n_heaps; h++) {
            const struct rsim_mapped_heap *heap = &table->heaps[h];
            uint64_t offset = (uint64_t)(uintptr_t)src - heap->local_base;
            if (offset < heap->len_bytes && size <= heap->len_bytes - offset) {
                uint64_t base = heap->peer_base[pe];
                if (base != 0) {
                    memcpy(out, (const void *)(uintptr_t)(base + offset), size);
                    table->peer_bytes[pe] += size;
                    table->loaded_bytes += size;
                    return;
                }
                break;
            }
        }
    }
    rshmemd_g_op(out, src, type, pe);
}

#endif
