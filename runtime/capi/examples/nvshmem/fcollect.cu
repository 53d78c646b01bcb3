// The NVSHMEM guide's example "nvshmem_fcollect", made a whole program: the kernel is the guide's,
// verbatim; main() allocates, launches it, and prints what the kernel left behind.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>

__global__ void fcollect_kernel(int* local_data, int* collected_data, int my_pe) {
    if (threadIdx.x == 0) {
        local_data[0] = my_pe * 10;

        // 收集所有 PE 的数�
        nvshmem_int_fcollect(NVSHMEM_TEAM_WORLD, collected_data, local_data, 1);

        // �个 PE 的 collected_data: [0, 10, 20, 30, ...]
    }
}

int main() {
    nvshmem_init();
    int my_pe = nvshmem_my_pe();
    int n_pes = nvshmem_n_pes();
    int* local_data = (int*) nvshmem_malloc(sizeof(int));
    int* collected_data = (int*) nvshmem_calloc(n_pes, sizeof(int));
    void* args[] = {&local_data, &collected_data, &my_pe};
    nvshmemx_collective_launch((const void*) fcollect_kernel, dim3(1), dim3(32), args, 0, 0);
    cudaDeviceSynchronize();
    int collected[64];
    cudaMemcpy(collected, collected_data, n_pes * sizeof(int), cudaMemcpyDeviceToHost);
    printf("PE %d collected:", my_pe);
    for (int i = 0; i < n_pes; i++) printf(" %d", collected[i]);
    printf("\n");
    nvshmem_free(local_data);
    nvshmem_free(collected_data);
    nvshmem_finalize();
    return 0;
}
