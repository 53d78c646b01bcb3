// printf in a kernel: integers, a string, a double, a pointer-sized value.
// expect: thread 1 of block 0: k=2 s=two f=1.50 u=4294967295
#include <cstdio>

__global__ void say(int k) {
    if (threadIdx.x == 1) printf("thread %d of block %d: k=%d s=%s f=%.2f u=%u\n", threadIdx.x, blockIdx.x, k, "two", 1.5,
                                 0xffffffffu);
}

int main() {
    say<<<1, 2>>>(2);
    cudaDeviceSynchronize();
    return 0;
}
