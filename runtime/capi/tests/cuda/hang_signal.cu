// A C++ CUDA program that hangs: PE 0's kernel waits in nvshmem_signal_wait_until for a
// signal that no PE ever sets (the send that should set it was left out), while PE 1 goes
// straight on to nvshmem_barrier_all from the host. rshmem must end the run and name the
// wait: PE 0, the kernel, its block and thread, the signal and the value awaited.
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdint>
#include <iostream>
#include <stdexcept>
#include <string>

#define CUDA_CHECK(call)                                                                              \
    do {                                                                                              \
        cudaError_t status = (call);                                                                  \
        if (status != cudaSuccess)                                                                    \
            throw std::runtime_error(std::string(#call) + " failed: " + cudaGetErrorString(status)); \
    } while (0)

__global__ void wait_for_work(uint64_t* ready, int* result) {
    if (threadIdx.x == 0) {
        nvshmem_signal_wait_until(ready, NVSHMEM_CMP_GE, 3);
        *result = 1;
    }
}

int main() {
    try {
        nvshmem_init();
        const int my_pe = nvshmem_my_pe();
        // Two objects before the signal, so that the report has to name the right one.
        auto* scratch = static_cast<char*>(nvshmem_malloc(4096));
        auto* counts = static_cast<int*>(nvshmem_calloc(16, sizeof(int)));
        auto* ready = static_cast<uint64_t*>(nvshmem_calloc(2, sizeof(uint64_t)));
        int* result = nullptr;
        CUDA_CHECK(cudaMalloc(&result, sizeof(int)));
        nvshmem_barrier_all();

        if (my_pe == 0) {
            wait_for_work<<<2, 32>>>(ready + 1, result);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaDeviceSynchronize());
        }
        nvshmem_barrier_all();
        std::cout << "PE " << my_pe << ": done" << std::endl;
        CUDA_CHECK(cudaFree(result));
        nvshmem_free(ready);
        nvshmem_free(counts);
        nvshmem_free(scratch);
        nvshmem_finalize();
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << std::endl;
        return 1;
    }
    return 0;
}
