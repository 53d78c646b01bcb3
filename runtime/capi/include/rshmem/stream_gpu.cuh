/*
 * NVSHMEM's on-stream collectives as kernels on the program's stream, for programs that nvcc
 * compiles (included by rshmem/nvshmem_coll.h after rshmem/device_gpu.cuh).
 *
 * Each `nvshmemx_*_on_stream` collective is one launch on the stream: the device collective
 * (rshmemd_collective, the same code as the kernels' `_block` forms) run by a whole grid
 * (RSHMEMD_SCOPE_GRID), so neither the calling thread nor the stream waits for more than the
 * stream's order. Before it, the stream waits for the host-initiated operations of the default
 * context (rshmemx_order_stream_after_queue), which the kernel's barrier cannot see.
 *
 * The grid is launched cooperatively, which guarantees that all of its blocks run at once (its
 * group barrier waits for every block). Where the launch cannot be cooperative, one block does
 * the work. Any live team runs so, a team of some of the PEs with its own barrier (device_gpu.cuh).
 * A handle no live team has, or a unit whose state libshmem has not bound (a backend other than
 * CUDA), takes the host path: the stream is synchronised and the host collective runs (and
 * reports a bad handle).
 */
#ifndef RSHMEM_STREAM_GPU_CUH
#define RSHMEM_STREAM_GPU_CUH

/* Threads per block of the grid collectives. */
#define RSHMEMD_STREAM_THREADS 512
/* Bytes a block moves before another block pays off (a block's copy runs at tens of GB/s). */
#define RSHMEMD_STREAM_BYTES_PER_BLOCK (1u << 20)

/* libshmem (runtime/capi/src/stream.rs): the stream's next work runs after the default
 * context's operations issued so far. */
extern "C" void rshmemx_order_stream_after_queue(cudaStream_t stream);

static __global__ void rshmemd_stream_collective_kernel(int kind, int32_t team, void *dest, const void *source,
                                                        size_t nelems, int type, int op, int root) {
    rshmemd_gpu_collective(kind, team, dest, source, nelems, type, op, root, RSHMEMD_SCOPE_GRID, __func__);
}

static __global__ void rshmemd_stream_barrier_kernel(int32_t team) {
    rshmemd_gpu_barrier(team, RSHMEMD_SCOPE_BLOCK, "nvshmemx_barrier_on_stream", __func__);
}

/* The threads a block of the collective kernel has (RSHMEMD_STREAM_THREADS, fewer if the
 * kernel's registers do not allow so many) and the most blocks that run at once on the current
 * GPU, found once per unit (0 blocks: the queries failed). */
struct rshmemd_stream_shape {
    int threads, blocks;
};
static rshmemd_stream_shape rshmemd_stream_shape_here() {
    static rshmemd_stream_shape shape = {0, -1};
    if (shape.blocks < 0) {
        int device = 0, sms = 0, per_sm = 0;
        cudaFuncAttributes attributes;
        if (cudaGetDevice(&device) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
            cudaFuncGetAttributes(&attributes, rshmemd_stream_collective_kernel) != cudaSuccess) {
            (void)cudaGetLastError();
            shape.threads = 32;
            shape.blocks = 0;
            return shape;
        }
        int most = attributes.maxThreadsPerBlock < RSHMEMD_STREAM_THREADS ? attributes.maxThreadsPerBlock
                                                                          : RSHMEMD_STREAM_THREADS;
        shape.threads = most >= 32 ? most / 32 * 32 : most;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rshmemd_stream_collective_kernel, shape.threads,
                                                          0) != cudaSuccess) {
            (void)cudaGetLastError();
            per_sm = 0;
        }
        /* One block on half the SMs at most: PEs that share the GPU run theirs side by side,
         * and even 8 PEs' grids at once fit the GPU, so no grid waits for another's blocks to
         * leave an SM. */
        shape.blocks = per_sm < 1 ? 0 : sms / 2 > 1 ? sms / 2 : 1;
    }
    return shape;
}

static inline bool rshmemd_stream_world_like(int32_t team) {
    return team == RSHMEMD_TEAM_WORLD || team == RSHMEMD_TEAM_SHARED || team == RSHMEMD_TEAM_NODE;
}
/* Whether the collective of `team` runs as a kernel here: a live team, on a unit whose device
 * state libshmem bound (and with it the team table). */
static inline bool rshmemd_stream_kernels_for(int32_t team) {
    return rshmemd_gpu_state_bound &&
           (rshmemd_stream_world_like(team) || rshmemx_team_of_handle(team) != SHMEM_TEAM_INVALID);
}
/* The PEs of `team`, a live one (the world's without asking libshmem for the team). */
static inline int rshmemd_stream_team_n_pes(int32_t team) {
    return rshmemd_stream_world_like(team) ? shmem_n_pes() : shmem_team_n_pes(rshmemx_team_of_handle(team));
}

/* A launch that failed, said on stderr (a program rarely checks an on-stream call's status,
 * and a collective that never ran leaves wrong data behind); returns the error. */
static inline int rshmemd_stream_failed(const char *what, cudaError_t status) {
    fprintf(stderr, "rshmem: PE %d: the kernel of an on-stream %s failed to launch: %s\n", shmem_my_pe(), what,
            cudaGetErrorString(status));
    return (int)status;
}

/* Launches one block of `kernel` on `stream`; 0 on success, else the CUDA error, said. The
 * status is the launch's own, never cudaGetLastError's: that also holds a failure of the
 * program's own earlier call (a cudaSetDevice to a GPU this node lacks, which a program run with
 * more PEs than GPUs makes), which would be blamed on a launch that went well. */
static inline int rshmemd_stream_launch(const char *what, const void *kernel, unsigned threads, void **args,
                                        cudaStream_t stream) {
    cudaError_t status = cudaLaunchKernel(kernel, dim3(1), dim3(threads), args, 0, stream);
    return status == cudaSuccess ? 0 : rshmemd_stream_failed(what, status);
}

/* Enqueues the collective on `team` on `stream`; 0 on success, else the CUDA error. `moved` is
 * the bytes each PE reads, which sets the grid's size. */
static inline int rshmemd_stream_collective(int kind, int32_t team, void *dest, const void *source, size_t nelems,
                                            int type, int op, int root, size_t moved, cudaStream_t stream) {
    rshmemx_order_stream_after_queue(stream);
    rshmemd_stream_shape shape = rshmemd_stream_shape_here();
    size_t wanted = (moved + RSHMEMD_STREAM_BYTES_PER_BLOCK - 1) / RSHMEMD_STREAM_BYTES_PER_BLOCK;
    unsigned blocks = (unsigned)(wanted < (size_t)shape.blocks ? wanted : (size_t)shape.blocks);
    void *args[] = {&kind, &team, &dest, &source, &nelems, &type, &op, &root};
    if (blocks > 1) {
        cudaError_t status = cudaLaunchCooperativeKernel((const void *)rshmemd_stream_collective_kernel,
                                                         dim3(blocks), dim3(shape.threads), args, 0, stream);
        if (status == cudaSuccess) return 0;
        /* Not cooperative here (or not that many blocks): one block does it all. */
        (void)cudaGetLastError();
    }
    return rshmemd_stream_launch("collective", (const void *)rshmemd_stream_collective_kernel, shape.threads, args,
                                 stream);
}

/* Enqueues a barrier of `team` on `stream`: quiet, then every member's arrival. */
static inline int rshmemd_stream_barrier(int32_t team, cudaStream_t stream) {
    rshmemx_order_stream_after_queue(stream);
    void *args[] = {&team};
    return rshmemd_stream_launch("barrier", (const void *)rshmemd_stream_barrier_kernel, 32, args, stream);
}

#endif
