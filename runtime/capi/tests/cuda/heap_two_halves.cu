// Two 512 MiB symmetric buffers on every PE, more than NVSHMEM_SYMMETRIC_SIZE's 1 GiB holds
// together with anything else: the heap grows on demand. A kernel puts to the far end of each
// buffer on the next PE; the host checks what arrived and writes and reads back the very last
// element. With a heap limit too small the allocation returns NULL, and the program says so
// and exits, as public code does.
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdlib>
#include <iostream>
#include <vector>

#define CUDA_CHECK(call)                                                                     \
    do {                                                                                     \
        cudaError_t status_ = (call);                                                        \
        if (status_ != cudaSuccess) {                                                        \
            std::cerr << "CUDA error at " << __FILE__ << ":" << __LINE__ << ": "             \
                      << cudaGetErrorString(status_) << std::endl;                          \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

constexpr size_t kBufferBytes = size_t(512) << 20;
constexpr size_t kTail = 1024;  // elements each PE writes at the far end of a buffer

__global__ void put_tail(long* dest, size_t count, int pe, long first) {
    for (size_t i = threadIdx.x; i < kTail; i += blockDim.x) {
        nvshmem_long_p(dest + count - kTail + i, first + static_cast<long>(i), pe);
    }
    nvshmem_quiet();
}

// How many of the last kTail elements of `buffer` differ from first, first + 1, ...
int count_wrong(const long* buffer, size_t count, long first) {
    std::vector<long> tail(kTail);
    CUDA_CHECK(cudaMemcpy(tail.data(), buffer + count - kTail, kTail * sizeof(long), cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (size_t i = 0; i < kTail; i++) wrong += tail[i] != first + static_cast<long>(i);
    return wrong;
}

int main() {
    nvshmem_init();
    int me = nvshmem_my_pe();
    int npes = nvshmem_n_pes();
    int next = (me + 1) % npes;
    int prev = (me + npes - 1) % npes;
    size_t count = kBufferBytes / sizeof(long);

    long* first = static_cast<long*>(nvshmem_malloc(kBufferBytes));
    long* second = static_cast<long*>(nvshmem_malloc(kBufferBytes));
    if (first == nullptr || second == nullptr) {
        std::cout << "PE " << me << ": nvshmem_malloc of 512 MiB returned NULL" << std::endl;
        exit(1);
    }
    put_tail<<<1, 256>>>(first, count, next, 1000L * me);
    put_tail<<<1, 256>>>(second, count, next, -1000L * me);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    nvshmem_barrier_all();

    int wrong = count_wrong(first, count, 1000L * prev) + count_wrong(second, count, -1000L * prev);
    long last = 42 + me;
    CUDA_CHECK(cudaMemcpy(second + count - 1, &last, sizeof last, cudaMemcpyHostToDevice));
    long back = 0;
    CUDA_CHECK(cudaMemcpy(&back, second + count - 1, sizeof back, cudaMemcpyDeviceToHost));
    wrong += back != last;

    if (wrong == 0) {
        std::cout << "PE " << me << ": both 512 MiB buffers end with what PE " << prev << " put there" << std::endl;
    } else {
        std::cout << "PE " << me << ": " << wrong << " wrong values at the far ends" << std::endl;
    }
    nvshmem_free(second);
    nvshmem_free(first);
    nvshmem_finalize();
    return wrong == 0 ? 0 : 1;
}
