// The start of the GPU machine's NVSHMEM benchmark programs (collectives.cu, transpose.cu):
// errors that end the PE with a message, the checks of CUDA and NVSHMEM calls, and
// start_pe(), which picks the GPU and initialises NVSHMEM.
//
// Built against NVSHMEM, a PE starts from launcher variables: RANK and NRANKS (or
// OMPI_COMM_WORLD_RANK/SIZE from mpirun, SLURM_PROCID/NTASKS from srun); PE 0 writes NVSHMEM's
// unique id to UIDFILE (default /tmp/nvshmem-PROGRAM.uid) and the others read it there, so the
// file must not be left over from an earlier run. PE i runs on GPU i % n_gpus.
// Built against rshmem's nvshmem.h (RSHMEM_NVSHMEM_H), the launcher (oshrun --gpu) did all of
// that, and start_pe() is nvshmem_init().
#pragma once

#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace bench_start {

// The program's name, for messages, and this PE's rank once known.
inline const char *g_program = "bench";
inline int g_rank = -1;

[[noreturn]] inline void fail(const char *format, ...) {
    va_list args;
    va_start(args, format);
    if (g_rank >= 0)
        fprintf(stderr, "%s: PE %d: ", g_program, g_rank);
    else
        fprintf(stderr, "%s: ", g_program);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    exit(1);
}

#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t status_ = (call);                                                              \
        if (status_ != cudaSuccess)                                                                \
            bench_start::fail("%s failed (%s:%d): %s", #call, __FILE__, __LINE__,                  \
                              cudaGetErrorString(status_));                                        \
    } while (0)

#define NVSHMEM_CHECK(call)                                                                        \
    do {                                                                                           \
        int status_ = (call);                                                                      \
        if (status_ != 0)                                                                          \
            bench_start::fail("%s failed (%s:%d) with status %d", #call, __FILE__, __LINE__,       \
                              status_);                                                            \
    } while (0)

#ifndef RSHMEM_NVSHMEM_H
// This process's rank and the number of ranks, from the first launcher variable that is set.
inline int rank_from_env(const char *const names[], int count, const char *what) {
    for (int i = 0; i < count; i++) {
        const char *value = getenv(names[i]);
        if (value == nullptr) continue;
        char *end = nullptr;
        errno = 0;
        long parsed = strtol(value, &end, 10);
        if (errno != 0 || end == value || *end != '\0' || parsed < 0 || parsed > 1 << 20)
            fail("%s=%s is not a %s", names[i], value, what);
        return static_cast<int>(parsed);
    }
    std::string list;
    for (int i = 0; i < count; i++) list += std::string(i ? ", " : "") + names[i];
    fail("no %s: set one of %s (the tools/gpu scripts set RANK and NRANKS)", what, list.c_str());
}

// PE 0 publishes NVSHMEM's unique id through a file (written aside, then renamed, so that a
// reader never sees half of it); the other PEs wait for it.
inline nvshmemx_uniqueid_t exchange_unique_id(int rank, const std::string &path) {
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (rank == 0) {
        NVSHMEM_CHECK(nvshmemx_get_uniqueid(&id));
        std::string aside = path + ".tmp." + std::to_string(getpid());
        FILE *file = fopen(aside.c_str(), "wb");
        if (file == nullptr)
            fail("cannot write the unique id to %s: %s", aside.c_str(), strerror(errno));
        bool written = fwrite(&id, sizeof id, 1, file) == 1;
        if (fclose(file) != 0 || !written) fail("cannot write the unique id to %s", aside.c_str());
        if (rename(aside.c_str(), path.c_str()) != 0)
            fail("cannot rename %s to %s: %s", aside.c_str(), path.c_str(), strerror(errno));
        return id;
    }
    const int wait_s = 120;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait_s);
    FILE *file;
    while ((file = fopen(path.c_str(), "rb")) == nullptr) {
        if (std::chrono::steady_clock::now() > deadline)
            fail("no unique id in %s after %d s: is PE 0 running with the same UIDFILE?",
                 path.c_str(), wait_s);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    bool read = fread(&id, sizeof id, 1, file) == 1;
    fclose(file);
    if (!read)
        fail("%s does not hold a unique id (a file left from another program?)", path.c_str());
    return id;
}
#endif

// Starts this PE with a symmetric heap of at least `heap_bytes(n_pes)` (where the runtime
// takes a size); returns the GPU it runs on.
inline int start_pe(const char *program, size_t (*heap_bytes)(int n_pes)) {
    g_program = program;
#ifdef RSHMEM_NVSHMEM_H
    // rshmem's device heap grows on demand; the launcher chose the GPU.
    (void)heap_bytes;
    nvshmem_init();
    g_rank = nvshmem_my_pe();
    int gpu = 0;
    CUDA_CHECK(cudaGetDevice(&gpu));
    return gpu;
#else
    const char *rank_names[] = {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"};
    const char *size_names[] = {"NRANKS", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"};
    int rank = rank_from_env(rank_names, 3, "rank");
    g_rank = rank;
    int n_ranks = rank_from_env(size_names, 3, "number of ranks");
    if (n_ranks < 1 || rank >= n_ranks)
        fail("rank %d is not below the number of ranks %d", rank, n_ranks);
    const char *uid_env = getenv("UIDFILE");
    std::string uid_path = uid_env != nullptr ? uid_env : std::string("/tmp/nvshmem-") + program + ".uid";

    int n_gpus = 0;
    CUDA_CHECK(cudaGetDeviceCount(&n_gpus));
    if (n_gpus < 1) fail("no GPU");
    int gpu = rank % n_gpus;
    CUDA_CHECK(cudaSetDevice(gpu));
    CUDA_CHECK(cudaFree(nullptr));

    // Read when NVSHMEM reads its options: before the unique id.
    std::string heap = std::to_string(heap_bytes(n_ranks));
    setenv("NVSHMEM_SYMMETRIC_SIZE", heap.c_str(), 0);

    nvshmemx_uniqueid_t id = exchange_unique_id(rank, uid_path);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    NVSHMEM_CHECK(nvshmemx_set_attr_uniqueid_args(rank, n_ranks, &id, &attr));
    NVSHMEM_CHECK(nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr));
    if (nvshmem_my_pe() != rank || nvshmem_n_pes() != n_ranks)
        fail("NVSHMEM made this PE %d of %d, want %d of %d", nvshmem_my_pe(), nvshmem_n_pes(),
             rank, n_ranks);
    if (nvshmemx_init_status() == NVSHMEM_STATUS_LIMITED_MPG)
        fail(
            "NVSHMEM gives PEs that share a GPU only limited support (its collectives on a stream "
            "exit): run them under CUDA MPS with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE adding up to at "
            "most 100 per GPU, as the tools/gpu scripts do");
    return gpu;
#endif
}

}  // namespace bench_start
