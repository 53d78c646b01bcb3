// A distributed matrix transpose in three ways, for runs side by side with NVSHMEM: the same
// source builds against NVSHMEM and against rshmem's nvshmem.h (tools/gpu/transpose.sh).
//
// The matrix A has `order` rows and columns of doubles, A[i][j] = i * order + j; PE p holds
// rows p*w .. p*w+w-1 (w = order / n_pes) and computes the same rows of B = A^T. Each
// iteration moves every PE's w x w tile for every PE, in one of three ways:
//   get       a kernel fetches the tiles with nvshmemx_getmem_block into local memory, a second
//             kernel transposes them into B;
//   ptr       one kernel loads the peers' A through nvshmem_ptr and stores B, tile by tile;
//   alltoall  a kernel packs A's tiles, nvshmemx_alltoallmem_on_stream exchanges them, a kernel
//             transposes them into B.
// Each iteration ends with nvshmemx_barrier_all_on_stream (the get and ptr ways; the alltoall
// synchronises itself). PE 0 prints one line per way:
//   transpose way=WAY pes=N order=O iterations=I GBps=R us_per_iteration=T
// with R = 2 * 8 * order^2 bytes per iteration (what a transpose reads and writes) over the
// time of the iterations, measured by CUDA events on PE 0's stream between two barriers.
// B is checked on every PE after each way; a wrong element fails the run.
//
//   transpose [ORDER [ITERATIONS]]      (default 4096 10; ORDER a multiple of 32 * n_pes)
#include "../nvshmem/start.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using bench_start::fail;

const int kTile = 32;         // the transpose's tile: kTile x kTile doubles
const int kTileRows = 8;      // a tile's block is kTile x kTileRows threads
const int kGetThreads = 512;  // threads of a block of the get kernel

// dst[r][c] = src[c][r] for the w x w tile at src (rows `src_pitch` apart), tile by tile through
// shared memory so that both the loads and the stores are coalesced. Grid: (w/kTile, w/kTile).
__device__ void transpose_tile(double *dst, size_t dst_pitch, const double *src, size_t src_pitch) {
    __shared__ double tile[kTile][kTile + 1];
    int x = blockIdx.x * kTile + threadIdx.x;
    int y = blockIdx.y * kTile + threadIdx.y;
    for (int k = 0; k < kTile; k += kTileRows) tile[threadIdx.y + k][threadIdx.x] = src[(size_t)(y + k) * src_pitch + x];
    __syncthreads();
    x = blockIdx.y * kTile + threadIdx.x;
    y = blockIdx.x * kTile + threadIdx.y;
    for (int k = 0; k < kTile; k += kTileRows) dst[(size_t)(y + k) * dst_pitch + x] = tile[threadIdx.x][threadIdx.y + k];
}

// B's columns q*w.. = the transpose of tile q of `tiles` (n_pes tiles of w x w, each the rows
// of PE q restricted to this PE's columns). Grid: (w/kTile, w/kTile, n_pes).
__global__ void unpack(double *b, const double *tiles, int w, int order) {
    int q = blockIdx.z;
    transpose_tile(b + (size_t)q * w, order, tiles + (size_t)q * w * w, w);
}

// Fetches, for every PE q, its rows' columns me*w.. (w rows of w doubles) into tile q of
// `tiles`. Grid: (rows per block, n_pes).
__global__ void fetch(double *tiles, const double *a, int w, int order, int me, int rows_per_block) {
    int q = blockIdx.y;
    int first = blockIdx.x * rows_per_block;
    for (int r = first; r < first + rows_per_block && r < w; ++r)
        nvshmemx_getmem_block(tiles + ((size_t)q * w + r) * w, a + (size_t)r * order + (size_t)me * w,
                              w * sizeof(double), q);
}

// B's columns q*w.. from PE q's A through nvshmem_ptr. Grid: (w/kTile, w/kTile, n_pes).
__global__ void transpose_through_ptr(double *b, const double *a, int w, int order, int me) {
    int q = blockIdx.z;
    const double *theirs = static_cast<const double *>(nvshmem_ptr(a, q));
    if (theirs == nullptr) {
        if (threadIdx.x == 0 && threadIdx.y == 0) printf("transpose: PE %d has no pointer to PE %d\n", me, q);
        __trap();
    }
    transpose_tile(b + (size_t)q * w, order, theirs + (size_t)me * w, order);
}

// Tile q of `send` = this PE's rows, columns q*w.. (copied as they are). Grid: (w/kTile, w, n_pes)
// with kTile threads.
__global__ void pack(double *send, const double *a, int w, int order) {
    int q = blockIdx.z, r = blockIdx.y, c = blockIdx.x * kTile + threadIdx.x;
    send[((size_t)q * w + r) * w + c] = a[(size_t)r * order + (size_t)q * w + c];
}

__global__ void fill(double *a, int w, int order, int me) {
    size_t count = (size_t)w * order;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        size_t row = (size_t)me * w + i / order;
        a[i] = (double)(row * order + i % order);
    }
}

// Counts the elements of B that are not A^T.
__global__ void check(unsigned long long *wrong, const double *b, int w, int order, int me) {
    size_t count = (size_t)w * order;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        size_t row = (size_t)me * w + i / order, col = i % order;
        if (b[i] != (double)(col * order + row)) atomicAdd(wrong, 1ull);
    }
}

enum class Way { get, ptr, alltoall };
const char *way_name(Way way) { return way == Way::get ? "get" : way == Way::ptr ? "ptr" : "alltoall"; }

struct Transpose {
    int me, n_pes, w, order;
    cudaStream_t stream;
    double *a, *b, *send, *recv, *tiles;

    void iteration(Way way) {
        dim3 tiles_grid(w / kTile, w / kTile, n_pes), tile_block(kTile, kTileRows);
        switch (way) {
        case Way::get: {
            int rows_per_block = 8;
            fetch<<<dim3((w + rows_per_block - 1) / rows_per_block, n_pes), kGetThreads, 0, stream>>>(
                tiles, a, w, order, me, rows_per_block);
            unpack<<<tiles_grid, tile_block, 0, stream>>>(b, tiles, w, order);
            nvshmemx_barrier_all_on_stream(stream);
            break;
        }
        case Way::ptr:
            transpose_through_ptr<<<tiles_grid, tile_block, 0, stream>>>(b, a, w, order, me);
            nvshmemx_barrier_all_on_stream(stream);
            break;
        case Way::alltoall:
            pack<<<dim3(w / kTile, w, n_pes), kTile, 0, stream>>>(send, a, w, order);
            NVSHMEM_CHECK(nvshmemx_alltoallmem_on_stream(NVSHMEM_TEAM_WORLD, recv, send,
                                                         (size_t)w * w * sizeof(double), stream));
            unpack<<<tiles_grid, tile_block, 0, stream>>>(b, recv, w, order);
            break;
        }
        CUDA_CHECK(cudaGetLastError());
    }

    // Microseconds per iteration on this PE's stream.
    double measure(Way way, int iterations) {
        iteration(way);  // warm-up
        CUDA_CHECK(cudaStreamSynchronize(stream));
        nvshmem_barrier_all();
        cudaEvent_t start, stop;
        CUDA_CHECK(cudaEventCreate(&start));
        CUDA_CHECK(cudaEventCreate(&stop));
        CUDA_CHECK(cudaEventRecord(start, stream));
        for (int i = 0; i < iterations; ++i) iteration(way);
        CUDA_CHECK(cudaEventRecord(stop, stream));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        CUDA_CHECK(cudaEventDestroy(start));
        CUDA_CHECK(cudaEventDestroy(stop));
        nvshmem_barrier_all();
        return ms * 1000.0 / iterations;
    }

    void verify(Way way, unsigned long long *wrong) {
        CUDA_CHECK(cudaMemset(wrong, 0, sizeof *wrong));
        check<<<256, 256, 0, stream>>>(wrong, b, w, order, me);
        unsigned long long found = 0;
        CUDA_CHECK(cudaMemcpyAsync(&found, wrong, sizeof found, cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        if (found != 0) fail("way %s: %llu elements of B are not A's transpose", way_name(way), found);
        CUDA_CHECK(cudaMemsetAsync(b, 0, (size_t)w * order * sizeof(double), stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
};

int parse(const char *text, const char *what) {
    char *end = nullptr;
    long value = strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < 1 || value > 1 << 20) fail("%s must be a positive integer, got '%s'", what, text);
    return static_cast<int>(value);
}

// ORDER, so that the heap's size can follow it before NVSHMEM starts.
int g_order = 4096;

}  // namespace

int main(int argc, char **argv) {
    if (argc > 1) g_order = parse(argv[1], "ORDER");
    int iterations = argc > 2 ? parse(argv[2], "ITERATIONS") : 10;
    // A, send and recv (each n_pes * w * w doubles = order^2 / n_pes) and NVSHMEM's own room.
    bench_start::start_pe("transpose", [](int n_pes) {
        return 3 * (size_t)g_order * g_order * sizeof(double) / n_pes + (256u << 20);
    });
    Transpose t{};
    t.me = nvshmem_my_pe();
    t.n_pes = nvshmem_n_pes();
    t.order = g_order;
    if (t.order % (kTile * t.n_pes) != 0) fail("ORDER %d is not a multiple of 32 * %d PEs", t.order, t.n_pes);
    t.w = t.order / t.n_pes;
    size_t bytes = (size_t)t.w * t.order * sizeof(double);
    t.a = static_cast<double *>(nvshmem_malloc(bytes));
    t.send = static_cast<double *>(nvshmem_malloc(bytes));
    t.recv = static_cast<double *>(nvshmem_malloc(bytes));
    if (t.a == nullptr || t.send == nullptr || t.recv == nullptr) fail("nvshmem_malloc of 3 x %zu bytes failed", bytes);
    CUDA_CHECK(cudaMalloc(&t.b, bytes));
    CUDA_CHECK(cudaMalloc(&t.tiles, bytes));
    unsigned long long *wrong = nullptr;
    CUDA_CHECK(cudaMalloc(&wrong, sizeof *wrong));
    CUDA_CHECK(cudaStreamCreateWithFlags(&t.stream, cudaStreamNonBlocking));
    fill<<<256, 256, 0, t.stream>>>(t.a, t.w, t.order, t.me);
    CUDA_CHECK(cudaStreamSynchronize(t.stream));
    nvshmem_barrier_all();

    for (Way way : {Way::get, Way::ptr, Way::alltoall}) {
        double us = t.measure(way, iterations);
        t.verify(way, wrong);
        if (t.me == 0) {
            double gbps = 2.0 * sizeof(double) * (double)t.order * t.order / (us * 1e3);
            printf("transpose way=%s pes=%d order=%d iterations=%d GBps=%.1f us_per_iteration=%.1f\n", way_name(way),
                   t.n_pes, t.order, iterations, gbps, us);
            fflush(stdout);
        }
    }
    nvshmem_barrier_all();
    CUDA_CHECK(cudaFree(wrong));
    CUDA_CHECK(cudaFree(t.tiles));
    CUDA_CHECK(cudaFree(t.b));
    nvshmem_free(t.recv);
    nvshmem_free(t.send);
    nvshmem_free(t.a);
    nvshmem_finalize();
    return 0;
}
