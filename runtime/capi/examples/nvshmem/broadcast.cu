// The NVSHMEM guide's example "nvshmem_broadcast", made a whole program: the kernel is the guide's,
// verbatim; main() allocates, launches it, and prints what the kernel left behind.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>

__global__ void broadcast_kernel(int* data, int my_pe) {
    if (threadIdx.x == 0) {
        // PE 0 准备数�
        if (my_pe == 0) {
            data[0] = 999;
        }

        // PE 0 广�到所有 PE
        nvshmem_int_broadcast(NVSHMEM_TEAM_WORLD, data, data, 1, 0);
        // team, dest, source, nelems, PE_root

        // �在所有 PE 的 data[0] == 999
    }
}

int main() {
    nvshmem_init();
    int my_pe = nvshmem_my_pe();
    int* data = (int*) nvshmem_calloc(1, sizeof(int));
    void* args[] = {&data, &my_pe};
    nvshmemx_collective_launch((const void*) broadcast_kernel, dim3(1), dim3(32), args, 0, 0);
    cudaDeviceSynchronize();
    int got;
    cudaMemcpy(&got, data, sizeof(int), cudaMemcpyDeviceToHost);
    printf("PE %d: data[0] = %d\n", my_pe, got);
    nvshmem_free(data);
    nvshmem_finalize();
    return 0;
}
