/* signals: put-with-signal and the signal calls.
 * putmem_signal and a typed put_signal with SHMEM_SIGNAL_SET, awaited by signal_wait_until
 * (the data is there when the signal is); put_signal_nbi with SHMEM_SIGNAL_ADD from every PE
 * onto PE 0; signal_fetch; signal_add and signal_set (1.6); a context's put_signal. */
#include <stdint.h>

#include "check.h"

enum { N = 512 };

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    long *data = shmem_calloc(N, sizeof(long));
    uint64_t *sig = shmem_calloc(4, sizeof(uint64_t));
    long src[N];
    for (int i = 0; i < N; i++)
        src[i] = me * N + i;
    shmem_barrier_all();

    shmem_putmem_signal(data, src, N / 2 * sizeof(long), &sig[0], 1, SHMEM_SIGNAL_SET, right);
    /* GE, not EQ: the left neighbour may already have set 2 (its second put below). */
    uint64_t got = shmem_signal_wait_until(&sig[0], SHMEM_CMP_GE, 1);
    CHECK(got == 1 || got == 2, "signal_wait_until returned %llu", (unsigned long long)got);
    for (int i = 0; i < N / 2; i++)
        CHECK(data[i] == left * N + i, "putmem_signal element %d", i);
    /* Without the fence the two put-with-signals to `right` may be delivered in either order
     * (the signal could end at 1, and its 2 could land before the first put's data). */
    shmem_fence();
    shmem_long_put_signal(data + N / 2, src + N / 2, N / 2, &sig[0], 2, SHMEM_SIGNAL_SET, right);
    shmem_signal_wait_until(&sig[0], SHMEM_CMP_EQ, 2);
    for (int i = N / 2; i < N; i++)
        CHECK(data[i] == left * N + i, "long_put_signal element %d", i);
    CHECK(shmem_signal_fetch(&sig[0]) == 2, "signal_fetch");
    shmem_barrier_all();

    /* Every PE adds 1 to PE 0's signal, non-blocking. */
    shmem_long_put_signal_nbi(&data[me % N], &src[0], 1, &sig[1], 1, SHMEM_SIGNAL_ADD, 0);
    shmem_putmem_signal_nbi(&data[0], &src[0], 0, &sig[2], 3, SHMEM_SIGNAL_ADD, 0);
    shmem_quiet();
    if (me == 0) {
        shmem_signal_wait_until(&sig[1], SHMEM_CMP_GE, (uint64_t)n);
        shmem_signal_wait_until(&sig[2], SHMEM_CMP_EQ, 3 * (uint64_t)n);
        CHECK(shmem_signal_fetch(&sig[1]) == (uint64_t)n, "SIGNAL_ADD total");
    }
    shmem_barrier_all();

    /* signal_add and signal_set update a signal without data. */
    shmem_signal_add(&sig[3], 5, right);
    shmem_signal_wait_until(&sig[3], SHMEM_CMP_EQ, 5);
    shmem_barrier_all();
    shmem_signal_set(&sig[3], 9, right);
    shmem_signal_wait_until(&sig[3], SHMEM_CMP_NE, 5);
    CHECK(shmem_signal_fetch(&sig[3]) == 9, "signal_set");
    shmem_barrier_all();

    /* Through a context. */
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");
    shmem_ctx_long_put_signal(ctx, data, src, 4, &sig[0], 7, SHMEM_SIGNAL_SET, right);
    shmem_ctx_quiet(ctx);
    shmem_signal_wait_until(&sig[0], SHMEM_CMP_EQ, 7);
    CHECK(data[3] == left * N + 3, "ctx put_signal data");
    shmem_barrier_all();
    shmem_ctx_destroy(ctx);
    shmem_free(sig);
    shmem_free(data);
    PASS("signals");
    shmem_finalize();
    return 0;
}
