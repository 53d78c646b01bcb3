// The NVSHMEM guide's example "nvshmem_alltoall", made a whole program: the kernel is the guide's,
// verbatim; main() allocates, launches it, and prints what the kernel left behind.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>

__global__ void alltoall_kernel(int* send_buf, int* recv_buf, int my_pe, int n_pes) {
    if (threadIdx.x == 0) {
        // 准备��数�
        for (int i = 0; i < n_pes; i++) {
            send_buf[i] = my_pe * 100 + i;
        }

        // 全交�（�个 PE �� 1 个元素到�个 PE）
        nvshmem_int_alltoall(NVSHMEM_TEAM_WORLD, recv_buf, send_buf, 1);

        // 结�：recv_buf[i] = i * 100 + my_pe
        for (int i = 0; i < n_pes; i++) {
            printf("PE %d recv from PE %d: %d\n", my_pe, i, recv_buf[i]);
        }
    }
}

int main() {
    nvshmem_init();
    int my_pe = nvshmem_my_pe();
    int n_pes = nvshmem_n_pes();
    int* send_buf = (int*) nvshmem_malloc(n_pes * sizeof(int));
    int* recv_buf = (int*) nvshmem_calloc(n_pes, sizeof(int));
    void* args[] = {&send_buf, &recv_buf, &my_pe, &n_pes};
    nvshmemx_collective_launch((const void*) alltoall_kernel, dim3(1), dim3(32), args, 0, 0);
    cudaDeviceSynchronize();
    nvshmem_free(send_buf);
    nvshmem_free(recv_buf);
    nvshmem_finalize();
    return 0;
}
