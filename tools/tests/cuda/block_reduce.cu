// A block reduction: a __shared__ accumulator, __syncthreads and atomicAdd (int and float).
// expect: sum = 32640, float sum = 32640, blocks = 4
#include <cstdio>

__global__ void reduce(const int *in, int *out, float *fout, unsigned *blocks) {
    __shared__ int partial;
    __shared__ float fpartial;
    if (threadIdx.x == 0) {
        partial = 0;
        fpartial = 0.0f;
    }
    __syncthreads();
    int v = in[blockIdx.x * blockDim.x + threadIdx.x];
    atomicAdd(&partial, v);
    atomicAdd(&fpartial, (float)v);
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(out, partial);
        atomicAdd(fout, fpartial);
        atomicInc(blocks, 1000u);
    }
}

int main() {
    const int n = 256;
    int in[n];
    for (int i = 0; i < n; i++) in[i] = i;
    int *din, *dout;
    float *dfout;
    unsigned *dblocks;
    cudaMalloc((void **)&din, sizeof in);
    cudaMalloc((void **)&dout, sizeof(int));
    cudaMalloc((void **)&dfout, sizeof(float));
    cudaMalloc((void **)&dblocks, sizeof(unsigned));
    cudaMemcpy(din, in, sizeof in, cudaMemcpyHostToDevice);
    cudaMemset(dout, 0, sizeof(int));
    cudaMemset(dfout, 0, sizeof(float));
    cudaMemset(dblocks, 0, sizeof(unsigned));
    reduce<<<4, 64>>>(din, dout, dfout, dblocks);
    cudaDeviceSynchronize();
    int sum;
    float fsum;
    unsigned blocks;
    cudaMemcpy(&sum, dout, sizeof sum, cudaMemcpyDeviceToHost);
    cudaMemcpy(&fsum, dfout, sizeof fsum, cudaMemcpyDeviceToHost);
    cudaMemcpy(&blocks, dblocks, sizeof blocks, cudaMemcpyDeviceToHost);
    printf("sum = %d, float sum = %g, blocks = %u\n", sum, fsum, blocks);
    return 0;
}
