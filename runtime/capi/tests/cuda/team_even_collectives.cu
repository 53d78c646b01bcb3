// Kernels that synchronise and exchange data on a team split from the world: the even PEs.
// Each even PE checks, inside kernels, its numbering in the team, a barrier at thread, warp
// and block scope, an alltoall and a sum reduction of the team's blocks, then prints one line.
// The odd PEs are left out of the team and only meet the others at the world barriers.
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#define CUDA_CHECK(call) check_cuda((call), #call, __LINE__)

static void check_cuda(cudaError_t status, const char* call, int line) {
    if (status != cudaSuccess) {
        std::ostringstream message;
        message << call << " failed at line " << line << ": " << cudaGetErrorString(status);
        throw std::runtime_error(message.str());
    }
}

constexpr int kPerPeer = 4;  // ints each team member sends each other member

struct Numbering {
    int my_pe;
    int n_pes;
    int world_of_last;
    int outside;
};

__global__ void numbering(nvshmem_team_t team, Numbering* out) {
    out->my_pe = nvshmem_team_my_pe(team);
    out->n_pes = nvshmem_team_n_pes(team);
    out->world_of_last = nvshmem_team_translate_pe(team, out->n_pes - 1, NVSHMEM_TEAM_WORLD);
    out->outside = nvshmem_team_translate_pe(team, out->n_pes, NVSHMEM_TEAM_WORLD);
}

// One thread writes `round` into its own slot of every member's counters before the barrier:
// after it every slot on this member must hold the round; `seen` gets the smallest.
__global__ void thread_barrier(nvshmem_team_t team, int* counters, int round, int* seen) {
    int me = nvshmem_team_my_pe(team);
    int n = nvshmem_team_n_pes(team);
    for (int j = 0; j < n; j++) {
        nvshmem_int_p(counters + me, round, nvshmem_team_translate_pe(team, j, NVSHMEM_TEAM_WORLD));
    }
    nvshmem_barrier(team);
    int smallest = counters[0];
    for (int j = 1; j < n; j++) smallest = min(smallest, counters[j]);
    *seen = smallest;
    nvshmem_team_sync(team);
}

// The warp's first thread writes `round` into its slot on the next member; after the warp's
// barrier its last thread reads what the previous member wrote.
__global__ void warp_barrier(nvshmem_team_t team, int* counters, int round, int* seen) {
    int me = nvshmem_team_my_pe(team);
    int n = nvshmem_team_n_pes(team);
    if (threadIdx.x == 0) {
        nvshmem_int_p(counters + me, round, nvshmem_team_translate_pe(team, (me + 1) % n, NVSHMEM_TEAM_WORLD));
    }
    nvshmemx_barrier_warp(team);
    if (threadIdx.x == 31) *seen = counters[(me + n - 1) % n];
    nvshmemx_team_sync_warp(team);
}

// The block fills its row of blocks for the team, exchanges them and sums a vector.
__global__ void block_collectives(nvshmem_team_t team, int* send, int* receive, long* partial, long* total) {
    int me = nvshmem_team_my_pe(team);
    int n = nvshmem_team_n_pes(team);
    for (int i = threadIdx.x; i < n * kPerPeer; i += blockDim.x) {
        send[i] = 1000 * me + i;  // block j (i / kPerPeer) goes to member j
    }
    for (int i = threadIdx.x; i < kPerPeer; i += blockDim.x) {
        partial[i] = (me + 1) * (i + 1);
    }
    __syncthreads();
    nvshmemx_barrier_block(team);
    nvshmemx_int_alltoall_block(team, receive, send, kPerPeer);
    nvshmemx_long_sum_reduce_block(team, total, partial, kPerPeer);
}

int main() {
    try {
        nvshmem_init();
        int world_pe = nvshmem_my_pe();
        int world_n = nvshmem_n_pes();
        nvshmem_team_t evens = NVSHMEM_TEAM_INVALID;
        nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 2, (world_n + 1) / 2, nullptr, 0, &evens);
        bool member = world_pe % 2 == 0;
        if (member != (evens != NVSHMEM_TEAM_INVALID)) {
            std::cerr << "PE " << world_pe << ": the split gave the wrong team\n";
            exit(1);
        }
        int team_n = (world_n + 1) / 2;
        int* counters = static_cast<int*>(nvshmem_malloc(sizeof(int) * team_n));
        int* send = static_cast<int*>(nvshmem_malloc(sizeof(int) * team_n * kPerPeer));
        int* receive = static_cast<int*>(nvshmem_malloc(sizeof(int) * team_n * kPerPeer));
        long* partial = static_cast<long*>(nvshmem_malloc(sizeof(long) * kPerPeer));
        long* total = static_cast<long*>(nvshmem_malloc(sizeof(long) * kPerPeer));
        Numbering* numbers = nullptr;
        int* seen = nullptr;
        CUDA_CHECK(cudaMalloc(&numbers, sizeof(Numbering)));
        CUDA_CHECK(cudaMalloc(&seen, sizeof(int)));
        nvshmem_barrier_all();
        if (member) {
            numbering<<<1, 1>>>(evens, numbers);
            CUDA_CHECK(cudaDeviceSynchronize());
            Numbering got{};
            CUDA_CHECK(cudaMemcpy(&got, numbers, sizeof got, cudaMemcpyDeviceToHost));
            if (got.my_pe != world_pe / 2 || got.n_pes != team_n || got.world_of_last != 2 * (team_n - 1) ||
                got.outside != -1) {
                std::cerr << "PE " << world_pe << ": team numbering " << got.my_pe << "/" << got.n_pes << ", last is world PE "
                          << got.world_of_last << ", outside " << got.outside << "\n";
                exit(1);
            }
            for (int round = 1; round <= 3; round++) {
                thread_barrier<<<1, 1>>>(evens, counters, round, seen);
                CUDA_CHECK(cudaDeviceSynchronize());
                int value = 0;
                CUDA_CHECK(cudaMemcpy(&value, seen, sizeof value, cudaMemcpyDeviceToHost));
                if (value != round) {
                    std::cerr << "PE " << world_pe << ": after thread barrier " << round << " a counter is " << value << "\n";
                    exit(1);
                }
            }
            warp_barrier<<<1, 32>>>(evens, counters, 10, seen);
            CUDA_CHECK(cudaDeviceSynchronize());
            int warp_seen = 0;
            CUDA_CHECK(cudaMemcpy(&warp_seen, seen, sizeof warp_seen, cudaMemcpyDeviceToHost));
            if (warp_seen != 10) {
                std::cerr << "PE " << world_pe << ": after the warp barrier the counter is " << warp_seen << "\n";
                exit(1);
            }
            block_collectives<<<1, 64>>>(evens, send, receive, partial, total);
            CUDA_CHECK(cudaDeviceSynchronize());
            std::vector<int> received(team_n * kPerPeer);
            std::vector<long> sums(kPerPeer);
            CUDA_CHECK(cudaMemcpy(received.data(), receive, sizeof(int) * received.size(), cudaMemcpyDeviceToHost));
            CUDA_CHECK(cudaMemcpy(sums.data(), total, sizeof(long) * sums.size(), cudaMemcpyDeviceToHost));
            int me = world_pe / 2;
            for (int j = 0; j < team_n; j++) {
                for (int k = 0; k < kPerPeer; k++) {
                    int want = 1000 * j + me * kPerPeer + k;
                    if (received[j * kPerPeer + k] != want) {
                        std::cerr << "PE " << world_pe << ": alltoall block " << j << " element " << k << " is "
                                  << received[j * kPerPeer + k] << ", not " << want << "\n";
                        exit(1);
                    }
                }
            }
            long members_sum = static_cast<long>(team_n) * (team_n + 1) / 2;
            for (int i = 0; i < kPerPeer; i++) {
                if (sums[i] != members_sum * (i + 1)) {
                    std::cerr << "PE " << world_pe << ": sum " << i << " is " << sums[i] << ", not "
                              << members_sum * (i + 1) << "\n";
                    exit(1);
                }
            }
            std::cout << "PE " << world_pe << " is PE " << me << " of " << team_n
                      << " even PEs: barriers, alltoall and sum agree" << std::endl;
            nvshmem_team_destroy(evens);
        }
        nvshmem_barrier_all();
        CUDA_CHECK(cudaFree(numbers));
        CUDA_CHECK(cudaFree(seen));
        nvshmem_free(total);
        nvshmem_free(partial);
        nvshmem_free(receive);
        nvshmem_free(send);
        nvshmem_free(counters);
        nvshmem_finalize();
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << "\n";
        return 1;
    }
    return 0;
}
