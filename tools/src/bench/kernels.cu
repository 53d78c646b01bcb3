// The device-side kernels of `rshmem bench`, compiled behind rshmem_device.cuh. Each mirrors a
// kernel of NVSHMEM's benchmark (../shared/bench/nvshmem/nvshmem_bench.cu in the workspace's
// reference material), so that the two measure the same work. The barrier and the reduction
// are collectives.cu's.

// Block-scoped nbi puts of `chunk` bytes per block, `iters` times, then quiet.
extern "C" __global__ void put_bw(char *dst, const char *src, unsigned long long chunk,
                                  unsigned int iters, int peer) {
    unsigned long long off = (unsigned long long)blockIdx.x * chunk;
    for (unsigned int i = 0; i < iters; i++) {
        rshmem_putmem_nbi_block(dst + off, src + off, chunk, peer);
    }
    rshmem_quiet();
}

// One warp's nbi puts of `bytes`, `iters` times.
extern "C" __global__ void put_warp(char *dst, const char *src, unsigned long long bytes,
                                    unsigned int iters, int peer) {
    for (unsigned int i = 0; i < iters; i++) rshmem_putmem_nbi_warp(dst, src, bytes, peer);
    rshmem_quiet();
}

// One block's nbi puts of `bytes`, `iters` times.
extern "C" __global__ void put_block(char *dst, const char *src, unsigned long long bytes,
                                     unsigned int iters, int peer) {
    for (unsigned int i = 0; i < iters; i++) rshmem_putmem_nbi_block(dst, src, bytes, peer);
    rshmem_quiet();
}

// p ping-pong on a 32-bit flag: PE 0 sends i and waits for it back.
extern "C" __global__ void p_pingpong(int *flag, unsigned int iters, int me, int peer) {
    for (int i = 1; i <= (int)iters; i++) {
        if (me == 0) {
            rshmem_p(flag, i, peer);
            rshmem_wait_until(flag, RSHMEM_CMP_EQ, i);
        } else {
            rshmem_wait_until(flag, RSHMEM_CMP_EQ, i);
            rshmem_p(flag, i, peer);
        }
    }
}

// put_signal ping-pong of `bytes` with a SET signal.
extern "C" __global__ void signal_pingpong(char *data, unsigned long long *sig,
                                           unsigned long long bytes, unsigned int iters, int me,
                                           int peer) {
    for (unsigned long long i = 1; i <= iters; i++) {
        if (me == 0) {
            rshmem_put_signal(data, data, bytes, sig, i, RSHMEM_SIGNAL_SET, peer);
            rshmem_signal_wait_until(sig, RSHMEM_CMP_EQ, i);
        } else {
            rshmem_signal_wait_until(sig, RSHMEM_CMP_EQ, i);
            rshmem_put_signal(data, data, bytes, sig, i, RSHMEM_SIGNAL_SET, peer);
        }
    }
}

// `iters` dependent remote fetch-adds; the sum goes to `out` so none is optimised away.
extern "C" __global__ void fetch_add_latency(unsigned long long *ctr, unsigned int iters,
                                             int peer, unsigned long long *out) {
    unsigned long long v = 0;
    for (unsigned int i = 0; i < iters; i++) v += rshmem_atomic_fetch_add(ctr, 1ull, peer);
    *out = v;
}
