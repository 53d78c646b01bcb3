// The collectives of `rshmem bench --collectives` (and the barrier and reduction of
// `rshmem bench`), compiled behind rshmem_device.cuh, and the fills of their data.
//
// Each collective kernel is one block of 1024 threads per PE calling the device API's
// block-scoped collective `iters` times: once per launch for the on_stream lines (one launch
// per collective, as NVSHMEM's *_on_stream calls are one stream operation each), `iters`
// times in one launch for the in_kernel lines. The bound tells the compiler the block size
// (without it the reduction's registers allow 896 threads).

// `iters` barriers of all PEs.
extern "C" __global__ void __launch_bounds__(1024) barrier(unsigned int iters) {
    for (unsigned int i = 0; i < iters; i++) rshmem_barrier_all();
}

// `iters` broadcasts of `bytes` from PE 0's source to every PE's dest.
extern "C" __global__ void __launch_bounds__(1024) broadcast(char *dest, const char *source,
                                                             unsigned long long bytes,
                                                             unsigned int iters) {
    for (unsigned int i = 0; i < iters; i++) rshmem_broadcast_block(dest, source, bytes, 0);
}

// `iters` fcollects: every PE's `bytes` of source, in PE order, into every PE's dest.
extern "C" __global__ void __launch_bounds__(1024) fcollect(char *dest, const char *source,
                                                            unsigned long long bytes,
                                                            unsigned int iters) {
    for (unsigned int i = 0; i < iters; i++) rshmem_fcollect_block(dest, source, bytes);
}

// `iters` alltoalls of `bytes` from every PE to every PE.
extern "C" __global__ void __launch_bounds__(1024) alltoall(char *dest, const char *source,
                                                            unsigned long long bytes,
                                                            unsigned int iters) {
    for (unsigned int i = 0; i < iters; i++) rshmem_alltoall_block(dest, source, bytes);
}

// `iters` sum reductions of `n` floats over every PE.
extern "C" __global__ void __launch_bounds__(1024) sum_reduce(float *dest, const float *source,
                                                              unsigned long long n,
                                                              unsigned int iters) {
    for (unsigned int i = 0; i < iters; i++) rshmem_sum_reduce_block(dest, source, n);
}

// The fill of a PE's data, before the collectives: local, any grid, no collective call. The
// host checks the collectives' results against the same formulas (collectives_pe.rs:
// pattern_word, reduced_value).
#define FILL_PATTERN 0
#define FILL_REDUCED 1
#define FILL_POISON 2

// words[i] =
// - FILL_PATTERN: pattern word i of PE `value`, distinct for every PE at every index (odd
//   multipliers are bijections of 32-bit words), so that a word from the wrong PE or place
//   shows;
// - FILL_REDUCED: a float that is a small integer, so that every order of summing them over
//   the PEs is exact;
// - FILL_POISON: `value`, which a collective must overwrite.
// One kernel for the three: every kernel costs each PE a compile.
extern "C" __global__ void fill(unsigned int *words, unsigned long long n, unsigned int what,
                                unsigned int value) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        if (what == FILL_PATTERN) {
            words[i] = (value + 1u) * 0x9E3779B1u ^ (unsigned int)i * 0x85EBCA77u;
        } else if (what == FILL_REDUCED) {
            words[i] = __float_as_uint((float)((i * 7ull + value * 13ull) % 1024ull));
        } else {
            words[i] = value;
        }
    }
}
