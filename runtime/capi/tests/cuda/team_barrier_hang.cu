// A C++ CUDA program that hangs in a team's barrier: the even PEs split off a team, and PE 0's
// kernel meets it in nvshmemx_barrier_block, but PE 2 was meant to launch the same kernel and
// goes straight on to nvshmem_barrier_all from the host instead. rshmem must end the run and
// name the wait: PE 0, the kernel, its block and thread, and the team barrier it waits in.
#include <nvshmem.h>
#include <nvshmemx.h>

#include <iostream>
#include <stdexcept>
#include <string>

#define CUDA_CHECK(call)                                                                              \
    do {                                                                                              \
        cudaError_t status = (call);                                                                  \
        if (status != cudaSuccess)                                                                    \
            throw std::runtime_error(std::string(#call) + " failed: " + cudaGetErrorString(status)); \
    } while (0)

__global__ void meet_partner(nvshmem_team_t team, int* met) {
    nvshmemx_barrier_block(team);
    if (threadIdx.x == 0) *met = 1;
}

int main() {
    try {
        nvshmem_init();
        const int my_pe = nvshmem_my_pe();
        nvshmem_team_t evens = NVSHMEM_TEAM_INVALID;
        nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 2, nvshmem_n_pes() / 2, nullptr, 0, &evens);
        int* met = nullptr;
        CUDA_CHECK(cudaMalloc(&met, sizeof(int)));
        nvshmem_barrier_all();

        if (my_pe == 0) {
            meet_partner<<<1, 64>>>(evens, met);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaDeviceSynchronize());
        }
        nvshmem_barrier_all();
        std::cout << "PE " << my_pe << ": done" << std::endl;
        CUDA_CHECK(cudaFree(met));
        if (evens != NVSHMEM_TEAM_INVALID) nvshmem_team_destroy(evens);
        nvshmem_finalize();
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << std::endl;
        return 1;
    }
    return 0;
}
