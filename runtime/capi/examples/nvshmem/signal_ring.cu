// A ring of block-wide puts with signals: in a kernel started with nvshmemx_collective_launch,
// each PE sends a block of words to the next PE with nvshmemx_putmem_signal_nbi_block, and for
// n_pes rounds forwards what the previous PE sent it, waiting for it with
// nvshmem_signal_wait_until; after n_pes rounds every PE's block has come home, and each PE
// checks on the host that every round brought the block it should.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdint.h>
#include <stdio.h>

#define NELEM 256
#define THREADS 128

// slots[r] holds what round r brought; signals[r] says it arrived. One slot and one signal per
// round, so a round's put never overwrites a block this PE has yet to forward, and a signal is
// never mistaken for an earlier round's (puts with signal are not ordered with one another).
__global__ void signal_ring(const int* mine, int* slots, uint64_t* signals) {
    int my_pe = nvshmem_my_pe();
    int n_pes = nvshmem_n_pes();
    int next = (my_pe + 1) % n_pes;
    for (int round = 0; round < n_pes; round++) {
        const int* source = mine;
        if (round > 0) {
            // the block to forward is the one the previous round brought
            if (threadIdx.x == 0) nvshmem_signal_wait_until(&signals[round - 1], NVSHMEM_CMP_EQ, 1);
            __syncthreads();
            source = slots + (round - 1) * NELEM;
        }
        nvshmemx_putmem_signal_nbi_block(slots + round * NELEM, source, NELEM * sizeof(int), &signals[round], 1,
                                         NVSHMEM_SIGNAL_SET, next);
    }
    // the last round's block comes from the previous PE's last put: wait for it, and complete
    // this PE's own puts before the kernel ends
    if (threadIdx.x == 0) {
        nvshmem_signal_wait_until(&signals[n_pes - 1], NVSHMEM_CMP_EQ, 1);
        nvshmem_quiet();
    }
}

int main() {
    nvshmem_init();
    int my_pe = nvshmem_my_pe();
    int n_pes = nvshmem_n_pes();

    int host[NELEM];
    for (int i = 0; i < NELEM; i++) host[i] = my_pe * 1000 + i;
    int* mine;
    cudaMalloc(&mine, sizeof(host));
    cudaMemcpy(mine, host, sizeof(host), cudaMemcpyHostToDevice);
    int* slots = (int*) nvshmem_calloc(n_pes * NELEM, sizeof(int));
    uint64_t* signals = (uint64_t*) nvshmem_calloc(n_pes, sizeof(uint64_t));
    // the signals must be zero on every PE before any PE's kernel can set one
    nvshmem_barrier_all();

    void* args[] = {&mine, &slots, &signals};
    nvshmemx_collective_launch((const void*) signal_ring, dim3(1), dim3(THREADS), args, 0, 0);
    cudaDeviceSynchronize();

    // round r brought the block of PE my_pe - 1 - r
    int* got = (int*) malloc(n_pes * NELEM * sizeof(int));
    cudaMemcpy(got, slots, n_pes * NELEM * sizeof(int), cudaMemcpyDeviceToHost);
    int right = 0;
    for (int round = 0; round < n_pes; round++) {
        int from = ((my_pe - 1 - round) % n_pes + n_pes) % n_pes;
        int ok = 1;
        for (int i = 0; i < NELEM; i++) ok &= got[round * NELEM + i] == from * 1000 + i;
        right += ok;
    }
    int home = got[(n_pes - 1) * NELEM] / 1000;
    printf("PE %d: %d of %d rounds brought the right block; the last brought PE %d's own\n", my_pe, right, n_pes,
           home);

    nvshmem_barrier_all();
    free(got);
    cudaFree(mine);
    nvshmem_free(slots);
    nvshmem_free(signals);
    nvshmem_finalize();
    return 0;
}
