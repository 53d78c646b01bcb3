// Races between the threads of one block, for the race detector (rshmem check -n N on a build
// with rshmem-nvcc -rshmem-check): thread 0 stores a __shared__ word and a word of symmetric
// memory, then every thread reads both. Built with -DSYNC the block meets in a __syncthreads
// between the stores and the loads, and the program is race-free; without it the loads of
// threads 1 to 63 race with thread 0's stores.
#include <nvshmem.h>
#include <stdio.h>

#define THREADS 64

__global__ void publish(int* word, int* sums) {
    __shared__ int staged;
    if (threadIdx.x == 0) {
        staged = 7;
        *word = 5;
    }
#ifdef SYNC
    __syncthreads();
#endif
    sums[threadIdx.x] = staged + *word;
}

int main() {
    nvshmem_init();
    int* word = (int*) nvshmem_malloc(sizeof(int));
    int* sums;
    cudaMalloc((void**) &sums, THREADS * sizeof(int));
    publish<<<1, THREADS>>>(word, sums);
    cudaDeviceSynchronize();
    int host[THREADS];
    cudaMemcpy(host, sums, sizeof host, cudaMemcpyDeviceToHost);
    int good = 0;
    for (int i = 0; i < THREADS; i++) good += host[i] == 12;
    printf("PE %d: %d of %d threads saw 12\n", nvshmem_my_pe(), good, THREADS);
    nvshmem_barrier_all();
    cudaFree(sums);
    nvshmem_free(word);
    nvshmem_finalize();
    return 0;
}
