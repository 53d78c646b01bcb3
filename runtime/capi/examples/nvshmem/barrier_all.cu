// The NVSHMEM guide's example "nvshmem_barrier_all", made a whole program: the kernel is the guide's,
// verbatim; main() allocates, launches it, and prints what the kernel left behind.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>

__global__ void sync_example(int* data, int my_pe, int n_pes) {
    int tid = threadIdx.x + blockIdx.x * blockDim.x;

    if (tid == 0) {
        // PE 0 写入数�到所有其他 PE
        if (my_pe == 0) {
            for (int i = 1; i < n_pes; i++) {
                nvshmem_int_p(data, 42, i);
            }
        }

        // 所有 PE �待数�传输完�
        nvshmem_barrier_all();

        // �在所有 PE 都�以安全读� data
        printf("PE %d: data = %d\n", my_pe, *data);
    }
}

int main() {
    nvshmem_init();
    int my_pe = nvshmem_my_pe();
    int n_pes = nvshmem_n_pes();
    int* data = (int*) nvshmem_calloc(1, sizeof(int));
    if (my_pe == 0) {
        int value = 42;
        cudaMemcpy(data, &value, sizeof(int), cudaMemcpyHostToDevice);
    }
    nvshmem_barrier_all();
    void* args[] = {&data, &my_pe, &n_pes};
    nvshmemx_collective_launch((const void*) sync_example, dim3(1), dim3(32), args, 0, 0);
    cudaDeviceSynchronize();
    nvshmem_free(data);
    nvshmem_finalize();
    return 0;
}
