// The NVSHMEM guide's example "nvshmem_get", made a whole program: the kernel is the guide's,
// verbatim; main() allocates, launches it, and prints what the kernel left behind.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>

__global__ void get_kernel(int* symmetric_data, int* local_buffer, int my_pe) {
    int tid = threadIdx.x + blockIdx.x * blockDim.x;

    if (tid == 0 && my_pe == 1) {
        // PE 1 � PE 0 读�数�
        nvshmem_int_get(local_buffer, symmetric_data, 4, 0);
        // dest=local_buffer, source=PE 0 的 symmetric_data, nelems=4, pe=0
    }
}

int main() {
    nvshmem_init();
    int my_pe = nvshmem_my_pe();
    int* symmetric_data = (int*) nvshmem_malloc(4 * sizeof(int));
    int values[4] = {10 * my_pe + 1, 10 * my_pe + 2, 10 * my_pe + 3, 10 * my_pe + 4};
    cudaMemcpy(symmetric_data, values, sizeof(values), cudaMemcpyHostToDevice);
    int* local_buffer;
    cudaMalloc(&local_buffer, 4 * sizeof(int));
    cudaMemset(local_buffer, 0, 4 * sizeof(int));
    nvshmem_barrier_all();
    get_kernel<<<1, 32>>>(symmetric_data, local_buffer, my_pe);
    cudaDeviceSynchronize();
    if (my_pe == 1) {
        int got[4];
        cudaMemcpy(got, local_buffer, sizeof(got), cudaMemcpyDeviceToHost);
        printf("PE 1 got from PE 0: %d %d %d %d\n", got[0], got[1], got[2], got[3]);
    }
    nvshmem_barrier_all();
    cudaFree(local_buffer);
    nvshmem_free(symmetric_data);
    nvshmem_finalize();
    return 0;
}
