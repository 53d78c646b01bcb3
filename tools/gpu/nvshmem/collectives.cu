// NVSHMEM's side of the collective benchmark: barrier_all, broadcast (root PE 0), fcollect,
// alltoall and float sum reduction over the world team, each measured as one operation on the
// PE's CUDA stream (`on_stream`) and as a loop of block-scoped calls inside one kernel of one
// block of 1024 threads (`in_kernel`), at the sizes, iteration counts, warm-up and median of 3
// that rshmem's benchmark uses, and printed in the same lines, so that `rshmem bench
// --collectives --nvshmem LOG` compares the two runtimes line by line.
// Every result is checked on every PE after its timed runs; a wrong one fails the run.
//
// One process per PE, started by tools/gpu/nvshmem-collectives.sh or by a launcher:
//   RANK=i NRANKS=n [UIDFILE=path] collectives      (PE 0 prints the lines on stdout)
// RANK/NRANKS fall back to OMPI_COMM_WORLD_RANK/SIZE (mpirun) and SLURM_PROCID/NTASKS (srun).
// PE 0 writes NVSHMEM's unique id to UIDFILE (default /tmp/nvshmem-collectives.uid) and the
// others read it from there, so the file must not be left over from an earlier run.
// PE i runs on GPU i % n_gpus; PEs that share a GPU need CUDA MPS (see the script).
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "start.h"

namespace {

using bench_start::fail;

// The spec's sizes, and the iteration counts that keep every measurement long enough.
const size_t kSizes[] = {8, 64, 512, 4096, 32768, 262144, 2097152, 16777216, 67108864};
const size_t kMaxBytes = 67108864;
const int kRepeats = 3;
const int kBlockThreads = 1024;

int iterations(size_t bytes) {
    return bytes <= 32768 ? 1000 : bytes <= 2097152 ? 100 : 20;
}

enum class Kind { barrier_all, broadcast, fcollect, alltoall, sum_reduce };

const char *kind_name(Kind kind) {
    switch (kind) {
        case Kind::barrier_all: return "barrier_all";
        case Kind::broadcast: return "broadcast";
        case Kind::fcollect: return "fcollect";
        case Kind::alltoall: return "alltoall";
        case Kind::sum_reduce: return "sum_reduce";
    }
    return "?";
}

// Bytes that one PE's dest receives per collective: what algbw_GBps divides by the time.
size_t received_bytes(Kind kind, size_t bytes, int n_pes) {
    return kind == Kind::fcollect || kind == Kind::alltoall ? bytes * n_pes : bytes;
}

// The data: byte `offset` of the block that PE `origin` meant for PE `tag` (alltoall), or of
// PE `origin`'s contribution (tag 0: broadcast, fcollect). A hash, so that a block landing at
// the wrong place or from the wrong PE does not compare equal.
__host__ __device__ inline uint8_t pattern_byte(uint32_t origin, uint32_t tag, uint64_t offset) {
    uint32_t x = static_cast<uint32_t>(offset) * 0x9E3779B1u ^ static_cast<uint32_t>(offset >> 32) ^
                 origin * 0x85EBCA6Bu ^ tag * 0xC2B2AE35u ^ 0x27D4EB2Fu;
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return static_cast<uint8_t>(x);
}

// PE `pe`'s float at `index` for the sum: small integers, so that every order of summation
// gives the same exact result.
__host__ __device__ inline float pattern_float(uint32_t pe, uint64_t index) {
    return static_cast<float>(static_cast<int>((index * 7u + pe * 13u) % 31u) - 15);
}

__host__ __device__ inline float expected_sum(int n_pes, uint64_t index) {
    float sum = 0;
    for (int pe = 0; pe < n_pes; pe++) sum += pattern_float(pe, index);
    return sum;
}

#define GRID_STRIDE(i, n)                                                                    \
    for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < (n); \
         i += static_cast<uint64_t>(gridDim.x) * blockDim.x)

// Block b of `buf` (blocks of `block_bytes`) holds pattern_byte(origin, b, .).
__global__ void fill_bytes_kernel(uint8_t *buf, size_t len, size_t block_bytes, uint32_t origin) {
    GRID_STRIDE(i, len) buf[i] = pattern_byte(origin, i / block_bytes, i % block_bytes);
}

__global__ void fill_floats_kernel(float *buf, size_t count, uint32_t pe) {
    GRID_STRIDE(i, count) buf[i] = pattern_float(pe, i);
}

struct Mismatches {
    unsigned long long count;
    unsigned long long first;
};

// Block b of `buf` must hold pattern_byte(b, tag, .): PE b's data for this PE.
__global__ void check_bytes_kernel(const uint8_t *buf, size_t len, size_t block_bytes, uint32_t tag,
                                   Mismatches *out) {
    GRID_STRIDE(i, len) {
        if (buf[i] != pattern_byte(i / block_bytes, tag, i % block_bytes)) {
            atomicAdd(&out->count, 1ull);
            atomicMin(&out->first, static_cast<unsigned long long>(i));
        }
    }
}

__global__ void check_sum_kernel(const float *buf, size_t count, int n_pes, Mismatches *out) {
    GRID_STRIDE(i, count) {
        if (buf[i] != expected_sum(n_pes, i)) {
            atomicAdd(&out->count, 1ull);
            atomicMin(&out->first, static_cast<unsigned long long>(i));
        }
    }
}

// The in_kernel form: `iters` block-scoped collectives back to back in one launch.
__global__ void __launch_bounds__(kBlockThreads)
    collective_block_kernel(int kind, void *dst, const void *src, size_t bytes, int iters) {
    // Device code only: the host pass sees NVSHMEM's host-side declarations of the device
    // API, which some releases (3.8) give nvshmemx_broadcastmem_block without its root.
#ifdef __CUDA_ARCH__
    switch (static_cast<Kind>(kind)) {
        case Kind::barrier_all:
            for (int i = 0; i < iters; i++) nvshmemx_barrier_all_block();
            break;
        case Kind::broadcast:
            for (int i = 0; i < iters; i++)
                nvshmemx_broadcastmem_block(NVSHMEM_TEAM_WORLD, dst, src, bytes, 0);
            break;
        case Kind::fcollect:
            for (int i = 0; i < iters; i++)
                nvshmemx_fcollectmem_block(NVSHMEM_TEAM_WORLD, dst, src, bytes);
            break;
        case Kind::alltoall:
            for (int i = 0; i < iters; i++)
                nvshmemx_alltoallmem_block(NVSHMEM_TEAM_WORLD, dst, src, bytes);
            break;
        case Kind::sum_reduce:
            for (int i = 0; i < iters; i++)
                nvshmemx_float_sum_reduce_block(NVSHMEM_TEAM_WORLD, static_cast<float *>(dst),
                                                static_cast<const float *>(src), bytes / 4);
            break;
    }
#endif
}

struct Bench {
    int me = 0;
    int n_pes = 0;
    cudaStream_t stream{};
    cudaEvent_t start{}, stop{};
    uint8_t *src = nullptr;            // n_pes * kMaxBytes, symmetric
    uint8_t *dst = nullptr;            // n_pes * kMaxBytes, symmetric
    int *verdicts = nullptr;           // n_pes ints, symmetric: PE p's mismatch flag at [p]
    Mismatches *mismatches = nullptr;  // device, this PE's check
    int fill_blocks = 0;

    void enqueue_on_stream(Kind kind, size_t bytes) {
        switch (kind) {
            case Kind::barrier_all: nvshmemx_barrier_all_on_stream(stream); break;
            case Kind::broadcast:
                NVSHMEM_CHECK(nvshmemx_broadcastmem_on_stream(NVSHMEM_TEAM_WORLD, dst, src, bytes,
                                                              0, stream));
                break;
            case Kind::fcollect:
                NVSHMEM_CHECK(
                    nvshmemx_fcollectmem_on_stream(NVSHMEM_TEAM_WORLD, dst, src, bytes, stream));
                break;
            case Kind::alltoall:
                NVSHMEM_CHECK(
                    nvshmemx_alltoallmem_on_stream(NVSHMEM_TEAM_WORLD, dst, src, bytes, stream));
                break;
            case Kind::sum_reduce:
                NVSHMEM_CHECK(nvshmemx_float_sum_reduce_on_stream(
                    NVSHMEM_TEAM_WORLD, reinterpret_cast<float *>(dst),
                    reinterpret_cast<const float *>(src), bytes / 4, stream));
                break;
        }
    }

    // `count` operations of the form: back to back on the stream, or one kernel that loops.
    void enqueue(Kind kind, bool in_kernel, size_t bytes, int count) {
        if (!in_kernel) {
            for (int i = 0; i < count; i++) enqueue_on_stream(kind, bytes);
        } else {
            int kind_arg = static_cast<int>(kind);
            void *dst_arg = dst;
            const void *src_arg = src;
            void *args[] = {&kind_arg, &dst_arg, &src_arg, &bytes, &count};
            // NVSHMEM requires its collective launch for kernels that synchronise across PEs.
            NVSHMEM_CHECK(
                nvshmemx_collective_launch(reinterpret_cast<const void *>(collective_block_kernel),
                                           dim3(1), dim3(kBlockThreads), args, 0, stream));
        }
        CUDA_CHECK(cudaGetLastError());
    }

    // The spec's measurement: a warm-up, then 3 timed runs that all PEs start together; the
    // median time of one operation, in microseconds.
    double measure(Kind kind, bool in_kernel, size_t bytes) {
        int iters = iterations(bytes);
        enqueue(kind, in_kernel, bytes, std::min(iters, 10));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        double us[kRepeats];
        for (double &run_us : us) {
            nvshmem_barrier_all();
            CUDA_CHECK(cudaEventRecord(start, stream));
            enqueue(kind, in_kernel, bytes, iters);
            CUDA_CHECK(cudaEventRecord(stop, stream));
            CUDA_CHECK(cudaEventSynchronize(stop));
            float ms = 0;
            CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
            run_us = ms * 1000.0 / iters;
        }
        std::sort(us, us + kRepeats);
        return us[kRepeats / 2];
    }

    // Every PE's source holds its pattern and its dest something no collective writes, and no
    // PE starts before all are ready (nor while a peer still reads the previous source).
    void prepare(Kind kind, size_t bytes) {
        size_t region = received_bytes(kind, bytes, n_pes);
        if (kind == Kind::sum_reduce) {
            fill_floats_kernel<<<fill_blocks, 256, 0, stream>>>(reinterpret_cast<float *>(src),
                                                                bytes / 4, me);
        } else {
            size_t len = kind == Kind::alltoall ? bytes * n_pes : bytes;
            fill_bytes_kernel<<<fill_blocks, 256, 0, stream>>>(src, len, bytes, me);
        }
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemsetAsync(dst, 0xEE, region, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        nvshmem_barrier_all();
    }

    // This PE's dest after the timed runs; then every PE learns every verdict, so that all
    // stop together on a wrong result.
    void verify(Kind kind, const char *form, size_t bytes) {
        CUDA_CHECK(cudaStreamSynchronize(stream));
        Mismatches init = {0, ~0ull};
        CUDA_CHECK(cudaMemcpy(mismatches, &init, sizeof init, cudaMemcpyHostToDevice));
        size_t region = received_bytes(kind, bytes, n_pes);
        if (kind == Kind::sum_reduce) {
            check_sum_kernel<<<fill_blocks, 256, 0, stream>>>(reinterpret_cast<const float *>(dst),
                                                              bytes / 4, n_pes, mismatches);
        } else {
            uint32_t tag = kind == Kind::alltoall ? me : 0;
            check_bytes_kernel<<<fill_blocks, 256, 0, stream>>>(dst, region, bytes, tag,
                                                                mismatches);
        }
        CUDA_CHECK(cudaGetLastError());
        Mismatches found;
        CUDA_CHECK(
            cudaMemcpyAsync(&found, mismatches, sizeof found, cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        if (found.count > 0) describe_mismatch(kind, form, bytes, found);

        for (int pe = 0; pe < n_pes; pe++) nvshmem_int_p(verdicts + me, found.count > 0, pe);
        nvshmem_barrier_all();
        std::vector<int> all(n_pes);
        CUDA_CHECK(cudaMemcpy(all.data(), verdicts, n_pes * sizeof(int), cudaMemcpyDeviceToHost));
        std::string wrong;
        for (int pe = 0; pe < n_pes; pe++)
            if (all[pe]) wrong += (wrong.empty() ? "" : ", ") + std::to_string(pe);
        if (!wrong.empty())
            fail("wrong result: %s_%s pes=%d bytes=%zu on PE(s) %s (each one's log says where)",
                 kind_name(kind), form, n_pes, bytes, wrong.c_str());
    }

    void describe_mismatch(Kind kind, const char *form, size_t bytes, const Mismatches &found) {
        size_t at = found.first;
        std::string detail;
        if (kind == Kind::sum_reduce) {
            float got = 0;
            CUDA_CHECK(cudaMemcpy(&got, dst + at * 4, 4, cudaMemcpyDeviceToHost));
            detail = "float " + std::to_string(at) + " is " + std::to_string(got) + ", want " +
                     std::to_string(expected_sum(n_pes, at));
        } else {
            uint8_t got = 0;
            CUDA_CHECK(cudaMemcpy(&got, dst + at, 1, cudaMemcpyDeviceToHost));
            uint32_t tag = kind == Kind::alltoall ? me : 0;
            uint8_t want = pattern_byte(at / bytes, tag, at % bytes);
            char text[160];
            snprintf(text, sizeof text,
                     "byte %zu (PE %zu's block, offset %zu) is 0x%02x, want 0x%02x", at, at / bytes,
                     at % bytes, got, want);
            detail = text;
        }
        fprintf(stderr, "collectives: PE %d: %s_%s pes=%d bytes=%zu: %llu wrong; the first: %s\n",
                me, kind_name(kind), form, n_pes, bytes, found.count, detail.c_str());
    }

    void print(Kind kind, const char *form, size_t bytes, double us) {
        if (me != 0) return;
        if (kind == Kind::barrier_all) {
            printf("%s_%s pes=%d us=%.3f\n", kind_name(kind), form, n_pes, us);
        } else {
            double gbps = received_bytes(kind, bytes, n_pes) / (us * 1e3);
            printf("%s_%s pes=%d bytes=%zu us=%.3f algbw_GBps=%.3f\n", kind_name(kind), form, n_pes,
                   bytes, us, gbps);
        }
        fflush(stdout);
    }
};

void *symmetric(size_t bytes) {
    void *ptr = nvshmem_malloc(bytes);
    if (ptr == nullptr)
        fail("nvshmem_malloc(%zu) failed: the symmetric heap is too small (NVSHMEM_SYMMETRIC_SIZE)",
             bytes);
    return ptr;
}

}  // namespace

int main() {
    // Source and dest of n_pes * 64 MiB each, and room for NVSHMEM's own buffers, unless the
    // caller chose the heap's size.
    int gpu = bench_start::start_pe(
        "collectives", [](int n_pes) { return 2 * n_pes * kMaxBytes + (256u << 20); });
    int n_gpus = 0;
    CUDA_CHECK(cudaGetDeviceCount(&n_gpus));
    int status = nvshmemx_init_status();

    Bench bench;
    bench.me = nvshmem_my_pe();
    bench.n_pes = nvshmem_n_pes();

    CUDA_CHECK(cudaStreamCreateWithFlags(&bench.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&bench.start));
    CUDA_CHECK(cudaEventCreate(&bench.stop));
    bench.src = static_cast<uint8_t *>(symmetric(bench.n_pes * kMaxBytes));
    bench.dst = static_cast<uint8_t *>(symmetric(bench.n_pes * kMaxBytes));
    bench.verdicts = static_cast<int *>(symmetric(bench.n_pes * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&bench.mismatches, sizeof(Mismatches)));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, gpu));
    bench.fill_blocks = prop.multiProcessorCount * 4;

    if (bench.me == 0) {
        printf("# NVSHMEM %d.%d.%d collectives: %d PEs, PE i on GPU i %% %d (%s)%s\n",
               NVSHMEM_VENDOR_MAJOR_VERSION, NVSHMEM_VENDOR_MINOR_VERSION,
               NVSHMEM_VENDOR_PATCH_VERSION, bench.n_pes, n_gpus, prop.name,
               status == NVSHMEM_STATUS_FULL_MPG ? "; PEs share GPUs through MPS" : "");
        fflush(stdout);
    }

    const Kind data_kinds[] = {Kind::broadcast, Kind::fcollect, Kind::alltoall, Kind::sum_reduce};
    const bool forms[] = {false, true};
    for (bool in_kernel : forms) {
        const char *form = in_kernel ? "in_kernel" : "on_stream";
        nvshmem_barrier_all();
        bench.print(Kind::barrier_all, form, 0, bench.measure(Kind::barrier_all, in_kernel, 0));
    }
    for (Kind kind : data_kinds) {
        if (bench.me == 0)
            fprintf(stderr, "collectives: %s at %d PEs\n", kind_name(kind), bench.n_pes);
        for (size_t bytes : kSizes) {
            for (bool in_kernel : forms) {
                const char *form = in_kernel ? "in_kernel" : "on_stream";
                bench.prepare(kind, bytes);
                double us = bench.measure(kind, in_kernel, bytes);
                bench.verify(kind, form, bytes);
                bench.print(kind, form, bytes, us);
            }
        }
    }

    nvshmem_barrier_all();
    CUDA_CHECK(cudaFree(bench.mismatches));
    nvshmem_free(bench.verdicts);
    nvshmem_free(bench.dst);
    nvshmem_free(bench.src);
    nvshmem_finalize();
    return 0;
}
