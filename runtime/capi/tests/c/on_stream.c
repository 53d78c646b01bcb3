/* on_stream: the on-stream extensions of shmemx.h on the default stream (NULL), so that the
 * program needs no CUDA header and runs on every backend.
 * putmem, getmem, putmem_signal and signal_op on the stream, quiet_on_stream, a
 * signal_wait_until_on_stream, barrier_all and sync_all on the stream, and a typed sum
 * reduction. It reads symmetric memory only through blocking gets into private buffers, so
 * that it checks the same way when shmem_malloc returns GPU memory (oshrun --gpu). */
#include <stdint.h>
#include <string.h>

#include <shmemx.h>

#include "check.h"

enum { N = 256 };

/* The n longs at sym on this PE, through a get into a private buffer. */
static void read_own(long *out, const long *sym, int n) {
    shmem_getmem(out, sym, (size_t)n * sizeof(long), shmem_my_pe());
}

int main(void) {
    shmem_init();
    int me, n, right, left;
    ring_of_pes(&me, &n, &right, &left);
    cudaStream_t stream = NULL;
    long *src = shmem_malloc(N * sizeof(long));
    long *dst = shmem_malloc(N * sizeof(long));
    long *back = shmem_malloc(N * sizeof(long));
    uint64_t *sig = shmem_malloc(2 * sizeof(uint64_t));
    long *sum = shmem_malloc(sizeof(long));
    long mine[N], got[N];
    uint64_t zero[2] = {0, 0};
    for (int i = 0; i < N; i++)
        mine[i] = me * N + i;
    shmem_putmem(src, mine, sizeof mine, me);
    shmem_putmem(sig, zero, sizeof zero, me);
    shmem_barrier_all();

    /* A put on the stream to the right, completed by quiet_on_stream and the barrier. */
    shmemx_putmem_on_stream(dst, src, sizeof mine, right, stream);
    shmemx_quiet_on_stream(stream);
    shmemx_barrier_all_on_stream(stream);
    read_own(got, dst, N);
    for (int i = 0; i < N; i++)
        CHECK(got[i] == left * N + i, "putmem_on_stream element %d: %ld", i, got[i]);

    /* A get on the stream from the left neighbour's source. */
    shmemx_getmem_on_stream(back, src, sizeof mine, left, stream);
    shmemx_sync_all_on_stream(stream);
    read_own(got, back, N);
    for (int i = 0; i < N; i++)
        CHECK(got[i] == left * N + i, "getmem_on_stream element %d: %ld", i, got[i]);
    shmem_barrier_all();

    /* Put with signal: whoever sees the signal sees the data. */
    shmemx_putmem_signal_on_stream(dst, src, N / 2 * sizeof(long), &sig[0], 1, SHMEM_SIGNAL_SET,
                                   right, stream);
    shmemx_signal_wait_until_on_stream(&sig[0], SHMEM_CMP_EQ, 1, stream);
    read_own(got, dst, N / 2);
    for (int i = 0; i < N / 2; i++)
        CHECK(got[i] == left * N + i, "putmem_signal_on_stream element %d", i);

    /* Every PE adds 1 to PE 0's second signal on the stream. */
    shmemx_signal_op_on_stream(&sig[1], 1, SHMEM_SIGNAL_ADD, 0, stream);
    shmemx_quiet_on_stream(stream);
    if (me == 0)
        shmemx_signal_wait_until_on_stream(&sig[1], SHMEM_CMP_EQ, (uint64_t)n, stream);
    shmemx_barrier_all_on_stream(stream);

    /* A sum over every PE of its number. */
    long one = me;
    shmem_putmem(src, &one, sizeof one, me);
    shmem_barrier_all();
    CHECK(shmemx_long_sum_reduce_on_stream(SHMEM_TEAM_WORLD, sum, src, 1, stream) == 0,
          "sum_reduce_on_stream");
    read_own(got, sum, 1);
    CHECK(got[0] == (long)n * (n - 1) / 2, "sum of PE numbers: %ld", got[0]);

    shmem_free(sum);
    shmem_free(sig);
    shmem_free(back);
    shmem_free(dst);
    shmem_free(src);
    FINISH("on_stream");
    return 0;
}
