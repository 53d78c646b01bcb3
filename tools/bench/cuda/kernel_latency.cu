// Latency of device-initiated operations from PE 0's kernel to PE 1, timed on the GPU with its
// global timer: a g, a p followed by quiet, a fetch-add, a put of 1 MiB followed by quiet, and
// an empty barrier_all. Built by nvcc against rshmem's nvshmem.h; run it over NVLink (PEs of one
// node) and over the network path (RSHMEM_TRANSPORT=ofi: every peer through the kernel proxy)
// to compare (tools/bench/cuda/kernel-latency.sh).
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdio>

constexpr int kRounds = 200;
constexpr size_t kBigBytes = 1 << 20;

__device__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// ns[0..4]: total ns of kRounds g, p+quiet, fetch-add, big put+quiet, barrier.
__global__ void measure(long long* word, char* big, unsigned long long* ns) {
    int peer = 1;
    long long sink = 0;
    unsigned long long t0 = now_ns();
    for (int i = 0; i < kRounds; ++i) sink += nvshmem_longlong_g(word, peer);
    unsigned long long t1 = now_ns();
    for (int i = 0; i < kRounds; ++i) {
        nvshmem_longlong_p(word + 1, i, peer);
        nvshmem_quiet();
    }
    unsigned long long t2 = now_ns();
    for (int i = 0; i < kRounds; ++i) sink += nvshmem_longlong_atomic_fetch_add(word + 2, 1, peer);
    unsigned long long t3 = now_ns();
    for (int i = 0; i < 8; ++i) {
        nvshmem_putmem(big + kBigBytes, big, kBigBytes, peer);
        nvshmem_quiet();
    }
    unsigned long long t4 = now_ns();
    ns[0] = t1 - t0;
    ns[1] = t2 - t1;
    ns[2] = t3 - t2;
    ns[3] = t4 - t3;
    ns[5] = (unsigned long long)sink;
}

__global__ void barriers(unsigned long long* ns) {
    unsigned long long t0 = now_ns();
    for (int i = 0; i < kRounds; ++i) nvshmem_barrier_all();
    ns[4] = now_ns() - t0;
}

int main() {
    nvshmem_init();
    int me = nvshmem_my_pe();
    auto* word = static_cast<long long*>(nvshmem_calloc(4, sizeof(long long)));
    auto* big = static_cast<char*>(nvshmem_calloc(2 * kBigBytes, 1));
    unsigned long long* ns = nullptr;
    cudaMallocManaged(&ns, 6 * sizeof(unsigned long long));
    nvshmem_barrier_all();
    if (me == 0) measure<<<1, 1>>>(word, big, ns);
    cudaDeviceSynchronize();
    nvshmem_barrier_all();
    barriers<<<1, 1>>>(ns);
    cudaDeviceSynchronize();
    nvshmem_barrier_all();
    if (me == 0) {
        printf("g %.2f us\n", ns[0] / 1e3 / kRounds);
        printf("p+quiet %.2f us\n", ns[1] / 1e3 / kRounds);
        printf("fetch_add %.2f us\n", ns[2] / 1e3 / kRounds);
        printf("put 1 MiB + quiet %.1f us (%.2f GB/s)\n", ns[3] / 1e3 / 8, 8.0 * kBigBytes / ns[3]);
        printf("barrier_all %.2f us\n", ns[4] / 1e3 / kRounds);
    }
    nvshmem_free(big);
    nvshmem_free(word);
    nvshmem_finalize();
    return 0;
}
