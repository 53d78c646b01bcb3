#include <nvshmem.h>
#include <nvshmemx.h>

__global__ void init_kernel(int* data, int my_pe) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid == 0) {
        data[0] = my_pe * 100;  // �个 PE 写入��的值
    }
}

int main() {
    // �始化 NVSHMEM
    nvshmem_init();

    int my_pe = nvshmem_my_pe();
    int n_pes = nvshmem_n_pes();

    // 在对称堆上分� 1024 个整数（所有 PE 必须调用）
    int* symmetric_data = (int*) nvshmem_malloc(1024 * sizeof(int));

    // �始化数�
    init_kernel<<<1, 256>>>(symmetric_data, my_pe);
    cudaDeviceSynchronize();

    // 访问远程 PE 的数�（���示例）

    // 释放对称内�（集体�作）
    nvshmem_free(symmetric_data);

    nvshmem_finalize();
    return 0;
}
