// A 2-D grid of 2-D blocks (dim3): a matrix product, C = A * B with A(i,k) = i, B(k,j) = j.
// expect: C[0][0] = 0, C[5][7] = 1120, C[31][31] = 30752
#include <cstdio>

#define N 32

__global__ void matmul(const float *a, const float *b, float *c) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0;
    for (int k = 0; k < N; k++) sum += a[row * N + k] * b[k * N + col];
    c[row * N + col] = sum;
}

int main() {
    static float a[N * N], b[N * N], c[N * N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            a[i * N + j] = i;
            b[i * N + j] = j;
        }
    float *da, *db, *dc;
    cudaMalloc((void **)&da, sizeof a);
    cudaMalloc((void **)&db, sizeof b);
    cudaMalloc((void **)&dc, sizeof c);
    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
    dim3 block(8, 8);
    dim3 grid(N / block.x, N / block.y);
    matmul<<<grid, block>>>(da, db, dc);
    cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost);
    printf("C[0][0] = %g, C[5][7] = %g, C[31][31] = %g\n", c[0], c[5 * N + 7], c[31 * N + 31]);
    return 0;
}
