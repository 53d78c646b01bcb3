// `extern __shared__` sized by the launch, two names for the same bytes, as in CUDA.
// expect: reversed 63 62 61 0
#include <cstdio>

extern __shared__ int buffer[];

__global__ void reverse(int *data) {
    extern __shared__ int scratch[];
    int t = threadIdx.x;
    scratch[t] = data[t];
    __syncthreads();
    data[t] = buffer[blockDim.x - 1 - t];
}

int main() {
    const int n = 64;
    int h[n];
    for (int i = 0; i < n; i++) h[i] = i;
    int *d;
    cudaMalloc((void **)&d, sizeof h);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    reverse<<<1, n, n * sizeof(int)>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("reversed %d %d %d %d\n", h[0], h[1], h[2], h[63]);
    return 0;
}
