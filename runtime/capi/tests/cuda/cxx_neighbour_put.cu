// A C++ CUDA program written the way applications are: host buffers in std::vector, output on
// std::cout, a CUDA_CHECK that throws std::runtime_error, <chrono> timing, a host std::thread,
// and a templated kernel taking __device__ lambdas. Each PE transforms its values on the GPU
// and puts them to the next PE, element by element; each PE then checks what its previous PE
// sent.
#include <nvshmem.h>
#include <nvshmemx.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#define CUDA_CHECK(call) check_cuda((call), #call, __FILE__, __LINE__)

static void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
    if (status != cudaSuccess) {
        std::ostringstream message;
        message << call << " failed at " << file << ":" << line << ": " << cudaGetErrorString(status);
        throw std::runtime_error(message.str());
    }
}

__device__ void put_one(float* dest, float value, int pe) { nvshmem_float_p(dest, value, pe); }
__device__ void put_one(int* dest, int value, int pe) { nvshmem_int_p(dest, value, pe); }

// Puts op(src[i]) to dest[i] on `peer`, a grid-stride loop over n elements.
template <typename T, typename Op>
__global__ void transform_and_put(T* dest, const T* src, unsigned n, int peer, Op op) {
    unsigned stride = blockDim.x * gridDim.x;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        put_one(dest + i, op(src[i]), peer);
    }
    nvshmem_quiet();
}

// Sends `values` through a transform to the next PE and returns what the previous PE sent.
template <typename T, typename Op>
std::vector<T> exchange(const std::vector<T>& values, Op op, int peer) {
    size_t bytes = values.size() * sizeof(T);
    T* src = nullptr;
    CUDA_CHECK(cudaMalloc(&src, bytes));
    CUDA_CHECK(cudaMemcpy(src, values.data(), bytes, cudaMemcpyHostToDevice));
    T* dest = static_cast<T*>(nvshmem_malloc(bytes));
    if (dest == nullptr) throw std::runtime_error("nvshmem_malloc failed");
    unsigned n = static_cast<unsigned>(values.size());
    unsigned blocks = min(4u, (n + 127) / 128);
    transform_and_put<<<blocks, 128>>>(dest, src, n, peer, op);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    std::vector<T> received(values.size());
    CUDA_CHECK(cudaMemcpy(received.data(), dest, bytes, cudaMemcpyDeviceToHost));
    nvshmem_free(dest);
    CUDA_CHECK(cudaFree(src));
    return received;
}

int main() {
    try {
        nvshmem_init();
        int my_pe = nvshmem_my_pe();
        int n_pes = nvshmem_n_pes();
        int next = (my_pe + 1) % n_pes;
        int previous = (my_pe + n_pes - 1) % n_pes;
        auto start = std::chrono::steady_clock::now();

        std::vector<float> readings(1000);
        std::iota(readings.begin(), readings.end(), 1000.0f * my_pe);
        // the host computes what the previous PE will send on a thread of its own meanwhile
        std::vector<float> expected(readings.size());
        std::thread expect([&] {
            for (size_t i = 0; i < expected.size(); i++) expected[i] = std::sqrt(1000.0f * previous + i) * 2.0f + 1.0f;
        });
        auto scaled = exchange(readings, [] __device__(float x) { return std::sqrt(x) * 2.0f + 1.0f; }, next);
        expect.join();
        size_t right = 0;
        for (size_t i = 0; i < scaled.size(); i++) right += std::fabs(scaled[i] - expected[i]) <= 1e-5f * expected[i];
        std::cout << "PE " << my_pe << ": " << right << " of " << scaled.size() << " floats from PE " << previous
                  << " are right" << std::endl;

        int factor = 3 + my_pe;
        std::vector<int> counts(300, my_pe + 1);
        auto multiplied = exchange(counts, [factor] __device__(int x) { return max(x * factor, 0u); }, next);
        bool all_right = std::all_of(multiplied.begin(), multiplied.end(),
                                     [&](int v) { return v == (previous + 1) * (3 + previous); });
        std::cout << "PE " << my_pe << ": ints from PE " << previous << (all_right ? " are" : " are NOT")
                  << " right" << std::endl;

        try {
            CUDA_CHECK(cudaSetDevice(n_pes + 7));
            std::cout << "PE " << my_pe << ": cudaSetDevice took a device that does not exist" << std::endl;
        } catch (const std::runtime_error& error) {
            bool names_call = std::string(error.what()).find("cudaSetDevice") != std::string::npos;
            std::cout << "PE " << my_pe << ": caught the failed cudaSetDevice" << (names_call ? "" : " (unnamed)")
                      << std::endl;
        }

        auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
        std::cerr << "PE " << my_pe << ": " << elapsed.count() << " us" << std::endl;
        nvshmem_finalize();
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << std::endl;
        return 1;
    }
    return 0;
}
