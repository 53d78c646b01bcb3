// The NVSHMEM guide's example "nvshmem_put", made a whole program: the kernel is the guide's,
// verbatim; main() allocates, launches it, and prints what the kernel left behind.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>

__global__ void put_kernel(int* symmetric_data, int my_pe, int n_pes) {
    int tid = threadIdx.x + blockIdx.x * blockDim.x;

    if (tid == 0 && my_pe == 0) {
        // PE 0 将数�写入 PE 1 的对称内�
        int local_data[4] = {100, 200, 300, 400};
        nvshmem_int_put(symmetric_data, local_data, 4, 1);
        // dest=PE 1 的 symmetric_data, source=local_data, nelems=4, pe=1
    }
}

int main() {
    nvshmem_init();
    int my_pe = nvshmem_my_pe();
    int n_pes = nvshmem_n_pes();
    int* symmetric_data = (int*) nvshmem_calloc(4, sizeof(int));
    put_kernel<<<1, 32>>>(symmetric_data, my_pe, n_pes);
    cudaDeviceSynchronize();
    nvshmem_barrier_all();
    if (my_pe == 1) {
        int got[4];
        cudaMemcpy(got, symmetric_data, sizeof(got), cudaMemcpyDeviceToHost);
        printf("PE 1: %d %d %d %d\n", got[0], got[1], got[2], got[3]);
    }
    nvshmem_free(symmetric_data);
    nvshmem_finalize();
    return 0;
}
