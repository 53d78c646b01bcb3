// The NVSHMEM guide's example "nvshmemx_float_put_block", made a whole program: the kernel is the guide's,
// verbatim; main() allocates, launches it, and prints what the kernel left behind.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>

__global__ void put_block_kernel(float* symmetric_data, float* local_data, int my_pe) {
    // 所有线程��拷�（如�目标 GPU 支� P2P）
    if (my_pe == 0) {
        nvshmemx_float_put_block(symmetric_data, local_data, 1024, 1);
        // NVSHMEM �行时会利用 block 内所有线程并行拷�
    }
}

int main() {
    nvshmem_init();
    int my_pe = nvshmem_my_pe();
    float* symmetric_data = (float*) nvshmem_calloc(1024, sizeof(float));
    float host[1024];
    for (int i = 0; i < 1024; i++) host[i] = 0.5f * i;
    float* local_data;
    cudaMalloc(&local_data, sizeof(host));
    cudaMemcpy(local_data, host, sizeof(host), cudaMemcpyHostToDevice);
    put_block_kernel<<<1, 256>>>(symmetric_data, local_data, my_pe);
    cudaDeviceSynchronize();
    nvshmem_barrier_all();
    if (my_pe == 1) {
        cudaMemcpy(host, symmetric_data, sizeof(host), cudaMemcpyDeviceToHost);
        int wrong = 0;
        for (int i = 0; i < 1024; i++) wrong += host[i] != 0.5f * i;
        printf("PE 1: %d of 1024 floats as PE 0 sent them\n", 1024 - wrong);
    }
    cudaFree(local_data);
    nvshmem_free(symmetric_data);
    nvshmem_finalize();
    return 0;
}
