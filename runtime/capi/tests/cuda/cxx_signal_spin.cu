// A C++ CUDA program in which a kernel spins on a signal: each PE puts a block of random
// doubles to the next PE with a put-with-signal, and the next PE's kernel spins on the signal
// word (nvshmem_signal_fetch) until the block has arrived, then sums it. The host checks the
// sum against its own, and a wrong one is an exception that main reports.
#include <nvshmem.h>
#include <nvshmemx.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#define CUDA_CHECK(call)                                                                                    \
    do {                                                                                                    \
        cudaError_t status = (call);                                                                        \
        if (status != cudaSuccess)                                                                          \
            throw std::runtime_error(std::string(#call) + " failed: " + cudaGetErrorString(status));       \
    } while (0)

constexpr int kThreads = 64;

__global__ void send_then_sum(const double* payload, double* inbox, uint64_t* arrived, unsigned n, int next,
                              double* sum) {
    __shared__ double partial[kThreads];
    if (threadIdx.x == 0) {
        nvshmem_putmem_signal(inbox, payload, n * sizeof(double), arrived, 1, NVSHMEM_SIGNAL_SET, next);
        // spin until the previous PE's block is here
        while (nvshmem_signal_fetch(arrived) == 0) {
        }
    }
    __syncthreads();
    double mine = 0.0;
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) mine += inbox[i];
    partial[threadIdx.x] = mine;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) *sum = partial[0];
}

// The block PE `pe` sends: the same generator and seed on every PE, so each can check another's.
static std::vector<double> payload_of(int pe, size_t n) {
    std::mt19937_64 generator(20260 + pe);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    std::vector<double> values(n);
    for (auto& v : values) v = uniform(generator);
    return values;
}

static void check_sum(double got, double expected, int from) {
    if (std::fabs(got - expected) > 1e-9 * std::max(1.0, std::fabs(expected)))
        throw std::runtime_error("the sum of PE " + std::to_string(from) + "'s block is " + std::to_string(got) +
                                 ", not " + std::to_string(expected));
}

int main() {
    try {
        nvshmem_init();
        int my_pe = nvshmem_my_pe();
        int n_pes = nvshmem_n_pes();
        int previous = (my_pe + n_pes - 1) % n_pes;
        const unsigned n = 4096;
        auto start = std::chrono::high_resolution_clock::now();

        std::vector<double> mine = payload_of(my_pe, n);
        double* payload = nullptr;
        double* sum = nullptr;
        CUDA_CHECK(cudaMalloc(&payload, n * sizeof(double)));
        CUDA_CHECK(cudaMalloc(&sum, sizeof(double)));
        CUDA_CHECK(cudaMemcpy(payload, mine.data(), n * sizeof(double), cudaMemcpyHostToDevice));
        auto* inbox = static_cast<double*>(nvshmem_malloc(n * sizeof(double)));
        auto* arrived = static_cast<uint64_t*>(nvshmem_calloc(1, sizeof(uint64_t)));
        assert(inbox != nullptr && arrived != nullptr);
        nvshmem_barrier_all();

        send_then_sum<<<1, kThreads>>>(payload, inbox, arrived, n, (my_pe + 1) % n_pes, sum);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        double got = 0.0;
        CUDA_CHECK(cudaMemcpy(&got, sum, sizeof got, cudaMemcpyDeviceToHost));
        std::vector<double> theirs = payload_of(previous, n);
        check_sum(got, std::accumulate(theirs.begin(), theirs.end(), 0.0), previous);
        std::cout << "PE " << my_pe << ": the block of PE " << previous << " arrived and sums right" << std::endl;

        auto took = std::chrono::duration<double, std::milli>(std::chrono::high_resolution_clock::now() - start);
        std::cerr << "PE " << my_pe << ": " << took.count() << " ms" << std::endl;
        nvshmem_barrier_all();
        nvshmem_free(arrived);
        nvshmem_free(inbox);
        CUDA_CHECK(cudaFree(sum));
        CUDA_CHECK(cudaFree(payload));
        nvshmem_finalize();
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << std::endl;
        return 1;
    }
    return 0;
}
