/*
 * NVSHMEM's barriers, team synchronisation, collectives and collective launch, for nvshmem.h.
 *
 * Device side: rshmemd_barrier / rshmemd_sync / rshmemd_collective at the caller's scope
 * (plain: one thread of the PE; _warp, _block: every thread of the group). Host side: libshmem's
 * team collectives on the shmem_team_t that the NVSHMEM handle maps to; `_on_stream` forms
 * use libshmem's on-stream calls where it has them, else wait for the stream and run on the
 * host (a blocking collective is then done before the stream's later work is enqueued).
 */
#ifndef RSHMEM_NVSHMEM_COLL_H
#define RSHMEM_NVSHMEM_COLL_H

/* ---- Barriers and synchronisation ------------------------------------------------------------ */

/* On the GPU the barriers and collectives take the name of the program's function that called
 * them (NVSHMEMI_CALLER), which a wait of theirs past RSHMEM_WAIT_TIMEOUT_MS reports with the
 * call's name; elsewhere the device ABI's forms run. NVSHMEMI_COLL_DEVICE is one collective on
 * the device at SCOPE, in a function whose parameters are NVSHMEM's names. */
#ifdef NVSHMEMI_HAVE_CALLER
#define NVSHMEMI_BARRIER(TEAM, SCOPE, NAME) rshmemd_gpu_barrier(TEAM, SCOPE, NAME, nvshmemi_caller)
#define NVSHMEMI_SYNC(TEAM, SCOPE, NAME) rshmemd_gpu_barrier(TEAM, SCOPE, NAME, nvshmemi_caller)
#define NVSHMEMI_COLL_DEVICE(KIND, TYPE, TYPE_CODE, OP, ROOT, SCOPE)                               \
    rshmemd_gpu_collective(KIND, team, dest, source, nelems, TYPE_CODE, OP, ROOT, SCOPE, nvshmemi_caller)
#else
#define NVSHMEMI_BARRIER(TEAM, SCOPE, NAME) rshmemd_barrier(TEAM, SCOPE)
#define NVSHMEMI_SYNC(TEAM, SCOPE, NAME) rshmemd_sync(TEAM, SCOPE)
#define NVSHMEMI_COLL_DEVICE(KIND, TYPE, TYPE_CODE, OP, ROOT, SCOPE)                               \
    rshmemd_collective(KIND, team, dest, source, nelems, TYPE_CODE, OP, ROOT, SCOPE)
#endif

NVSHMEMI_HD void nvshmem_barrier_all(NVSHMEMI_CALLER_ALONE) {
    NVSHMEMI_PICK(NVSHMEMI_BARRIER(RSHMEMD_TEAM_WORLD, RSHMEMD_SCOPE_THREAD, "nvshmem_barrier_all"),
                  shmem_barrier_all());
}
NVSHMEMI_HD void nvshmem_sync_all(NVSHMEMI_CALLER_ALONE) {
    NVSHMEMI_PICK(NVSHMEMI_SYNC(RSHMEMD_TEAM_WORLD, RSHMEMD_SCOPE_THREAD, "nvshmem_sync_all"), shmem_sync_all());
}
/* A barrier is quiet then the team's synchronisation. */
NVSHMEMI_HD int nvshmem_barrier(nvshmem_team_t team NVSHMEMI_CALLER) {
#ifdef __CUDA_ARCH__
    NVSHMEMI_BARRIER(team, RSHMEMD_SCOPE_THREAD, "nvshmem_barrier");
    return 0;
#else
    shmem_quiet();
    return shmem_team_sync(rshmemx_team_of_handle(team));
#endif
}
NVSHMEMI_HD int nvshmem_team_sync(nvshmem_team_t team NVSHMEMI_CALLER) {
#ifdef __CUDA_ARCH__
    NVSHMEMI_SYNC(team, RSHMEMD_SCOPE_THREAD, "nvshmem_team_sync");
    return 0;
#else
    return shmem_team_sync(rshmemx_team_of_handle(team));
#endif
}

#ifdef __CUDACC__
#define NVSHMEMI_BARRIER_SCOPED(SCOPE, SCOPE_CODE)                                                 \
    NVSHMEMI_D void nvshmemx_barrier_all_##SCOPE(NVSHMEMI_CALLER_ALONE) {                          \
        NVSHMEMI_BARRIER(RSHMEMD_TEAM_WORLD, SCOPE_CODE, "nvshmemx_barrier_all_" #SCOPE);           \
    }                                                                                              \
    NVSHMEMI_D void nvshmemx_sync_all_##SCOPE(NVSHMEMI_CALLER_ALONE) {                             \
        NVSHMEMI_SYNC(RSHMEMD_TEAM_WORLD, SCOPE_CODE, "nvshmemx_sync_all_" #SCOPE);                 \
    }                                                                                              \
    NVSHMEMI_D int nvshmemx_barrier_##SCOPE(nvshmem_team_t team NVSHMEMI_CALLER) {                 \
        NVSHMEMI_BARRIER(team, SCOPE_CODE, "nvshmemx_barrier_" #SCOPE);                            \
        return 0;                                                                                  \
    }                                                                                              \
    NVSHMEMI_D int nvshmemx_team_sync_##SCOPE(nvshmem_team_t team NVSHMEMI_CALLER) {               \
        NVSHMEMI_SYNC(team, SCOPE_CODE, "nvshmemx_team_sync_" #SCOPE);                             \
        return 0;                                                                                  \
    }                                                                                              \
    NVSHMEMI_D void nvshmemx_fence_##SCOPE(void) { rshmemd_fence(SCOPE_CODE); }                    \
    NVSHMEMI_D void nvshmemx_quiet_##SCOPE(void) { rshmemd_quiet(SCOPE_CODE); }
NVSHMEMI_BARRIER_SCOPED(warp, RSHMEMD_SCOPE_WARP)
NVSHMEMI_BARRIER_SCOPED(block, RSHMEMD_SCOPE_BLOCK)
#undef NVSHMEMI_BARRIER_SCOPED
#endif

/* On the GPU (nvcc), the on-stream barriers and collectives are kernels on the stream
 * (rshmem/stream_gpu.cuh); elsewhere, and on teams the kernels do not take, the host runs them
 * after the stream's work. */
#if defined(__CUDACC__) && !defined(RSHMEM_CUDA_SIM)
#include <rshmem/stream_gpu.cuh>
#define NVSHMEMI_STREAM_KERNEL(TEAM, LAUNCH)                                                        \
    if (rshmemd_stream_kernels_for(TEAM)) return LAUNCH;
#else
#define NVSHMEMI_STREAM_KERNEL(TEAM, LAUNCH)
#endif

#ifdef NVSHMEMI_HAVE_CUDART
static inline int nvshmemx_barrier_on_stream(nvshmem_team_t team, cudaStream_t stream) {
    NVSHMEMI_STREAM_KERNEL(team, rshmemd_stream_barrier(team, stream))
    if (team == NVSHMEM_TEAM_WORLD) {
        shmemx_barrier_all_on_stream(stream);
        return 0;
    }
    cudaStreamSynchronize(stream);
    return nvshmem_barrier(team);
}
/* A sync is a barrier here: the kernel's arrival is cheaper than telling the two apart. */
static inline int nvshmemx_team_sync_on_stream(nvshmem_team_t team, cudaStream_t stream) {
    NVSHMEMI_STREAM_KERNEL(team, rshmemd_stream_barrier(team, stream))
    if (team == NVSHMEM_TEAM_WORLD) {
        shmemx_sync_all_on_stream(stream);
        return 0;
    }
    cudaStreamSynchronize(stream);
    return nvshmem_team_sync(team);
}
static inline void nvshmemx_barrier_all_on_stream(cudaStream_t stream) {
    (void)nvshmemx_barrier_on_stream(NVSHMEM_TEAM_WORLD, stream);
}
static inline void nvshmemx_sync_all_on_stream(cudaStream_t stream) {
    (void)nvshmemx_team_sync_on_stream(NVSHMEM_TEAM_WORLD, stream);
}
#else
static inline void nvshmemx_barrier_all_on_stream(cudaStream_t stream) { shmemx_barrier_all_on_stream(stream); }
static inline void nvshmemx_sync_all_on_stream(cudaStream_t stream) { shmemx_sync_all_on_stream(stream); }
#endif

/* The collective as a kernel on the stream where NVSHMEMI_STREAM_KERNEL allows; PER_PE is how
 * many times `nelems` elements each PE reads. */
#define NVSHMEMI_STREAM_COLL(KIND, TYPE_CODE, OP, ROOT, PER_PE)                                     \
    NVSHMEMI_STREAM_KERNEL(team, rshmemd_stream_collective(KIND, team, dest, source, nelems, TYPE_CODE, OP, ROOT, \
                                                           (size_t)(PER_PE) * nelems * ((TYPE_CODE) & 0xff), stream))

/* ---- Collectives ------------------------------------------------------------------------------ */

/* HOST is libshmem's name for the type (shmem_HOSTbroadcast), HOST_TYPE its C type. */
#define NVSHMEMI_COLL_MOVE(NAME, MEM, TYPE, TYPE_CODE, HOST, HOST_TYPE)                          \
    NVSHMEMI_HD int nvshmem_##NAME##broadcast##MEM(nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems, \
                                               int PE_root NVSHMEMI_CALLER) {                                      \
        return NVSHMEMI_PICK(NVSHMEMI_COLL_DEVICE(RSHMEMD_COLL_BROADCAST, TYPE, TYPE_CODE, 0, PE_root, \
                                                  RSHMEMD_SCOPE_THREAD),                           \
                             shmem_##HOST##broadcast##MEM(rshmemx_team_of_handle(team), (HOST_TYPE *)dest, \
                                                          (const HOST_TYPE *)source, nelems, PE_root)); \
    }                                                                                              \
    NVSHMEMI_HD int nvshmem_##NAME##fcollect##MEM(nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems NVSHMEMI_CALLER) { \
        return NVSHMEMI_PICK(NVSHMEMI_COLL_DEVICE(RSHMEMD_COLL_FCOLLECT, TYPE, TYPE_CODE, 0, 0, RSHMEMD_SCOPE_THREAD), \
                             shmem_##HOST##fcollect##MEM(rshmemx_team_of_handle(team), (HOST_TYPE *)dest, \
                                                         (const HOST_TYPE *)source, nelems));      \
    }                                                                                              \
    NVSHMEMI_HD int nvshmem_##NAME##alltoall##MEM(nvshmem_team_t team, TYPE *dest, const TYPE *source, size_t nelems NVSHMEMI_CALLER) { \
        return NVSHMEMI_PICK(NVSHMEMI_COLL_DEVICE(RSHMEMD_COLL_ALLTOALL, TYPE, TYPE_CODE, 0, 0, RSHMEMD_SCOPE_THREAD), \
                             shmem_##HOST##alltoall##MEM(rshmemx_team_of_handle(team), (HOST_TYPE *)dest, \
                                                         (const HOST_TYPE *)source, nelems));      \
    }                                                                                              \
    NVSHMEMI_COLL_MOVE_ON_STREAM(NAME, MEM, TYPE, TYPE_CODE)                                            \
    NVSHMEMI_COLL_MOVE_SCOPED(NAME, MEM, TYPE, TYPE_CODE, warp, RSHMEMD_SCOPE_WARP)                     \
    NVSHMEMI_COLL_MOVE_SCOPED(NAME, MEM, TYPE, TYPE_CODE, block, RSHMEMD_SCOPE_BLOCK)

#ifdef __CUDACC__
#define NVSHMEMI_COLL_MOVE_SCOPED(NAME, MEM, TYPE, TYPE_CODE, SCOPE, SCOPE_CODE)                        \
    NVSHMEMI_D int nvshmemx_##NAME##broadcast##MEM##_##SCOPE(nvshmem_team_t team, TYPE *dest, const TYPE *source, \
                                                       size_t nelems, int PE_root NVSHMEMI_CALLER) {               \
        return NVSHMEMI_COLL_DEVICE(RSHMEMD_COLL_BROADCAST, TYPE, TYPE_CODE, 0, PE_root, SCOPE_CODE); \
    }                                                                                              \
    NVSHMEMI_D int nvshmemx_##NAME##fcollect##MEM##_##SCOPE(nvshmem_team_t team, TYPE *dest, const TYPE *source, \
                                                      size_t nelems NVSHMEMI_CALLER) {             \
        return NVSHMEMI_COLL_DEVICE(RSHMEMD_COLL_FCOLLECT, TYPE, TYPE_CODE, 0, 0, SCOPE_CODE);       \
    }                                                                                              \
    NVSHMEMI_D int nvshmemx_##NAME##alltoall##MEM##_##SCOPE(nvshmem_team_t team, TYPE *dest, const TYPE *source, \
                                                      size_t nelems NVSHMEMI_CALLER) {             \
        return NVSHMEMI_COLL_DEVICE(RSHMEMD_COLL_ALLTOALL, TYPE, TYPE_CODE, 0, 0, SCOPE_CODE);       \
    }
#else
#define NVSHMEMI_COLL_MOVE_SCOPED(NAME, MEM, TYPE, TYPE_CODE, SCOPE, SCOPE_CODE)
#endif

#ifdef NVSHMEMI_HAVE_CUDART
#define NVSHMEMI_COLL_MOVE_ON_STREAM(NAME, MEM, TYPE, TYPE_CODE)                                        \
    static inline int nvshmemx_##NAME##broadcast##MEM##_on_stream(nvshmem_team_t team, TYPE *dest, const TYPE *source, \
                                                            size_t nelems, int PE_root, cudaStream_t stream) { \
        NVSHMEMI_STREAM_COLL(RSHMEMD_COLL_BROADCAST, TYPE_CODE, 0, PE_root, 1)                       \
        cudaStreamSynchronize(stream);                                                             \
        return nvshmem_##NAME##broadcast##MEM(team, dest, source, nelems, PE_root);                    \
    }                                                                                              \
    static inline int nvshmemx_##NAME##fcollect##MEM##_on_stream(nvshmem_team_t team, TYPE *dest, const TYPE *source, \
                                                           size_t nelems, cudaStream_t stream) {   \
        NVSHMEMI_STREAM_COLL(RSHMEMD_COLL_FCOLLECT, TYPE_CODE, 0, 0, rshmemd_stream_team_n_pes(team)) \
        cudaStreamSynchronize(stream);                                                             \
        return nvshmem_##NAME##fcollect##MEM(team, dest, source, nelems);                              \
    }                                                                                              \
    static inline int nvshmemx_##NAME##alltoall##MEM##_on_stream(nvshmem_team_t team, TYPE *dest, const TYPE *source, \
                                                           size_t nelems, cudaStream_t stream) {   \
        NVSHMEMI_STREAM_COLL(RSHMEMD_COLL_ALLTOALL, TYPE_CODE, 0, 0, rshmemd_stream_team_n_pes(team)) \
        cudaStreamSynchronize(stream);                                                             \
        return nvshmem_##NAME##alltoall##MEM(team, dest, source, nelems);                              \
    }
#else
#define NVSHMEMI_COLL_MOVE_ON_STREAM(NAME, MEM, TYPE, TYPE_CODE)
#endif

/* Typed names are nvshmem_NAME_broadcast, byte ones nvshmem_broadcastmem. */
#define NVSHMEMI_COLL_MOVE_TYPED(NAME, TYPE, KIND)                                                 \
    NVSHMEMI_COLL_MOVE(NAME##_, , TYPE, NVSHMEMI_TYPE_CODE(TYPE, KIND), NAME##_, TYPE)
NVSHMEMI_RMA_TYPES(NVSHMEMI_COLL_MOVE_TYPED)
/* half and bfloat16 move as libshmem's 16-bit words. */
#define NVSHMEMI_COLL_MOVE_HALF(NAME, TYPE, KIND)                                                  \
    NVSHMEMI_COLL_MOVE(NAME##_, , TYPE, NVSHMEMI_TYPE_CODE(TYPE, KIND), uint16_, uint16_t)
NVSHMEMI_HALF_TYPES(NVSHMEMI_COLL_MOVE_HALF)
/* The byte forms: elements of one unsigned byte. */
NVSHMEMI_COLL_MOVE(, mem, void, RSHMEMD_TYPE(RSHMEMD_KIND_UNSIGNED, 1), , void)
#undef NVSHMEMI_COLL_MOVE_TYPED
#undef NVSHMEMI_COLL_MOVE_HALF

/* ---- Reductions ------------------------------------------------------------------------------- */

#define NVSHMEMI_REDUCE(NAME, TYPE, KIND, OP, OP_CODE)                                             \
    NVSHMEMI_HD int nvshmem_##NAME##_##OP##_reduce(nvshmem_team_t team, TYPE *dest, const TYPE *source, \
                                                   size_t nelems NVSHMEMI_CALLER) {                \
        return NVSHMEMI_PICK(NVSHMEMI_COLL_DEVICE(RSHMEMD_COLL_REDUCE, TYPE, NVSHMEMI_TYPE_CODE(TYPE, KIND), OP_CODE, \
                                                  0, RSHMEMD_SCOPE_THREAD),                        \
                             shmem_##NAME##_##OP##_reduce(rshmemx_team_of_handle(team), dest, source, nelems)); \
    }                                                                                              \
    NVSHMEMI_REDUCE_ON_STREAM(NAME, TYPE, OP, NVSHMEMI_TYPE_CODE(TYPE, KIND), OP_CODE)             \
    NVSHMEMI_REDUCE_SCOPED(NAME, TYPE, KIND, OP, OP_CODE, warp, RSHMEMD_SCOPE_WARP)                \
    NVSHMEMI_REDUCE_SCOPED(NAME, TYPE, KIND, OP, OP_CODE, block, RSHMEMD_SCOPE_BLOCK)

#ifdef __CUDACC__
#define NVSHMEMI_REDUCE_SCOPED(NAME, TYPE, KIND, OP, OP_CODE, SCOPE, SCOPE_CODE)                   \
    NVSHMEMI_D int nvshmemx_##NAME##_##OP##_reduce_##SCOPE(nvshmem_team_t team, TYPE *dest, const TYPE *source, \
                                                           size_t nelems NVSHMEMI_CALLER) {        \
        return NVSHMEMI_COLL_DEVICE(RSHMEMD_COLL_REDUCE, TYPE, NVSHMEMI_TYPE_CODE(TYPE, KIND), OP_CODE, 0, SCOPE_CODE); \
    }
#else
#define NVSHMEMI_REDUCE_SCOPED(NAME, TYPE, KIND, OP, OP_CODE, SCOPE, SCOPE_CODE)
#endif

#ifdef NVSHMEMI_HAVE_CUDART
#define NVSHMEMI_REDUCE_ON_STREAM(NAME, TYPE, OP, TYPE_CODE, OP_CODE)                             \
    static inline int nvshmemx_##NAME##_##OP##_reduce_on_stream(nvshmem_team_t team, TYPE *dest, const TYPE *source, \
                                                                size_t nelems, cudaStream_t stream) { \
        NVSHMEMI_STREAM_COLL(RSHMEMD_COLL_REDUCE, TYPE_CODE, OP_CODE, 0, rshmemd_stream_team_n_pes(team)) \
        cudaStreamSynchronize(stream);                                                             \
        return nvshmem_##NAME##_##OP##_reduce(team, dest, source, nelems);                         \
    }
#else
#define NVSHMEMI_REDUCE_ON_STREAM(NAME, TYPE, OP, TYPE_CODE, OP_CODE)
#endif

#define NVSHMEMI_REDUCE_BITWISE(NAME, TYPE, KIND)                                                  \
    NVSHMEMI_REDUCE(NAME, TYPE, KIND, and, RSHMEMD_OP_AND)                                         \
    NVSHMEMI_REDUCE(NAME, TYPE, KIND, or, RSHMEMD_OP_OR)                                           \
    NVSHMEMI_REDUCE(NAME, TYPE, KIND, xor, RSHMEMD_OP_XOR)
/* min, max, sum and prod, each made by EACH. */
#define NVSHMEMI_REDUCE_ARITH_OPS(EACH, NAME, TYPE, KIND)                                          \
    EACH(NAME, TYPE, KIND, min, RSHMEMD_OP_MIN)                                                    \
    EACH(NAME, TYPE, KIND, max, RSHMEMD_OP_MAX)                                                    \
    EACH(NAME, TYPE, KIND, sum, RSHMEMD_OP_SUM)                                                    \
    EACH(NAME, TYPE, KIND, prod, RSHMEMD_OP_PROD)
#define NVSHMEMI_REDUCE_ARITH(NAME, TYPE, KIND) NVSHMEMI_REDUCE_ARITH_OPS(NVSHMEMI_REDUCE, NAME, TYPE, KIND)
NVSHMEMI_REDUCE_BITWISE_TYPES(NVSHMEMI_REDUCE_BITWISE)
NVSHMEMI_REDUCE_ARITH_TYPES(NVSHMEMI_REDUCE_ARITH)

/* half and bfloat16 reductions run in kernels only: libshmem has no host reduction of them, so
 * a host call is the compiler's error that the function is __device__. */
#ifdef __CUDACC__
#define NVSHMEMI_REDUCE_DEVICE(NAME, TYPE, KIND, OP, OP_CODE)                                      \
    NVSHMEMI_D int nvshmem_##NAME##_##OP##_reduce(nvshmem_team_t team, TYPE *dest, const TYPE *source, \
                                                  size_t nelems NVSHMEMI_CALLER) {                 \
        return NVSHMEMI_COLL_DEVICE(RSHMEMD_COLL_REDUCE, TYPE, NVSHMEMI_TYPE_CODE(TYPE, KIND), OP_CODE, 0, \
                                    RSHMEMD_SCOPE_THREAD);                                         \
    }                                                                                              \
    NVSHMEMI_REDUCE_SCOPED(NAME, TYPE, KIND, OP, OP_CODE, warp, RSHMEMD_SCOPE_WARP)                \
    NVSHMEMI_REDUCE_SCOPED(NAME, TYPE, KIND, OP, OP_CODE, block, RSHMEMD_SCOPE_BLOCK)
#define NVSHMEMI_REDUCE_HALF(NAME, TYPE, KIND) NVSHMEMI_REDUCE_ARITH_OPS(NVSHMEMI_REDUCE_DEVICE, NAME, TYPE, KIND)
NVSHMEMI_HALF_TYPES(NVSHMEMI_REDUCE_HALF)
#undef NVSHMEMI_REDUCE_HALF
#undef NVSHMEMI_REDUCE_DEVICE
#endif
#undef NVSHMEMI_REDUCE_BITWISE
#undef NVSHMEMI_REDUCE_ARITH
#undef NVSHMEMI_REDUCE_ARITH_OPS
#undef NVSHMEMI_REDUCE
#undef NVSHMEMI_REDUCE_SCOPED
#undef NVSHMEMI_REDUCE_ON_STREAM
#undef NVSHMEMI_COLL_MOVE
#undef NVSHMEMI_COLL_MOVE_SCOPED
#undef NVSHMEMI_COLL_MOVE_ON_STREAM
#undef NVSHMEMI_COLL_DEVICE

/* ---- Collective launch ------------------------------------------------------------------------ */

#ifdef __CUDACC__
/* A kernel that calls device collectives needs every PE's blocks resident at once; one GPU per
 * PE (or PEs sharing one) runs the launch as any other, so it is cudaLaunchKernel. */
static inline int nvshmemx_collective_launch(const void *func, dim3 grid_dims, dim3 block_dims, void **args,
                                             size_t shared_mem, cudaStream_t stream) {
    return (int)cudaLaunchKernel(func, grid_dims, block_dims, args, shared_mem, stream);
}
/* The largest grid whose blocks are all resident on this GPU, or 0 for `*gridsize` if `func`
 * fits at most one block. */
static inline int nvshmemx_collective_launch_query_gridsize(const void *func, dim3 block_dims, void **args,
                                                            size_t shared_mem, int *gridsize) {
    (void)args;
    int device = 0, sms = 0, per_sm = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    int status = (int)cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, func, (int)(block_dims.x * block_dims.y * block_dims.z), shared_mem);
    *gridsize = per_sm * sms;
    return status;
}
#endif

#endif
