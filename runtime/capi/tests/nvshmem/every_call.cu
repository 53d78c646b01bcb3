/*
 * Every call of nvshmem.h built by nvcc: every_call.c's calls on the host and in a kernel, and
 * the device's _warp and _block forms and the collective launch. Compiled, not run, by
 * runtime/capi/tests/nvshmem.rs.
 */
#include "every_call.c"

__global__ void every_device_call(void *sym, uint64_t *sig, size_t *indices, const int *status) {
    every_common_call(sym, sig, indices, status);
    int pe = 0;
    nvshmem_team_t team = NVSHMEM_TEAM_WORLD;
#define SCOPED(SCOPE)                                                                              \
    nvshmemx_putmem_##SCOPE(sym, sym, 8, pe);                                                      \
    nvshmemx_getmem_nbi_##SCOPE(sym, sym, 8, pe);                                                  \
    nvshmemx_int_put_##SCOPE((int *)sym, (int *)sym, 1, pe);                                       \
    nvshmemx_float_get_nbi_##SCOPE((float *)sym, (float *)sym, 1, pe);                             \
    nvshmemx_put128_##SCOPE(sym, sym, 1, pe);                                                      \
    nvshmemx_get32_nbi_##SCOPE(sym, sym, 1, pe);                                                   \
    nvshmemx_putmem_signal_##SCOPE(sym, sym, 8, sig, 1, NVSHMEM_SIGNAL_ADD, pe);                   \
    nvshmemx_long_put_signal_nbi_##SCOPE((long *)sym, (long *)sym, 1, sig, 1, NVSHMEM_SIGNAL_SET, pe); \
    nvshmemx_put16_signal_##SCOPE(sym, sym, 1, sig, 1, NVSHMEM_SIGNAL_SET, pe);                    \
    nvshmemx_barrier_all_##SCOPE();                                                                \
    nvshmemx_sync_all_##SCOPE();                                                                   \
    nvshmemx_barrier_##SCOPE(team);                                                                \
    nvshmemx_team_sync_##SCOPE(team);                                                              \
    nvshmemx_fence_##SCOPE();                                                                      \
    nvshmemx_quiet_##SCOPE();                                                                      \
    nvshmemx_int_broadcast_##SCOPE(team, (int *)sym, (int *)sym, 1, 0);                            \
    nvshmemx_int_fcollect_##SCOPE(team, (int *)sym, (int *)sym, 1);                                \
    nvshmemx_alltoallmem_##SCOPE(team, sym, sym, 8);                                               \
    nvshmemx_double_max_reduce_##SCOPE(team, (double *)sym, (double *)sym, 1);                     \
    nvshmemx_uint64_xor_reduce_##SCOPE(team, (uint64_t *)sym, (uint64_t *)sym, 1);
    SCOPED(warp)
    SCOPED(block)
}

int main(void) {
    nvshmem_init();
    every_host_call();
    void *sym = nvshmem_malloc(64);
    uint64_t *sig = (uint64_t *)nvshmem_calloc(1, sizeof(uint64_t));
    size_t *indices = (size_t *)nvshmem_malloc(2 * sizeof(size_t));
    int *status = (int *)nvshmem_calloc(2, sizeof(int));
    void *args[] = {&sym, &sig, &indices, &status};
    int grid = 0;
    nvshmemx_collective_launch_query_gridsize((const void *)every_device_call, dim3(32), args, 0, &grid);
    nvshmemx_collective_launch((const void *)every_device_call, dim3(1), dim3(32), args, 0, 0);
    every_device_call<<<1, 32>>>(sym, sig, indices, status);
    cudaDeviceSynchronize();
    nvshmem_finalize();
    return 0;
}
