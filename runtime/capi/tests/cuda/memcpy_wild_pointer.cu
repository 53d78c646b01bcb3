// cudaMemcpy with a pointer that is not memory of the process (a stale address kept in an
// integer) and with a size far past the end of a buffer (a byte count computed with the wrong
// element size): the simulator's runtime returns cudaErrorInvalidValue for each, and says why
// once, and the program goes on with the copies it meant. A GPU's runtime does not check host
// pointers: there the wild copies crash the process, so this program is for the simulator only.
#include <nvshmem.h>

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

static std::string outcome(cudaError_t status) {
    return status == cudaErrorInvalidValue ? "refused" : std::string("gave ") + cudaGetErrorString(status);
}

int main() {
    nvshmem_init();
    const int me = nvshmem_my_pe();
    std::vector<int> host(256, me);
    int* device = nullptr;
    if (cudaMalloc(&device, host.size() * sizeof(int)) != cudaSuccess) return 1;

    std::uintptr_t stale = 0x10;  // what a freed handle left behind
    cudaError_t wild = cudaMemcpy(device, reinterpret_cast<const void*>(stale), 64, cudaMemcpyHostToDevice);
    cudaError_t wild_again = cudaMemcpy(reinterpret_cast<void*>(stale), device, 64, cudaMemcpyDeviceToHost);
    cudaError_t huge = cudaMemcpy(device, host.data(), host.size() * (std::size_t{1} << 40), cudaMemcpyHostToDevice);
    cudaError_t last = cudaGetLastError();
    cudaError_t good = cudaMemcpy(device, host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice);
    std::vector<int> back(host.size(), -1);
    good = good == cudaSuccess ? cudaMemcpy(back.data(), device, back.size() * sizeof(int), cudaMemcpyDeviceToHost) : good;

    std::cout << "PE " << me << ": wild source " << outcome(wild) << ", wild destination " << outcome(wild_again)
              << ", huge size " << outcome(huge) << ", last error " << outcome(last) << ", then the copies "
              << (good == cudaSuccess && back == host ? "work" : "FAIL") << std::endl;
    cudaFree(device);
    nvshmem_finalize();
    return 0;
}
