/*
 * NVSHMEM names with no meaning on rshmem, declared so that a call is a compile-time error that
 * says why, never a silently wrong result (docs/nvshmem-api.md lists them).
 *
 * clang and GCC 12 or later (nvcc's usual host compilers) have `unavailable`; older GCC has
 * `error`, which fails the build at a call that is not optimised away.
 */
#ifndef RSHMEM_NVSHMEM_REFUSED_H
#define RSHMEM_NVSHMEM_REFUSED_H

#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
#define NVSHMEMI_REFUSED(why) __attribute__((unavailable("rshmem: " why)))
#elif defined(__GNUC__)
#define NVSHMEMI_REFUSED(why) __attribute__((error("rshmem: " why)))
#else
#define NVSHMEMI_REFUSED(why)
#endif

#define NVSHMEMI_NO_NVLS "NVLink SHARP multicast objects do not exist here; use nvshmem_ptr for a peer's copy"
#define NVSHMEMI_NO_REGISTRATION                                                                   \
    "buffers outside the symmetric heap are not registered; allocate with nvshmem_malloc"
#define NVSHMEMI_NO_CUMODULE                                                                       \
    "kernels are compiled into the program with rshmem/device_gpu.cuh, whose state libshmem binds at "   \
    "nvshmem_init; CUmodule loading is not supported"

#define NVSHMEMI_NO_SMEM                                                                           \
    "the shared-memory staging calls of recent NVSHMEM releases (nvshmemx_ask_smem, give_smem, "         \
    "release_smem, signal_counted) are not provided; put from global or shared memory with "          \
    "nvshmemx_putmem_signal_nbi_block and wait with nvshmem_signal_wait_until"
/* Device-only names are refused in device code too. */
#ifdef __CUDACC__
#define NVSHMEMI_REFUSED_HD __host__ __device__
#else
#define NVSHMEMI_REFUSED_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif
NVSHMEMI_REFUSED(NVSHMEMI_NO_SMEM) extern const int nvshmemi_refused_smem_amount;
#define NVSHMEMX_SMEM_BARRIERS_ONLY nvshmemi_refused_smem_amount
#define NVSHMEMX_SMEM_RECOMMENDED nvshmemi_refused_smem_amount
NVSHMEMI_REFUSED(NVSHMEMI_NO_SMEM) NVSHMEMI_REFUSED_HD int nvshmemx_ask_smem(int amount);
NVSHMEMI_REFUSED(NVSHMEMI_NO_SMEM) NVSHMEMI_REFUSED_HD void nvshmemx_give_smem(void *smem, size_t bytes);
NVSHMEMI_REFUSED(NVSHMEMI_NO_SMEM) NVSHMEMI_REFUSED_HD void nvshmemx_release_smem(void);
NVSHMEMI_REFUSED(NVSHMEMI_NO_SMEM)
NVSHMEMI_REFUSED_HD int nvshmemx_putmem_signal_counted_nbi_block(void *dest, const void *source, size_t bytes,
                                                                 uint64_t *counter, int pe);
NVSHMEMI_REFUSED(NVSHMEMI_NO_SMEM) NVSHMEMI_REFUSED_HD void nvshmemx_signal_counted_wait_until(uint64_t *counter,
                                                                                                uint64_t bytes);
NVSHMEMI_REFUSED(NVSHMEMI_NO_SMEM) NVSHMEMI_REFUSED_HD void nvshmemx_signal_counted_reset(uint64_t *counter);
NVSHMEMI_REFUSED(NVSHMEMI_NO_NVLS) void *nvshmemx_mc_ptr(nvshmem_team_t team, const void *ptr);
NVSHMEMI_REFUSED(NVSHMEMI_NO_REGISTRATION) int nvshmemx_buffer_register(void *addr, size_t length);
NVSHMEMI_REFUSED(NVSHMEMI_NO_REGISTRATION) int nvshmemx_buffer_unregister(void *addr);
NVSHMEMI_REFUSED(NVSHMEMI_NO_REGISTRATION) void nvshmemx_buffer_unregister_all(void);
NVSHMEMI_REFUSED(NVSHMEMI_NO_CUMODULE) int nvshmemx_cumodule_init(void *module);
NVSHMEMI_REFUSED(NVSHMEMI_NO_CUMODULE) int nvshmemx_cumodule_finalize(void *module);
NVSHMEMI_REFUSED(NVSHMEMI_NO_CUMODULE) int nvshmemx_culibrary_init(void *library);
NVSHMEMI_REFUSED(NVSHMEMI_NO_CUMODULE) int nvshmemx_culibrary_finalize(void *library);
NVSHMEMI_REFUSED("the bootstrap is the launcher's (oshrun): there is no host library to initialise apart")
int nvshmemx_hostlib_init_attr(unsigned int flags, nvshmemx_init_attr_t *attr);
NVSHMEMI_REFUSED("the bootstrap is the launcher's (oshrun): there is no host library to finalise apart")
void nvshmemx_hostlib_finalize(void);

/* Predefined teams this library does not form: the names stand for refused objects, so that a
 * use is a compile-time error saying why rather than a handle to another team. */
NVSHMEMI_REFUSED("NVSHMEMX_TEAM_SAME_MYPE_NODE (the PEs of every node with my node-local number) is not formed; "
                 "split it with nvshmem_team_split_strided from NVSHMEM_TEAM_WORLD")
extern const nvshmem_team_t nvshmemi_refused_team_same_mype_node;
#define NVSHMEMX_TEAM_SAME_MYPE_NODE nvshmemi_refused_team_same_mype_node
NVSHMEMI_REFUSED("NVSHMEM_TEAM_MC_SHARED needs NVLink SHARP multicast, which does not exist here; use "
                 "NVSHMEM_TEAM_SHARED")
extern const nvshmem_team_t nvshmemi_refused_team_mc_shared;
#define NVSHMEM_TEAM_MC_SHARED nvshmemi_refused_team_mc_shared
#ifdef __cplusplus
}
#endif

#endif
