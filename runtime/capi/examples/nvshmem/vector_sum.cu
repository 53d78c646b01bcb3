#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>

#define N 1024

__global__ void vector_sum_kernel(float* local_vec, float* local_sum,
                                   float* global_sum, int my_pe) {
    __shared__ float shared_sum;

    int tid = threadIdx.x + blockIdx.x * blockDim.x;

    // �个线程计算部分和
    float thread_sum = 0.0f;
    for (int i = tid; i < N; i += blockDim.x * gridDim.x) {
        thread_sum += local_vec[i];
    }

    // Block 内归约
    atomicAdd(&shared_sum, thread_sum);
    __syncthreads();

    // 第一个线程��本地和
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        *local_sum = shared_sum;

        // 全局求和归约
        nvshmem_float_sum_reduce(NVSHMEM_TEAM_WORLD, global_sum, local_sum, 1);
    }
}

int main() {
    nvshmem_init();

    int my_pe = nvshmem_my_pe();
    int n_pes = nvshmem_n_pes();

    // 分�对称内�
    float* local_vec = (float*) nvshmem_malloc(N * sizeof(float));
    float* local_sum = (float*) nvshmem_malloc(sizeof(float));
    float* global_sum = (float*) nvshmem_malloc(sizeof(float));

    // �始化��（�个 PE 的值��）
    cudaMemset(local_vec, 0, N * sizeof(float));
    float init_val = (float)(my_pe + 1);
    cudaMemcpy(local_vec, &init_val, sizeof(float), cudaMemcpyHostToDevice);

    // 执行求和
    vector_sum_kernel<<<4, 256>>>(local_vec, local_sum, global_sum, my_pe);
    cudaDeviceSynchronize();

    // 读�结�
    float result;
    cudaMemcpy(&result, global_sum, sizeof(float), cudaMemcpyDeviceToHost);

    if (my_pe == 0) {
        printf("Global sum: %f\n", result);
    }

    nvshmem_free(local_vec);
    nvshmem_free(local_sum);
    nvshmem_free(global_sum);

    nvshmem_finalize();
    return 0;
}
