// Block-wide collectives and a warp-wide put in one collectively launched kernel: an int max
// reduction, a float sum reduction and an int fcollect, each with its own source and destination,
// and a put of 32 ints by the block's first warp to the next PE; the host then orders a barrier on
// the kernel's stream, checks what each PE got, and sums the checks over the PEs with a host-side
// nvshmem_int_sum_reduce.
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 128
#define N 16      // elements reduced
#define M 4       // elements each PE contributes to the fcollect
#define LANES 32  // one int per thread of a warp

__global__ void block_reductions(int* ints, int* int_max, float* floats, float* float_sum, int* pieces, int* all,
                                 int* lane_in, int* lane_out) {
    int my_pe = nvshmem_my_pe();
    int next = (my_pe + 1) % nvshmem_n_pes();
    int tid = threadIdx.x;
    if (tid < N) {
        ints[tid] = my_pe * 10 + tid;
        // multiples of 0.5 add exactly in any order, so every PE's sum is the same to the bit
        floats[tid] = 0.5f * (my_pe + 1) + tid;
    }
    if (tid < M) pieces[tid] = my_pe * 100 + tid;
    if (tid < LANES) lane_in[tid] = my_pe * LANES + tid;
    // every thread's sources are written before the block's collectives read them
    __syncthreads();

    nvshmemx_int_max_reduce_block(NVSHMEM_TEAM_WORLD, int_max, ints, N);
    nvshmemx_float_sum_reduce_block(NVSHMEM_TEAM_WORLD, float_sum, floats, N);
    nvshmemx_int_fcollect_block(NVSHMEM_TEAM_WORLD, all, pieces, M);

    if (tid < LANES) {
        nvshmemx_int_put_warp(lane_out, lane_in, LANES, next);
        // complete the put before the barrier the host orders after this kernel
        nvshmem_quiet();
    }
}

int main() {
    nvshmem_init();
    int my_pe = nvshmem_my_pe();
    int n_pes = nvshmem_n_pes();
    int prev = (my_pe - 1 + n_pes) % n_pes;

    int* ints = (int*) nvshmem_malloc(N * sizeof(int));
    int* int_max = (int*) nvshmem_malloc(N * sizeof(int));
    float* floats = (float*) nvshmem_malloc(N * sizeof(float));
    float* float_sum = (float*) nvshmem_malloc(N * sizeof(float));
    int* pieces = (int*) nvshmem_malloc(M * sizeof(int));
    int* all = (int*) nvshmem_malloc(n_pes * M * sizeof(int));
    int* lane_in = (int*) nvshmem_malloc(LANES * sizeof(int));
    int* lane_out = (int*) nvshmem_malloc(LANES * sizeof(int));
    int* good = (int*) nvshmem_malloc(sizeof(int));
    int* good_total = (int*) nvshmem_malloc(sizeof(int));

    cudaStream_t stream;
    cudaStreamCreate(&stream);
    void* args[] = {&ints, &int_max, &floats, &float_sum, &pieces, &all, &lane_in, &lane_out};
    nvshmemx_collective_launch((const void*) block_reductions, dim3(1), dim3(THREADS), args, 0, stream);
    // the previous PE's warp put has landed in lane_out once every PE has passed this barrier
    nvshmemx_barrier_all_on_stream(stream);
    cudaStreamSynchronize(stream);

    int got_max[N], got_lanes[LANES];
    int* got_all = (int*) malloc(n_pes * M * sizeof(int));
    float got_sum[N];
    cudaMemcpy(got_max, int_max, sizeof(got_max), cudaMemcpyDeviceToHost);
    cudaMemcpy(got_sum, float_sum, sizeof(got_sum), cudaMemcpyDeviceToHost);
    cudaMemcpy(got_all, all, n_pes * M * sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(got_lanes, lane_out, sizeof(got_lanes), cudaMemcpyDeviceToHost);
    int max_ok = 0, sum_ok = 0, all_ok = 0, lanes_ok = 0;
    for (int i = 0; i < N; i++) {
        max_ok += got_max[i] == (n_pes - 1) * 10 + i;
        sum_ok += got_sum[i] == 0.25f * n_pes * (n_pes + 1) + (float) n_pes * i;
    }
    for (int pe = 0; pe < n_pes; pe++)
        for (int i = 0; i < M; i++) all_ok += got_all[pe * M + i] == pe * 100 + i;
    for (int i = 0; i < LANES; i++) lanes_ok += got_lanes[i] == prev * LANES + i;
    printf("PE %d: max %d/%d, sum %d/%d, fcollect %d/%d, warp put from PE %d %d/%d\n", my_pe, max_ok, N, sum_ok, N,
           all_ok, n_pes * M, prev, lanes_ok, LANES);

    // a host-side reduction over symmetric device memory: every PE's count of right values
    int mine = max_ok + sum_ok + all_ok + lanes_ok;
    cudaMemcpy(good, &mine, sizeof(int), cudaMemcpyHostToDevice);
    // A copy from pageable host memory may return before it lands in device memory (NVSHMEM's
    // "implicitly asynchronous cudaMemcpy"): the peers' reduction must not read it before.
    cudaDeviceSynchronize();
    nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, good_total, good, 1);
    int total;
    cudaMemcpy(&total, good_total, sizeof(int), cudaMemcpyDeviceToHost);
    if (my_pe == 0) {
        printf("all PEs: %d of %d values right; max[0] = %d, sum[0] = %.2f\n", total,
               n_pes * (2 * N + n_pes * M + LANES), got_max[0], got_sum[0]);
    }

    nvshmem_barrier_all();
    free(got_all);
    cudaStreamDestroy(stream);
    nvshmem_free(ints);
    nvshmem_free(int_max);
    nvshmem_free(floats);
    nvshmem_free(float_sum);
    nvshmem_free(pieces);
    nvshmem_free(all);
    nvshmem_free(lane_in);
    nvshmem_free(lane_out);
    nvshmem_free(good);
    nvshmem_free(good_total);
    nvshmem_finalize();
    return 0;
}
