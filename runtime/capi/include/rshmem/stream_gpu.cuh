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
 * the work. A team other than the world, or a unit whose state libshmem has not bound (a
 * backend other than CUDA), takes the host path: the stream is synchronised and the host
 * collective runs.
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

static __global__ void rshmemd_stream_collective_kernel(int kind, void *dest, const void *source, size_t nelems,
                                                        int type, int op, int root) {
    rshmemd_collective(kind, RSHMEMD_TEAM_WORLD, dest, source, nelems, type, op, root, RSHMEMD_SCOPE_GRID);
}

static __global__ void rshmemd_stream_barrier_kernel() { rshmemd_barrier(RSHMEMD_TEAM_WORLD, RSHMEMD_SCOPE_BLOCK); }

/* The most blocks of the collective kernel that can run at once on the current GPU, found once
 * per unit (0: the query failed). */
static int rshmemd_stream_resident_blocks() {
    static int resident = -1;
    if (resident < 0) {
        int device = 0, sms = 0, per_sm = 0;
        if (cudaGetDevice(&device) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rshmemd_stream_collective_kernel,
                                                          RSHMEMD_STREAM_THREADS, 0) != cudaSuccess) {
            (void)cudaGetLastError();
            resident = 0;
        } else {
            /* One block on half the SMs at most: PEs that share the GPU run theirs side by side,
             * and even 8 PEs' grids at once fit the GPU, so no grid waits for another's blocks
             * to leave an SM. */
            resident = per_sm < 1 ? 0 : sms / 2 > 1 ? sms / 2 : 1;
        }
    }
    return resident;
}

/* Whether the collective of `team` runs as a kernel here: a world-like team, on a unit whose
 * device state libshmem bound. */
static inline bool rshmemd_stream_kernels_for(int32_t team) {
    return rshmemd_gpu_state_bound &&
           (team == RSHMEMD_TEAM_WORLD || team == RSHMEMD_TEAM_SHARED || team == RSHMEMD_TEAM_NODE);
}

/* Enqueues the collective on `stream`; 0 on success, else the CUDA error. `moved` is the
 * bytes each PE reads, which sets the grid's size. */
static inline int rshmemd_stream_collective(int kind, void *dest, const void *source, size_t nelems, int type,
                                            int op, int root, size_t moved, cudaStream_t stream) {
    rshmemx_order_stream_after_queue(stream);
    size_t wanted = (moved + RSHMEMD_STREAM_BYTES_PER_BLOCK - 1) / RSHMEMD_STREAM_BYTES_PER_BLOCK;
    int resident = rshmemd_stream_resident_blocks();
    unsigned blocks = (unsigned)(wanted < (size_t)resident ? wanted : (size_t)resident);
    if (blocks > 1) {
        void *args[] = {&kind, &dest, &source, &nelems, &type, &op, &root};
        cudaError_t status = cudaLaunchCooperativeKernel((const void *)rshmemd_stream_collective_kernel,
                                                         dim3(blocks), dim3(RSHMEMD_STREAM_THREADS), args, 0, stream);
        if (status == cudaSuccess) return 0;
        /* Not cooperative here (or not that many blocks): one block does it all. */
        (void)cudaGetLastError();
    }
    rshmemd_stream_collective_kernel<<<1, RSHMEMD_STREAM_THREADS, 0, stream>>>(kind, dest, source, nelems, type, op,
                                                                            root);
    return (int)cudaGetLastError();
}

/* Enqueues a barrier over every PE on `stream`: quiet, then every PE's arrival. */
static inline int rshmemd_stream_barrier(cudaStream_t stream) {
    rshmemx_order_stream_after_queue(stream);
    rshmemd_stream_barrier_kernel<<<1, 32, 0, stream>>>();
    return (int)cudaGetLastError();
}

#endif
