#include <nvshmem.h>
#include <nvshmemx.h>

#ifndef M
#define M 1024  // 矩阵行数
#endif
#ifndef K
#define K 1024  // 共享维度
#endif
#ifndef N
#define N 1024  // 矩阵列数
#endif

__global__ void matmul_kernel(float* A, float* B_symmetric, float* C,
                              int my_pe, int n_pes) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;

    if (row < M && col < N) {
        float sum = 0.0f;

        // 访问本地 A 矩阵
        for (int k = 0; k < K; k++) {
            // 计算 B 矩阵分布在哪个 PE
            int b_pe = (col * K + k) / (K * N / n_pes);
            int b_offset = (col * K + k) % (K * N / n_pes);

            // �远程 PE 读� B 元素
            float b_val = nvshmem_float_g(B_symmetric + b_offset, b_pe);

            sum += A[row * K + k] * b_val;
        }

        C[row * N + col] = sum;
    }
}

int main() {
    nvshmem_init();

    int my_pe = nvshmem_my_pe();
    int n_pes = nvshmem_n_pes();

    // 分�内�
    float* A;
    cudaMalloc(&A, M * K * sizeof(float));  // 本地�有

    // B 矩阵分布在多个 PE 上（对称内�）
    int b_local_size = (K * N) / n_pes;
    float* B_symmetric = (float*) nvshmem_malloc(b_local_size * sizeof(float));

    float* C;
    cudaMalloc(&C, M * N * sizeof(float));

    // �始化矩阵（�略）

    // 执行分布�矩阵乘法
    dim3 block(16, 16);
    dim3 grid((N + 15) / 16, (M + 15) / 16);
    matmul_kernel<<<grid, block>>>(A, B_symmetric, C, my_pe, n_pes);

    cudaDeviceSynchronize();

    // 清�
    cudaFree(A);
    nvshmem_free(B_symmetric);
    cudaFree(C);

    nvshmem_finalize();
    return 0;
}
