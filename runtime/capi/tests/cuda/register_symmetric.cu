// A buffer of CUDA's virtual-memory driver API registered as symmetric memory, the way
// applications that own their allocations do it: every PE creates and maps a buffer, registers
// it (nvshmemx_buffer_register_symmetric), a kernel puts into the next PE's registered buffer,
// an on-stream reduction runs over it, each PE checks the results through its own mapping of
// the buffer, unregisters it, and registers it again for a second round. Registering memory
// that is not a cuMemCreate buffer fails with NULL, and unregistering an address that was not
// registered fails.
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdlib>
#include <iostream>
#include <vector>

#include "vmm_buffer.h"

constexpr int kCount = 1024;

__global__ void put_to_next(int* dest, int next, int base) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < kCount; i += gridDim.x * blockDim.x)
        nvshmem_int_p(dest + i, base + i, next);
    nvshmem_quiet();
}

int main() {
    nvshmem_init();
    const int me = nvshmem_my_pe();
    const int npes = nvshmem_n_pes();
    const int next = (me + 1) % npes;
    const int previous = (me + npes - 1) % npes;
    CUDA_CHECK(cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE)));
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));

    const CUmemAllocationProp prop = vmm_prop(device);
    size_t size = 0;
    CU_CHECK(cuMemGetAllocationGranularity(&size, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    const VmmBuffer buffer = vmm_create(device, size);
    int* mine = reinterpret_cast<int*>(buffer.addr);

    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    for (int round = 0; round < 2; ++round) {
        int* sym = static_cast<int*>(nvshmemx_buffer_register_symmetric(mine, size, 0));
        if (sym == nullptr) {
            std::cerr << "PE " << me << ": nvshmemx_buffer_register_symmetric failed" << std::endl;
            return 1;
        }
        // A store through the buffer is seen at the symmetric address.
        const int marker = 4242 + round;
        CUDA_CHECK(cudaMemcpy(mine + 3 * kCount, &marker, sizeof(int), cudaMemcpyHostToDevice));
        int seen = 0;
        CUDA_CHECK(cudaMemcpy(&seen, sym + 3 * kCount, sizeof(int), cudaMemcpyDeviceToHost));
        nvshmem_barrier_all();

        put_to_next<<<2, 64, 0, stream>>>(sym, next, 100 * me + round);
        nvshmemx_barrier_all_on_stream(stream);
        nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, sym + kCount, sym, kCount, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));

        std::vector<int> got(2 * kCount);
        CUDA_CHECK(cudaMemcpy(got.data(), mine, got.size() * sizeof(int), cudaMemcpyDeviceToHost));
        bool puts = true, sums = true;
        for (int i = 0; i < kCount; ++i) {
            puts = puts && got[i] == 100 * previous + round + i;
            sums = sums && got[kCount + i] == 100 * npes * (npes - 1) / 2 + npes * (round + i);
        }
        std::cout << "PE " << me << ": round " << round << ", symmetric address in the heap "
                  << (nvshmem_ptr(sym, me) == sym ? "yes" : "NO") << ", buffer store seen there "
                  << (seen == marker ? "yes" : "NO") << ", neighbour's puts in the buffer "
                  << (puts ? "yes" : "NO") << ", sum reduction " << (sums ? "right" : "WRONG") << std::endl;
        nvshmem_barrier_all();
        if (nvshmemx_buffer_unregister_symmetric(sym, size) != 0) {
            std::cerr << "PE " << me << ": nvshmemx_buffer_unregister_symmetric failed" << std::endl;
            return 1;
        }
    }

    int* ordinary = nullptr;
    CUDA_CHECK(cudaMalloc(&ordinary, size));
    void* refused = nvshmemx_buffer_register_symmetric(ordinary, size, 0);
    int stray = 0;
    int unknown = nvshmemx_buffer_unregister_symmetric(&stray, size);
    std::cout << "PE " << me << ": cudaMalloc memory " << (refused == nullptr ? "refused" : "REGISTERED")
              << ", unregistering an unknown address " << (unknown != 0 ? "fails" : "SUCCEEDS") << std::endl;
    CUDA_CHECK(cudaFree(ordinary));
    CUDA_CHECK(cudaStreamDestroy(stream));

    nvshmem_finalize();
    vmm_destroy(buffer);
    return 0;
}
