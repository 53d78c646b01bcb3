// The NVSHMEM guide's example "nvshmem_int_sum_reduce", made a whole program: the kernel is the guide's,
// verbatim; main() allocates, launches it, and prints what the kernel left behind.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>

__global__ void reduce_kernel(int* local_val, int* result, int my_pe) {
    if (threadIdx.x == 0) {
        *local_val = my_pe + 1;  // PE i 的值为 i+1

        // 所有 PE 求和，结�在所有 PE 上
        nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, result, local_val, 1);

        // 4 PEs: result = 1 + 2 + 3 + 4 = 10
        printf("PE %d: sum = %d\n", my_pe, *result);
    }
}

int main() {
    nvshmem_init();
    int my_pe = nvshmem_my_pe();
    int* local_val = (int*) nvshmem_malloc(sizeof(int));
    int* result = (int*) nvshmem_calloc(1, sizeof(int));
    void* args[] = {&local_val, &result, &my_pe};
    nvshmemx_collective_launch((const void*) reduce_kernel, dim3(1), dim3(32), args, 0, 0);
    cudaDeviceSynchronize();
    nvshmem_free(local_val);
    nvshmem_free(result);
    nvshmem_finalize();
    return 0;
}
