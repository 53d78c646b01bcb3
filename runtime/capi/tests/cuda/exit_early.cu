// Every PE loads its readings and sums them on the GPU. PE 3 has lost its device buffer, so
// its cudaMemcpy fails and CUDA_CHECK exits with status 1 from inside a function holding a
// std::vector, as public code does; the others finish their sums and print them.
#include <nvshmem.h>

#include <cstdlib>
#include <iostream>
#include <numeric>
#include <vector>

#define CUDA_CHECK(call)                                                                     \
    do {                                                                                     \
        cudaError_t status_ = (call);                                                        \
        if (status_ != cudaSuccess) {                                                        \
            std::cerr << "CUDA error at " << __FILE__ << ":" << __LINE__ << ": "             \
                      << cudaGetErrorString(status_) << std::endl;                          \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

__global__ void sum(const int* values, int n, int* total) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(total, values[i]);
    }
}

int device_sum(const std::vector<int>& values, int* buffer, int* total) {
    std::vector<int> staged(values);
    CUDA_CHECK(cudaMemcpy(buffer, staged.data(), staged.size() * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(total, 0, sizeof(int)));
    sum<<<2, 128>>>(buffer, static_cast<int>(staged.size()), total);
    CUDA_CHECK(cudaGetLastError());
    int result = 0;
    CUDA_CHECK(cudaMemcpy(&result, total, sizeof result, cudaMemcpyDeviceToHost));
    return result;
}

int main() {
    nvshmem_init();
    int me = nvshmem_my_pe();
    std::vector<int> readings(1000);
    std::iota(readings.begin(), readings.end(), me);
    std::cout << "PE " << me << ": loaded " << readings.size() << " readings" << std::endl;

    int* buffer = nullptr;
    int* total = nullptr;
    CUDA_CHECK(cudaMalloc(&buffer, readings.size() * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&total, sizeof(int)));
    int* target = me == 3 ? nullptr : buffer;  // PE 3 lost its buffer
    int result = device_sum(readings, target, total);
    int expected = std::accumulate(readings.begin(), readings.end(), 0);
    std::cout << "PE " << me << ": the GPU's sum is " << (result == expected ? "right" : "WRONG") << std::endl;

    CUDA_CHECK(cudaFree(total));
    CUDA_CHECK(cudaFree(buffer));
    nvshmem_finalize();
    return 0;
}
