// A C++ CUDA program that runs NVSHMEM's on-stream collectives between its own kernels, with no
// host synchronisation until the end: a kernel fills a vector, an alltoall, fcollect, broadcast
// and reductions (one in place) run on the same stream, kernels read what they delivered, and
// only then does the host copy the results back and check them against its own arithmetic. A
// wrong element is an exception that main reports with the PE and the index.
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdint>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#define CUDA_CHECK(call)                                                                              \
    do {                                                                                              \
        cudaError_t status = (call);                                                                  \
        if (status != cudaSuccess)                                                                    \
            throw std::runtime_error(std::string(#call) + " failed: " + cudaGetErrorString(status)); \
    } while (0)

constexpr size_t kPerPe = 3000;  // elements each PE sends each PE

// What PE `pe` holds at `i` before the collectives.
__host__ __device__ long long value_of(int pe, size_t i) { return 1000003LL * pe + (long long)i; }

__global__ void fill(long long* v, size_t n, int pe) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v[i] = value_of(pe, i);
}

// After the alltoall the kernel doubles what arrived, so that the next collective sends data
// that only a kernel on this stream can have made.
__global__ void twice(long long* v, size_t n) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v[i] *= 2;
}

template <typename T>
static std::vector<T> fetch(const T* device, size_t n) {
    std::vector<T> host(n);
    CUDA_CHECK(cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
}

template <typename T>
static void expect(const std::vector<T>& got, size_t i, T want, const char* what) {
    if (got[i] != want) {
        std::ostringstream message;
        message << what << "[" << i << "] is " << got[i] << ", not " << want;
        throw std::runtime_error(message.str());
    }
}

int main() {
    int my_pe = -1;
    try {
        nvshmem_init();
        my_pe = nvshmem_my_pe();
        int n_pes = nvshmem_n_pes();
        size_t total = kPerPe * n_pes;
        cudaStream_t stream;
        CUDA_CHECK(cudaStreamCreate(&stream));

        auto* source = static_cast<long long*>(nvshmem_malloc(total * sizeof(long long)));
        auto* exchanged = static_cast<long long*>(nvshmem_malloc(total * sizeof(long long)));
        auto* gathered = static_cast<long long*>(nvshmem_malloc(total * n_pes * sizeof(long long)));
        auto* broadcast = static_cast<long long*>(nvshmem_malloc(kPerPe * sizeof(long long)));
        auto* sums = static_cast<long long*>(nvshmem_malloc(total * sizeof(long long)));
        if (!source || !exchanged || !gathered || !broadcast || !sums)
            throw std::runtime_error("nvshmem_malloc failed");

        fill<<<8, 128, 0, stream>>>(source, total, my_pe);
        nvshmemx_longlong_alltoall_on_stream(NVSHMEM_TEAM_WORLD, exchanged, source, kPerPe, stream);
        twice<<<8, 128, 0, stream>>>(exchanged, total);
        nvshmemx_longlong_fcollect_on_stream(NVSHMEM_TEAM_WORLD, gathered, exchanged, total, stream);
        nvshmemx_longlong_broadcast_on_stream(NVSHMEM_TEAM_WORLD, broadcast, source, kPerPe, n_pes - 1, stream);
        nvshmemx_longlong_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, sums, exchanged, total, stream);
        // In place: the dest is the source.
        nvshmemx_longlong_max_reduce_on_stream(NVSHMEM_TEAM_WORLD, source, source, total, stream);
        nvshmemx_barrier_all_on_stream(stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));

        // exchanged[p * kPerPe + i] = 2 * PE p's source[my_pe * kPerPe + i].
        auto got = fetch(exchanged, total);
        for (int p = 0; p < n_pes; ++p)
            for (size_t i = 0; i < kPerPe; ++i)
                expect(got, p * kPerPe + i, 2 * value_of(p, my_pe * kPerPe + i), "alltoall");
        auto all = fetch(gathered, total * n_pes);
        for (int q = 0; q < n_pes; ++q)
            for (int p = 0; p < n_pes; ++p)
                for (size_t i = 0; i < kPerPe; ++i)
                    expect(all, (q * n_pes + p) * kPerPe + i, 2 * value_of(p, q * kPerPe + i), "fcollect");
        auto root = fetch(broadcast, kPerPe);
        for (size_t i = 0; i < kPerPe; ++i) expect(root, i, value_of(n_pes - 1, i), "broadcast");
        auto summed = fetch(sums, total);
        for (size_t j = 0; j < total; ++j) {
            long long want = 0;
            for (int q = 0; q < n_pes; ++q) want += 2 * value_of(j / kPerPe, q * kPerPe + j % kPerPe);
            expect(summed, j, want, "sum_reduce");
        }
        auto largest = fetch(source, total);
        for (size_t j = 0; j < total; ++j) expect(largest, j, value_of(n_pes - 1, j), "max_reduce in place");

        nvshmem_free(sums);
        nvshmem_free(broadcast);
        nvshmem_free(gathered);
        nvshmem_free(exchanged);
        nvshmem_free(source);
        CUDA_CHECK(cudaStreamDestroy(stream));
        std::cout << "PE " << my_pe << ": alltoall, fcollect, broadcast and reductions on the stream are right"
                  << std::endl;
        nvshmem_finalize();
    } catch (const std::exception& e) {
        std::cerr << "PE " << my_pe << ": " << e.what() << std::endl;
        return 1;
    }
    return 0;
}
