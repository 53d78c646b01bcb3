// Two buffers of the driver's virtual-memory API registered as symmetric memory at once, the
// first unregistered while the second still serves puts, the heap grown past both by a large
// nvshmem_malloc, the second unregistered below that growth, and a third registered above it:
// each time a kernel puts into the next PE's buffers and every PE checks what arrived through
// its own mapping. The PEs may share GPUs (PE i uses GPU i % the GPUs there are).
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdlib>
#include <iostream>
#include <vector>

#include "vmm_buffer.h"

constexpr int kCount = 4096;

__global__ void put_to_next(int* dest, int next, int base) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < kCount; i += gridDim.x * blockDim.x)
        nvshmem_int_p(dest + i, base + i, next);
    nvshmem_quiet();
}

static int* reg(const VmmBuffer& b, int me) {
    int* sym = static_cast<int*>(nvshmemx_buffer_register_symmetric(reinterpret_cast<void*>(b.addr), b.size, 0));
    if (sym == nullptr) {
        std::cerr << "PE " << me << ": nvshmemx_buffer_register_symmetric failed" << std::endl;
        std::exit(1);
    }
    return sym;
}

static void unreg(int* sym, size_t size, int me) {
    nvshmem_barrier_all();
    if (nvshmemx_buffer_unregister_symmetric(sym, size) != 0) {
        std::cerr << "PE " << me << ": nvshmemx_buffer_unregister_symmetric failed" << std::endl;
        std::exit(1);
    }
}

// Puts base + i into the next PE's `sym`, then says whether this PE's `mine` holds what the
// previous PE put.
static const char* exchange(int* sym, const int* mine, int me, int npes, int base, cudaStream_t stream) {
    const int next = (me + 1) % npes, previous = (me + npes - 1) % npes;
    put_to_next<<<4, 128, 0, stream>>>(sym, next, 1000 * me + base);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    nvshmem_barrier_all();
    std::vector<int> got(kCount);
    CUDA_CHECK(cudaMemcpy(got.data(), mine, kCount * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < kCount; ++i)
        if (got[i] != 1000 * previous + base + i) return "WRONG";
    return "right";
}

int main() {
    nvshmem_init();
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    int devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    const int device = nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) % devices;
    CUDA_CHECK(cudaSetDevice(device));
    const CUmemAllocationProp prop = vmm_prop(device);
    size_t size = 0;
    CU_CHECK(cuMemGetAllocationGranularity(&size, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));

    VmmBuffer a = vmm_create(device, size), b = vmm_create(device, size), c = vmm_create(device, size);
    int* sym_a = reg(a, me);
    int* sym_b = reg(b, me);
    const char* first_a = exchange(sym_a, reinterpret_cast<int*>(a.addr), me, npes, 1, stream);
    const char* first_b = exchange(sym_b, reinterpret_cast<int*>(b.addr), me, npes, 2, stream);
    std::cout << "PE " << me << ": two buffers registered at once, puts into the first " << first_a
              << ", into the second " << first_b << ", apart " << (sym_a != sym_b ? "yes" : "NO") << std::endl;

    unreg(sym_a, size, me);
    const char* after_a = exchange(sym_b, reinterpret_cast<int*>(b.addr), me, npes, 3, stream);
    // 64 MiB more than the heap had: the heap grows past both buffers.
    const size_t big_bytes = size_t(64) << 20;
    int* big = static_cast<int*>(nvshmem_malloc(big_bytes));
    int* big_end = big + big_bytes / sizeof(int) - kCount;
    const char* grown = exchange(big_end, big_end, me, npes, 4, stream);
    const char* b_after_growth = exchange(sym_b, reinterpret_cast<int*>(b.addr), me, npes, 5, stream);
    std::cout << "PE " << me << ": first unregistered, puts into the second " << after_a
              << ", the heap grown past both " << (big != nullptr ? grown : "NOT ALLOCATED")
              << ", the second after the growth " << b_after_growth << std::endl;

    unreg(sym_b, size, me);
    int* sym_c = reg(c, me);
    const char* third = exchange(sym_c, reinterpret_cast<int*>(c.addr), me, npes, 6, stream);
    const char* big_again = exchange(big, big, me, npes, 7, stream);
    std::cout << "PE " << me << ": second unregistered, a third registered above the growth, puts into it "
              << third << ", into the grown heap " << big_again << std::endl;
    unreg(sym_c, size, me);
    nvshmem_free(big);
    CUDA_CHECK(cudaStreamDestroy(stream));
    nvshmem_finalize();
    vmm_destroy(a);
    vmm_destroy(b);
    vmm_destroy(c);
    return 0;
}
