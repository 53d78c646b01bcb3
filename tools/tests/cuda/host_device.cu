// `__host__` and `__device__` overloads of one function and __CUDA_ARCH__ in a host and
// device function: kernels take the device versions.
// expect: host 0 0, device 1 800
#include <cstdio>

__host__ int side() { return 0; }
__device__ int side() { return 1; }

__host__ __device__ int arch() {
#ifdef __CUDA_ARCH__
    return __CUDA_ARCH__;
#else
    return 0;
#endif
}

__global__ void probe(int *out) {
    out[0] = side();
    out[1] = arch();
}

int main() {
    int *d, h[2];
    cudaMalloc((void **)&d, sizeof h);
    probe<<<1, 1>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("host %d %d, device %d %d\n", side(), arch(), h[0], h[1]);
    return 0;
}
