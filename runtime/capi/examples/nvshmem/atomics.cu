// Remote atomics from every thread of several blocks: each thread takes a ticket from PE 0's
// counter with nvshmem_int_atomic_fetch_add and marks it taken with nvshmem_int_atomic_inc,
// counts itself into the next PE's hit counter with nvshmem_int_atomic_inc, and tries to claim
// the next PE's slot with nvshmem_int_atomic_compare_swap. After a barrier each PE prints its
// hits and who claimed its slot, and PE 0 the counter and whether every ticket was taken once.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>

#define BLOCKS 4
#define THREADS 64

__global__ void atomics(int* counter, int* tickets, int* hits, int* slot, int* winners) {
    int my_pe = nvshmem_my_pe();
    int next = (my_pe + 1) % nvshmem_n_pes();
    // fetch_add hands each thread of every PE a different ticket; which one is a matter of
    // timing, so the ticket is only used to mark itself taken
    int ticket = nvshmem_int_atomic_fetch_add(counter, 1, 0);
    nvshmem_int_atomic_inc(&tickets[ticket], 0);
    nvshmem_int_atomic_inc(hits, next);
    // the slot starts at -1: exactly one of this PE's threads finds it so and claims it
    if (nvshmem_int_atomic_compare_swap(slot, -1, my_pe, next) == -1) atomicAdd(winners, 1);
    // the kernel's atomics are complete before the host's barrier
    nvshmem_quiet();
}

int main() {
    nvshmem_init();
    int my_pe = nvshmem_my_pe();
    int n_pes = nvshmem_n_pes();
    int total = n_pes * BLOCKS * THREADS;

    int* counter = (int*) nvshmem_calloc(1, sizeof(int));
    int* tickets = (int*) nvshmem_calloc(total, sizeof(int));
    int* hits = (int*) nvshmem_calloc(1, sizeof(int));
    int* slot = (int*) nvshmem_malloc(sizeof(int));
    int minus_one = -1;
    cudaMemcpy(slot, &minus_one, sizeof(int), cudaMemcpyHostToDevice);
    int* winners;
    cudaMalloc(&winners, sizeof(int));
    cudaMemset(winners, 0, sizeof(int));
    // every PE's slot is -1 before any PE's threads try to claim it
    nvshmem_barrier_all();

    atomics<<<BLOCKS, THREADS>>>(counter, tickets, hits, slot, winners);
    cudaDeviceSynchronize();
    nvshmem_barrier_all();

    int got_hits, got_slot, got_winners;
    cudaMemcpy(&got_hits, hits, sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(&got_slot, slot, sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(&got_winners, winners, sizeof(int), cudaMemcpyDeviceToHost);
    printf("PE %d: %d hits; slot claimed by PE %d; %d of this PE's threads won a claim\n", my_pe, got_hits, got_slot,
           got_winners);
    if (my_pe == 0) {
        int got_counter;
        cudaMemcpy(&got_counter, counter, sizeof(int), cudaMemcpyDeviceToHost);
        int* marks = (int*) malloc(total * sizeof(int));
        cudaMemcpy(marks, tickets, total * sizeof(int), cudaMemcpyDeviceToHost);
        int once = 0;
        for (int i = 0; i < total; i++) once += marks[i] == 1;
        printf("PE 0: counter = %d; %d of %d tickets taken exactly once\n", got_counter, once, total);
        free(marks);
    }

    nvshmem_barrier_all();
    cudaFree(winners);
    nvshmem_free(counter);
    nvshmem_free(tickets);
    nvshmem_free(hits);
    nvshmem_free(slot);
    nvshmem_finalize();
    return 0;
}
