// A warp reduction with __shfl_down_sync (int and double), __shfl_xor_sync and __ballot_sync.
// expect: warp sums 496 1520, double 496, xor max 31, ballot 55555555, any 1 all 0
#include <cstdio>

__global__ void warps(int *sums, double *dsum, int *xmax, unsigned *ballot, int *votes) {
    int lane = threadIdx.x % warpSize;
    int v = threadIdx.x;
    double d = lane;
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
        d += __shfl_down_sync(0xffffffffu, d, offset);
    }
    int m = lane;
    for (int mask = 16; mask > 0; mask /= 2) m = max(m, __shfl_xor_sync(0xffffffffu, m, mask));
    unsigned b = __ballot_sync(0xffffffffu, lane % 2 == 0);
    int any = __any_sync(0xffffffffu, lane == 3);
    int all = __all_sync(0xffffffffu, lane < 31);
    if (lane == 0) {
        sums[threadIdx.x / warpSize] = v;
        if (threadIdx.x == 0) {
            *dsum = d;
            *xmax = m;
            *ballot = b;
            votes[0] = any;
            votes[1] = all;
        }
    }
}

int main() {
    int *sums, *xmax, *votes;
    double *dsum;
    unsigned *ballot;
    cudaMalloc((void **)&sums, 2 * sizeof(int));
    cudaMalloc((void **)&dsum, sizeof(double));
    cudaMalloc((void **)&xmax, sizeof(int));
    cudaMalloc((void **)&ballot, sizeof(unsigned));
    cudaMalloc((void **)&votes, 2 * sizeof(int));
    warps<<<1, 64>>>(sums, dsum, xmax, ballot, votes);
    int h[2], hx, hv[2];
    double hd;
    unsigned hb;
    cudaMemcpy(h, sums, sizeof h, cudaMemcpyDeviceToHost);
    cudaMemcpy(&hd, dsum, sizeof hd, cudaMemcpyDeviceToHost);
    cudaMemcpy(&hx, xmax, sizeof hx, cudaMemcpyDeviceToHost);
    cudaMemcpy(&hb, ballot, sizeof hb, cudaMemcpyDeviceToHost);
    cudaMemcpy(hv, votes, sizeof hv, cudaMemcpyDeviceToHost);
    printf("warp sums %d %d, double %g, xor max %d, ballot %x, any %d all %d\n", h[0], h[1], hd, hx, hb, hv[0],
           hv[1]);
    return 0;
}
