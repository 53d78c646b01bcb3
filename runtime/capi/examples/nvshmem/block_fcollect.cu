// The NVSHMEM guide's example "block-scoped fcollect", made a whole program: the kernel is the guide's,
// verbatim; main() allocates, launches it, and prints what the kernel left behind.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>

__global__ void block_collective_kernel(int* data, int my_pe) {
    // 所有线程�� fcollect
    nvshmemx_int_fcollect_block(NVSHMEM_TEAM_WORLD, data, data, 256);
    // 比�线程版本快得多
}

int main() {
    nvshmem_init();
    int my_pe = nvshmem_my_pe();
    int n_pes = nvshmem_n_pes();
    // The kernel collects 256 ints from every PE into the same array it sends from.
    int* data = (int*) nvshmem_malloc(n_pes * 256 * sizeof(int));
    int* host = (int*) malloc(n_pes * 256 * sizeof(int));
    for (int i = 0; i < 256; i++) host[i] = my_pe * 1000 + i;
    cudaMemcpy(data, host, 256 * sizeof(int), cudaMemcpyHostToDevice);
    nvshmem_barrier_all();
    void* args[] = {&data, &my_pe};
    nvshmemx_collective_launch((const void*) block_collective_kernel, dim3(1), dim3(256), args, 0, 0);
    cudaDeviceSynchronize();
    cudaMemcpy(host, data, n_pes * 256 * sizeof(int), cudaMemcpyDeviceToHost);
    int wrong = 0;
    for (int pe = 0; pe < n_pes; pe++)
        for (int i = 0; i < 256; i++) wrong += host[pe * 256 + i] != pe * 1000 + i;
    printf("PE %d: %d of %d ints collected\n", my_pe, n_pes * 256 - wrong, n_pes * 256);
    free(host);
    nvshmem_free(data);
    nvshmem_finalize();
    return 0;
}
