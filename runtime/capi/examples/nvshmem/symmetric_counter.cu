// The NVSHMEM guide's example "static symmetric data", made a whole program: the kernel is the guide's,
// verbatim; main() allocates, launches it, and prints what the kernel left behind.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>

// 声�对称全局��
__device__ int symmetric_counter;

__global__ void increment_kernel() {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        symmetric_counter++;
    }
}

int main() {
    nvshmem_init();
    int my_pe = nvshmem_my_pe();
    increment_kernel<<<1, 32>>>();
    increment_kernel<<<1, 32>>>();
    cudaDeviceSynchronize();
    int counter = 0;
    cudaMemcpyFromSymbol(&counter, symmetric_counter, sizeof(int));
    printf("PE %d: symmetric_counter = %d\n", my_pe, counter);
    nvshmem_finalize();
    return 0;
}
