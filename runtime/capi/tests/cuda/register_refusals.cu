// Buffers that nvshmemx_buffer_register_symmetric must refuse, on every PE alike, without
// leaving anything behind: one created without the POSIX file-descriptor handle type (the other
// PEs' processes could not map it on GPUs), an address inside an allocation, a size past the
// allocation, a size that is not a multiple of the granularity, and a round in which only PE 1's
// buffer is bad. A good buffer registered afterwards works, and so does a growth of the heap.
#include <nvshmem.h>
#include <nvshmemx.h>

#include <iostream>

#include "vmm_buffer.h"

__global__ void put_to_next(int* dest, int next, int base) {
    nvshmem_int_p(dest + threadIdx.x, base + threadIdx.x, next);
    nvshmem_quiet();
}

static const char* attempt(CUdeviceptr at, size_t size) {
    return nvshmemx_buffer_register_symmetric(reinterpret_cast<void*>(at), size, 0) == nullptr ? "refused"
                                                                                              : "REGISTERED";
}

int main() {
    nvshmem_init();
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    int devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    const int device = nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE) % devices;
    CUDA_CHECK(cudaSetDevice(device));
    const size_t granularity = size_t(2) << 20;

    const CUdeviceptr private_one = vmm_create(device, granularity, false).addr;
    const CUdeviceptr two = vmm_create(device, 2 * granularity).addr;
    const CUdeviceptr good = vmm_create(device, granularity).addr;
    // Every attempt is collective: all are made before anything is printed, so that no PE's
    // line is left half written while it waits for the others.
    const char* no_fd = attempt(private_one, granularity);
    const char* inside = attempt(two + granularity, granularity);
    const char* past = attempt(good, 2 * granularity);
    const char* half = attempt(good, granularity / 2);
    const char* one_bad = attempt(me == 1 ? private_one : good, granularity);
    std::cout << "PE " << me << ": no file-descriptor handle type " << no_fd << ", inside an allocation " << inside
              << ", past the allocation " << past << ", half the granularity " << half << ", only PE 1's bad "
              << one_bad << std::endl;

    int* sym = static_cast<int*>(nvshmemx_buffer_register_symmetric(reinterpret_cast<void*>(good), granularity, 0));
    put_to_next<<<1, 32>>>(sym, (me + 1) % npes, 100 * me);
    CUDA_CHECK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    int got[32];
    CUDA_CHECK(cudaMemcpy(got, reinterpret_cast<void*>(good), sizeof got, cudaMemcpyDeviceToHost));
    bool right = sym != nullptr;
    for (int i = 0; i < 32; ++i) right = right && got[i] == 100 * ((me + npes - 1) % npes) + i;
    void* grown = nvshmem_malloc(size_t(100) << 20);
    std::cout << "PE " << me << ": afterwards a good buffer registers and takes puts " << (right ? "yes" : "NO")
              << ", the heap grows past it " << (grown != nullptr ? "yes" : "NO") << std::endl;
    nvshmem_barrier_all();
    nvshmemx_buffer_unregister_symmetric(sym, granularity);
    nvshmem_free(grown);
    nvshmem_finalize();
    return 0;
}
