// A C++ CUDA program whose kernel waits for any of its peers' "ready" flags with
// nvshmem_int_wait_until_any, but the peers never set them (their sends were left out). Run
// with a short RSHMEM_WAIT_TIMEOUT_MS, the wait must end the run once its deadline passes and
// name itself, the first flag it waits for and the value awaited, as nvshmem_wait_until's
// report does.
#include <nvshmem.h>
#include <nvshmemx.h>

#include <iostream>
#include <stdexcept>
#include <vector>

__global__ void wait_for_any_peer(int* ready, const int* ignore, int n_pes, int* first) {
    if (threadIdx.x == 0) *first = static_cast<int>(nvshmem_int_wait_until_any(ready, n_pes, ignore, NVSHMEM_CMP_EQ, 1));
}

int main() {
    try {
        nvshmem_init();
        const int me = nvshmem_my_pe(), n_pes = nvshmem_n_pes();
        auto* scratch = static_cast<double*>(nvshmem_malloc(512 * sizeof(double)));
        auto* ready = static_cast<int*>(nvshmem_calloc(n_pes, sizeof(int)));
        if (scratch == nullptr || ready == nullptr) throw std::runtime_error("nvshmem_malloc failed");
        // A PE does not wait for itself.
        std::vector<int> ignore(n_pes, 0);
        ignore[me] = 1;
        int *ignore_on_device = nullptr, *first = nullptr;
        cudaMalloc(&ignore_on_device, n_pes * sizeof(int));
        cudaMalloc(&first, sizeof(int));
        cudaMemcpy(ignore_on_device, ignore.data(), n_pes * sizeof(int), cudaMemcpyHostToDevice);
        wait_for_any_peer<<<1, 32>>>(ready, ignore_on_device, n_pes, first);
        if (cudaDeviceSynchronize() != cudaSuccess) throw std::runtime_error("the kernel failed");
        std::cout << "PE " << me << ": a peer is ready" << std::endl;
        nvshmem_finalize();
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << std::endl;
        return 1;
    }
    return 0;
}
