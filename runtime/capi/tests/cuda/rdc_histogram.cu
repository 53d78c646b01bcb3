// A program of several files built with -rdc=true whose device variables are defined in
// rdc_counters.cu: this file's kernel counts into them through count_value and reads
// `histogram` itself, and main sets `bucket_width` with cudaMemcpyToSymbol, clears and reads
// the histogram through cudaGetSymbolAddress and reads `out_of_range` with
// cudaMemcpyFromSymbol. The PEs then sum their histograms with an NVSHMEM reduction.
#include "rdc_histogram.h"

#include <nvshmem.h>

#include <algorithm>
#include <iostream>
#include <stdexcept>

static void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

__global__ void count_values(unsigned n) {
    int pe = nvshmem_my_pe();
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        count_value(value_of(pe, i, bucket_width));
    }
}

__global__ void find_busiest(unsigned long long* busiest) {
    unsigned long long most = 0;
    for (int b = 0; b < kBuckets; b++) most = histogram[b] > most ? histogram[b] : most;
    *busiest = most;
}

int main() {
    try {
        nvshmem_init();
        const int my_pe = nvshmem_my_pe(), n_pes = nvshmem_n_pes();
        const int width = 4;
        const unsigned n = 1000;
        check(cudaMemcpyToSymbol(bucket_width, &width, sizeof width), "cudaMemcpyToSymbol(bucket_width)");
        void* counts = nullptr;
        check(cudaGetSymbolAddress(&counts, histogram), "cudaGetSymbolAddress(histogram)");
        check(cudaMemset(counts, 0, sizeof(unsigned long long) * kBuckets), "cudaMemset(histogram)");
        const int zero = 0;
        check(cudaMemcpyToSymbol(out_of_range, &zero, sizeof zero), "cudaMemcpyToSymbol(out_of_range)");

        auto* busiest = static_cast<unsigned long long*>(nvshmem_malloc(sizeof(unsigned long long)));
        auto* mine = static_cast<long long*>(nvshmem_malloc(sizeof(long long) * (kBuckets + 1)));
        auto* world = static_cast<long long*>(nvshmem_malloc(sizeof(long long) * (kBuckets + 1)));
        if (busiest == nullptr || mine == nullptr || world == nullptr) throw std::runtime_error("nvshmem_malloc failed");
        count_values<<<2, 64>>>(n);
        find_busiest<<<1, 1>>>(busiest);
        check(cudaDeviceSynchronize(), "count_values");

        // The PE's histogram and its out-of-range count, side by side in symmetric memory.
        check(cudaMemcpy(mine, counts, sizeof(long long) * kBuckets, cudaMemcpyDeviceToDevice), "cudaMemcpy(histogram)");
        int outside = 0;
        check(cudaMemcpyFromSymbol(&outside, out_of_range, sizeof outside), "cudaMemcpyFromSymbol(out_of_range)");
        long long outside_wide = outside;
        check(cudaMemcpy(mine + kBuckets, &outside_wide, sizeof outside_wide, cudaMemcpyHostToDevice), "cudaMemcpy(out_of_range)");
        unsigned long long most = 0;
        check(cudaMemcpy(&most, busiest, sizeof most, cudaMemcpyDeviceToHost), "cudaMemcpy(busiest)");
        std::vector<long long> local(kBuckets);
        check(cudaMemcpy(local.data(), mine, sizeof(long long) * kBuckets, cudaMemcpyDeviceToHost), "cudaMemcpy(local)");
        if (most != static_cast<unsigned long long>(*std::max_element(local.begin(), local.end()))) {
            std::cout << "PE " << my_pe << ": the kernel's busiest bucket is WRONG" << std::endl;
        }

        nvshmem_barrier_all();
        nvshmem_longlong_sum_reduce(NVSHMEM_TEAM_WORLD, world, mine, kBuckets + 1);
        std::vector<long long> totals(kBuckets + 1);
        check(cudaMemcpy(totals.data(), world, sizeof(long long) * totals.size(), cudaMemcpyDeviceToHost), "cudaMemcpy(world)");
        std::cout << summary(my_pe, n_pes, totals, width, n) << std::endl;
        nvshmem_free(world);
        nvshmem_free(mine);
        nvshmem_free(busiest);
        nvshmem_finalize();
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << std::endl;
        return 1;
    }
    return 0;
}
