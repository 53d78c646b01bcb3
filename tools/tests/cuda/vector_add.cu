// Vector add through device memory: cudaMalloc, cudaMemcpy both ways, a 1-D launch.
// expect: c[0] = 0, c[1000] = 3000, c[1023] = 3069
#include <cstdio>

__global__ void add(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

int main() {
    const int n = 1024;
    float a[n], b[n], c[n];
    for (int i = 0; i < n; i++) {
        a[i] = i;
        b[i] = 2 * i;
    }
    float *da, *db, *dc;
    cudaMalloc((void **)&da, n * sizeof(float));
    cudaMalloc((void **)&db, n * sizeof(float));
    cudaMalloc((void **)&dc, n * sizeof(float));
    cudaMemcpy(da, a, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, n * sizeof(float), cudaMemcpyHostToDevice);
    add<<<(n + 255) / 256, 256>>>(da, db, dc, n);
    cudaMemcpy(c, dc, n * sizeof(float), cudaMemcpyDeviceToHost);
    printf("c[0] = %g, c[1000] = %g, c[1023] = %g\n", c[0], c[1000], c[1023]);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return 0;
}
