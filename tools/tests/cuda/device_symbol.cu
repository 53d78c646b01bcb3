// `__device__` and `__constant__` variables written and read with cudaMemcpyToSymbol and
// cudaMemcpyFromSymbol.
// expect: counter 10, table sum 6
#include <cstdio>

__device__ int counter;
__constant__ int table[3];
__device__ int table_sum;

__global__ void count() {
    atomicAdd(&counter, 1);
    if (threadIdx.x == 0) table_sum = table[0] + table[1] + table[2];
}

int main() {
    int zero = 0, values[3] = {1, 2, 3};
    cudaMemcpyToSymbol(counter, &zero, sizeof zero);
    cudaMemcpyToSymbol(table, values, sizeof values);
    count<<<2, 5>>>();
    cudaDeviceSynchronize();
    int c, s;
    cudaMemcpyFromSymbol(&c, counter, sizeof c);
    cudaMemcpyFromSymbol(&s, table_sum, sizeof s);
    printf("counter %d, table sum %d\n", c, s);
    return 0;
}
