// Every PE loads its samples on a std::thread while main waits for it, then sums them on the
// GPU. PE 2's loader finds its input missing and calls exit(2) from that thread, as a loader
// written for one process does; on the simulator that ends PE 2 alone (its atexit handler
// runs), and the others print their sums.
#include <nvshmem.h>

#include <cstdlib>
#include <iostream>
#include <numeric>
#include <thread>
#include <vector>

static int my_pe = -1;

__global__ void sum(const int* values, int n, int* total) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(total, values[i]);
    }
}

// Reads the PE's samples; a PE without input gives up the way a command-line tool does.
static std::vector<int> load_samples(int pe) {
    if (pe == 2) {
        std::cerr << "PE " << pe << ": no samples to load, giving up" << std::endl;
        exit(2);
    }
    std::vector<int> samples(500);
    std::iota(samples.begin(), samples.end(), pe);
    return samples;
}

int main() {
    nvshmem_init();
    my_pe = nvshmem_my_pe();
    std::atexit([] { std::cerr << "PE " << my_pe << ": atexit handler ran" << std::endl; });

    std::vector<int> samples;
    std::thread loader([&samples] { samples = load_samples(my_pe); });
    loader.join();

    int* values = nullptr;
    int* total = nullptr;
    cudaMalloc(&values, samples.size() * sizeof(int));
    cudaMalloc(&total, sizeof(int));
    cudaMemcpy(values, samples.data(), samples.size() * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(total, 0, sizeof(int));
    sum<<<2, 64>>>(values, static_cast<int>(samples.size()), total);
    int result = 0;
    cudaMemcpy(&result, total, sizeof result, cudaMemcpyDeviceToHost);
    const int expected = std::accumulate(samples.begin(), samples.end(), 0);
    std::cout << "PE " << my_pe << ": the sum of " << samples.size() << " samples is "
              << (result == expected ? "right" : "WRONG") << std::endl;
    cudaFree(total);
    cudaFree(values);
    nvshmem_finalize();
    return 0;
}
