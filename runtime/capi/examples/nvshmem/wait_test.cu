// Point-to-point synchronisation in a kernel: each PE puts a block of words to the next PE,
// orders it before a flag with nvshmem_fence, and sets the flag with nvshmem_int_p; the next PE
// waits for the flag with nvshmem_int_wait_until and then reads the words. A second round does
// the same with a second flag that the receiver polls with nvshmem_int_test.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>

#define NELEM 64

// checks[0] and checks[1]: how many words of each round were as the previous PE sent them
__global__ void wait_test(const int* first_src, const int* second_src, int* first, int* second, int* ready,
                          int* done, int* checks) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    int my_pe = nvshmem_my_pe();
    int n_pes = nvshmem_n_pes();
    int next = (my_pe + 1) % n_pes;
    int prev = (my_pe - 1 + n_pes) % n_pes;

    nvshmem_int_put(first, first_src, NELEM, next);
    // the fence delivers the words before the flag: whoever sees the flag sees the words
    nvshmem_fence();
    nvshmem_int_p(ready, 1, next);
    nvshmem_int_wait_until(ready, NVSHMEM_CMP_EQ, 1);
    int ok = 0;
    for (int i = 0; i < NELEM; i++) ok += first[i] == prev * 1000 + i;
    checks[0] = ok;

    nvshmem_int_put(second, second_src, NELEM, next);
    nvshmem_fence();
    nvshmem_int_p(done, 1, next);
    // test returns at once; a kernel polls it where it has other work to do between polls
    while (!nvshmem_int_test(done, NVSHMEM_CMP_EQ, 1)) {
    }
    ok = 0;
    for (int i = 0; i < NELEM; i++) ok += second[i] == -(prev * 1000 + i);
    checks[1] = ok;
    // complete this PE's puts before its buffers are freed
    nvshmem_quiet();
}

int main() {
    nvshmem_init();
    int my_pe = nvshmem_my_pe();
    int n_pes = nvshmem_n_pes();

    int host[NELEM];
    int* first_src = (int*) nvshmem_malloc(NELEM * sizeof(int));
    int* second_src = (int*) nvshmem_malloc(NELEM * sizeof(int));
    for (int i = 0; i < NELEM; i++) host[i] = my_pe * 1000 + i;
    cudaMemcpy(first_src, host, sizeof(host), cudaMemcpyHostToDevice);
    for (int i = 0; i < NELEM; i++) host[i] = -(my_pe * 1000 + i);
    cudaMemcpy(second_src, host, sizeof(host), cudaMemcpyHostToDevice);
    int* first = (int*) nvshmem_calloc(NELEM, sizeof(int));
    int* second = (int*) nvshmem_calloc(NELEM, sizeof(int));
    int* ready = (int*) nvshmem_calloc(1, sizeof(int));
    int* done = (int*) nvshmem_calloc(1, sizeof(int));
    int* checks;
    cudaMalloc(&checks, 2 * sizeof(int));
    // the flags are zero on every PE before any PE can set one
    nvshmem_barrier_all();

    wait_test<<<1, 32>>>(first_src, second_src, first, second, ready, done, checks);
    cudaDeviceSynchronize();

    int got[2];
    cudaMemcpy(got, checks, sizeof(got), cudaMemcpyDeviceToHost);
    printf("PE %d: after wait_until %d/%d words from PE %d; after test %d/%d\n", my_pe, got[0], NELEM,
           (my_pe - 1 + n_pes) % n_pes, got[1], NELEM);

    nvshmem_barrier_all();
    cudaFree(checks);
    nvshmem_free(first_src);
    nvshmem_free(second_src);
    nvshmem_free(first);
    nvshmem_free(second);
    nvshmem_free(ready);
    nvshmem_free(done);
    nvshmem_finalize();
    return 0;
}
