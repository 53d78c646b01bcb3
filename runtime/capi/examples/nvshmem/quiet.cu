// The NVSHMEM guide's example "nvshmem_quiet", made a whole program: the kernel is the guide's,
// verbatim; main() allocates, launches it, and prints what the kernel left behind.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>

__global__ void quiet_example(int* data, int my_pe) {
    if (threadIdx.x == 0) {
        // �起多个 Put �作
        nvshmem_int_p(data, 100, (my_pe + 1) % 4);
        nvshmem_int_p(data + 1, 200, (my_pe + 2) % 4);

        // �待所有 Put 完�
        nvshmem_quiet();

        // �在�以安全地修改本地数�
    }
}

int main() {
    nvshmem_init();
    int my_pe = nvshmem_my_pe();
    int* data = (int*) nvshmem_calloc(2, sizeof(int));
    quiet_example<<<1, 32>>>(data, my_pe);
    cudaDeviceSynchronize();
    nvshmem_barrier_all();
    int got[2];
    cudaMemcpy(got, data, sizeof(got), cudaMemcpyDeviceToHost);
    printf("PE %d: data = %d %d\n", my_pe, got[0], got[1]);
    nvshmem_free(data);
    nvshmem_finalize();
    return 0;
}
