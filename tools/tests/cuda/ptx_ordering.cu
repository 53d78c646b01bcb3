// The inline PTX that NVSHMEM-style code writes for ordering and time: mapped to the emulator.
// expect: flag 1, value 7, lane 3, time ok
#include <cstdio>

__device__ int load_acquire(const int *p) {
    int v;
    asm volatile("ld.acquire.sys.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ void store_release(int *p, int v) {
    asm volatile("st.release.sys.global.s32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__global__ void flags(int *data, int *out) {
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    unsigned long long t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    if (threadIdx.x == 3) {
        data[1] = 7;
        asm volatile("fence.acq_rel.gpu;" ::: "memory");
        store_release(&data[0], 1);
        out[0] = load_acquire(&data[0]);
        out[1] = data[1];
        out[2] = lane;
        asm volatile("nanosleep.u32 %0;" ::"r"(100u));
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
        out[3] = t1 >= t0;
    }
}

int main() {
    int *data, *out, h[4];
    cudaMalloc((void **)&data, 2 * sizeof(int));
    cudaMalloc((void **)&out, sizeof h);
    cudaMemset(data, 0, 2 * sizeof(int));
    flags<<<1, 32>>>(data, out);
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    printf("flag %d, value %d, lane %d, time %s\n", h[0], h[1], h[2], h[3] ? "ok" : "wrong");
    return 0;
}
