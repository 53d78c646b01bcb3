// NVSHMEM 3.x's half and bfloat16 calls: each PE puts a row of halves and a row of bfloat16s to
// the next PE (nvshmem_half_put, nvshmemx_bfloat16_put_block, nvshmem_half_p and _g), then the
// PEs sum what they received with nvshmem_half_sum_reduce and
// nvshmemx_bfloat16_sum_reduce_block. The values are small multiples of a quarter, exact in
// both types, so every sum is exact and each PE checks it on the host in float.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

constexpr int kCount = 64;

static void check(cudaError_t status, const std::string& what) {
    if (status != cudaSuccess) throw std::runtime_error(what + ": " + cudaGetErrorString(status));
}

// The value PE `pe` sends at `i`: a quarter times a small integer.
__host__ __device__ float sent(int pe, int i) { return 0.25f * static_cast<float>((pe * 7 + i) % 29); }

__global__ void send(half* halves_in, __nv_bfloat16* brains_in, half* last, int next) {
    __shared__ half row[kCount];
    __shared__ __nv_bfloat16 brow[kCount];
    int pe = nvshmem_my_pe();
    for (int i = threadIdx.x; i < kCount; i += blockDim.x) {
        row[i] = __float2half(sent(pe, i));
        brow[i] = __float2bfloat16(sent(pe, i));
    }
    __syncthreads();
    if (threadIdx.x == 0) nvshmem_half_put(halves_in, row, kCount, next);
    nvshmemx_bfloat16_put_block(brains_in, brow, kCount, next);
    if (threadIdx.x == 0) {
        // One element by p, read back from the peer by g once it is there.
        nvshmem_half_p(last, __float2half(-1.5f * static_cast<float>(pe + 1)), next);
        nvshmem_quiet();
    }
}

// A launch's collectives come from one group per PE: one thread here, the block below.
__global__ void sum_halves(half* out, const half* in) { nvshmem_half_sum_reduce(NVSHMEM_TEAM_WORLD, out, in, kCount); }

__global__ void sum_brains(__nv_bfloat16* out, const __nv_bfloat16* in) {
    nvshmemx_bfloat16_sum_reduce_block(NVSHMEM_TEAM_WORLD, out, in, kCount);
}

__global__ void peek(const half* last, int pe, float* seen) { *seen = __half2float(nvshmem_half_g(last, pe)); }

int main() {
    try {
        nvshmem_init();
        const int me = nvshmem_my_pe(), n_pes = nvshmem_n_pes();
        auto* halves_in = static_cast<half*>(nvshmem_malloc(kCount * sizeof(half)));
        auto* halves_out = static_cast<half*>(nvshmem_malloc(kCount * sizeof(half)));
        auto* brains_in = static_cast<__nv_bfloat16*>(nvshmem_malloc(kCount * sizeof(__nv_bfloat16)));
        auto* brains_out = static_cast<__nv_bfloat16*>(nvshmem_malloc(kCount * sizeof(__nv_bfloat16)));
        auto* last = static_cast<half*>(nvshmem_malloc(sizeof(half)));
        if (!halves_in || !halves_out || !brains_in || !brains_out || !last) throw std::runtime_error("nvshmem_malloc failed");
        float* seen = nullptr;
        check(cudaMalloc(&seen, sizeof(float)), "cudaMalloc");

        send<<<1, 32>>>(halves_in, brains_in, last, (me + 1) % n_pes);
        check(cudaDeviceSynchronize(), "send");
        nvshmem_barrier_all();
        sum_halves<<<1, 1>>>(halves_out, halves_in);
        sum_brains<<<1, 32>>>(brains_out, brains_in);
        check(cudaDeviceSynchronize(), "sum");
        const int next = (me + 1) % n_pes, previous = (me + n_pes - 1) % n_pes;
        peek<<<1, 1>>>(last, next, seen);
        check(cudaDeviceSynchronize(), "peek");

        std::vector<half> received(kCount), halves(kCount);
        std::vector<__nv_bfloat16> brains(kCount);
        check(cudaMemcpy(received.data(), halves_in, kCount * sizeof(half), cudaMemcpyDeviceToHost), "copy");
        check(cudaMemcpy(halves.data(), halves_out, kCount * sizeof(half), cudaMemcpyDeviceToHost), "copy");
        check(cudaMemcpy(brains.data(), brains_out, kCount * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost), "copy");
        float peeked = 0;
        check(cudaMemcpy(&peeked, seen, sizeof peeked, cudaMemcpyDeviceToHost), "copy");

        int wrong = 0;
        for (int i = 0; i < kCount; i++) {
            float total = 0;
            for (int pe = 0; pe < n_pes; pe++) total += sent(pe, i);
            if (__half2float(received[i]) != sent(previous, i)) wrong++;
            if (__half2float(halves[i]) != total) wrong++;
            if (__bfloat162float(brains[i]) != total) wrong++;
        }
        std::cout << "PE " << me << ": " << kCount << " halves from PE " << previous << " and the sums of "
                  << n_pes << " PEs " << (wrong == 0 ? "are right" : "are WRONG") << ", PE " << next
                  << " holds " << peeked << std::endl;
        nvshmem_barrier_all();
        cudaFree(seen);
        nvshmem_free(last);
        nvshmem_free(brains_out);
        nvshmem_free(brains_in);
        nvshmem_free(halves_out);
        nvshmem_free(halves_in);
        nvshmem_finalize();
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << std::endl;
        return 1;
    }
    return 0;
}
