// A program of several files built with -rdc=true: this kernel calls weight_of and clamp_to,
// defined in cxx_rdc_weights.cu, and main reports through cxx_rdc_report.cpp. Each PE weights
// its values and puts them to the next PE, which sums them on the host.
#include "cxx_rdc.h"

#include <nvshmem.h>

#include <iostream>
#include <numeric>
#include <stdexcept>

__global__ void weigh_and_put(int* inbox, unsigned n, int next) {
    int pe = nvshmem_my_pe();
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) {
        nvshmem_int_p(inbox + i, clamp_to(weight_of(pe, i) * static_cast<int>(i), 0, 1 << 20), next);
    }
    nvshmem_quiet();
}

int main() {
    try {
        nvshmem_init();
        const int my_pe = nvshmem_my_pe(), n_pes = nvshmem_n_pes();
        const int next = (my_pe + 1) % n_pes, previous = (my_pe + n_pes - 1) % n_pes;
        const unsigned n = 512;
        auto* inbox = static_cast<int*>(nvshmem_malloc(n * sizeof(int)));
        if (inbox == nullptr) throw std::runtime_error("nvshmem_malloc failed");
        weigh_and_put<<<1, 128>>>(inbox, n, next);
        if (cudaDeviceSynchronize() != cudaSuccess) throw std::runtime_error("the kernel failed");
        nvshmem_barrier_all();
        std::vector<int> got = copy_to_host(inbox, n);
        long long expected = 0;
        for (unsigned i = 0; i < n; i++) expected += clamp_to(static_cast<int>((i * 7u + previous * 3u) % 11u), 1, 9) * i;
        std::cout << report(my_pe, previous, std::accumulate(got.begin(), got.end(), 0LL), expected) << std::endl;
        nvshmem_free(inbox);
        nvshmem_finalize();
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << std::endl;
        return 1;
    }
    return 0;
}
