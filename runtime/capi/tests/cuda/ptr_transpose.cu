// A block transpose done with loads and stores through nvshmem_ptr, the way codes do on NVLink
// machines: each PE's source holds one block of values for every PE; a kernel stores block j
// straight into PE j's destination through the pointer nvshmem_ptr gives, synchronises the
// PEs with a block-scope barrier, and then checks what the other PEs stored into its own
// destination. The host then copies a value of the next PE from the pointer nvshmem_ptr gives
// it (a device address: the host copies from it with cudaMemcpy, as on a GPU).
// Built with -DRACY the kernel skips the barrier: its checks then race with the peers' stores.
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <vector>

#define CUDA_CHECK(call) check_cuda((call), #call, __LINE__)

static void check_cuda(cudaError_t status, const char* call, int line) {
    if (status != cudaSuccess) {
        std::ostringstream message;
        message << call << " failed at line " << line << ": " << cudaGetErrorString(status);
        throw std::runtime_error(message.str());
    }
}

constexpr int kBlock = 8;  // values per (source PE, destination PE) pair

__host__ __device__ double value_of(int from_pe, int index) { return from_pe * 1000.0 + index; }

__global__ void transpose(double* dest, const double* src, int* wrong) {
    int me = nvshmem_my_pe();
    int n = nvshmem_n_pes();
    for (int i = threadIdx.x; i < n * kBlock; i += blockDim.x) {
        int peer = i / kBlock;
        double* theirs = static_cast<double*>(nvshmem_ptr(dest, peer));
        if (theirs == nullptr) {
            // not load/store reachable: fall back to a put, as portable codes do
            nvshmem_double_p(dest + me * kBlock + i % kBlock, src[i], peer);
        } else {
            theirs[me * kBlock + i % kBlock] = src[i];
        }
    }
#ifndef RACY
    nvshmemx_barrier_all_block();
#endif
    for (int i = threadIdx.x; i < n * kBlock; i += blockDim.x) {
        int from = i / kBlock;
        if (dest[i] != value_of(from, me * kBlock + i % kBlock)) atomicAdd(wrong, 1);
    }
}

int main() {
    try {
        nvshmem_init();
        int me = nvshmem_my_pe();
        int n = nvshmem_n_pes();
        size_t count = static_cast<size_t>(n) * kBlock;
        std::vector<double> mine(count);
        for (size_t i = 0; i < count; i++) mine[i] = value_of(me, static_cast<int>(i));
        double* src = static_cast<double*>(nvshmem_malloc(count * sizeof(double)));
        double* dest = static_cast<double*>(nvshmem_malloc(count * sizeof(double)));
        if (src == nullptr || dest == nullptr) throw std::runtime_error("nvshmem_malloc failed");
        CUDA_CHECK(cudaMemcpy(src, mine.data(), count * sizeof(double), cudaMemcpyHostToDevice));
        int* wrong = nullptr;
        CUDA_CHECK(cudaMalloc(&wrong, sizeof(int)));
        CUDA_CHECK(cudaMemset(wrong, 0, sizeof(int)));
        nvshmem_barrier_all();

        transpose<<<1, 32>>>(dest, src, wrong);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        int wrong_count = 0;
        CUDA_CHECK(cudaMemcpy(&wrong_count, wrong, sizeof(int), cudaMemcpyDeviceToHost));
        nvshmem_barrier_all();

        int next = (me + 1) % n;
        const double* next_dest = static_cast<const double*>(nvshmem_ptr(dest, next));
        std::string host_read = "no host pointer";
        if (next_dest != nullptr) {
            double got = 0;  // what this PE stored there
            CUDA_CHECK(cudaMemcpy(&got, next_dest + kBlock * me + 1, sizeof got, cudaMemcpyDefault));
            if (got != value_of(me, next * kBlock + 1)) {
                std::cerr << "PE " << me << ": the host copied " << got << " from nvshmem_ptr's pointer\n";
                exit(1);
            }
            host_read = "the host copy agrees";
        }
        nvshmem_barrier_all();
        if (wrong_count != 0) {
            std::cerr << "PE " << me << ": " << wrong_count << " transposed values are wrong\n";
            exit(1);
        }
        std::cout << "PE " << me << ": " << count << " values transposed through nvshmem_ptr, " << host_read
                  << std::endl;
        CUDA_CHECK(cudaFree(wrong));
        nvshmem_free(dest);
        nvshmem_free(src);
        nvshmem_finalize();
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << "\n";
        return 1;
    }
    return 0;
}
