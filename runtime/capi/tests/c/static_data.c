/* static_data: the main program's globals and statics are symmetric, with no heap at all.
 * An initialised global keeps its value across shmem_init; static scalars and arrays are
 * targets of put/get/p/g, atomics, waits, a lock, a signal, collective buffers (team reduce,
 * broadcast, fcollect) and the pSync of an active-set barrier. */
#include <stdint.h>

#include "check.h"

long initialised = 42;            /* .data */
long counter;                     /* .bss */
static int ring[64];              /* static array */
static double scalar;
static long lock;
static long flag;
static uint64_t sig;
static long payload[16];
static long red_src[4], red_dst[4];
static long bar_sync[SHMEM_BARRIER_SYNC_SIZE];

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    CHECK(initialised == 42, "an initialised global is %ld after shmem_init", initialised);
    for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++)
        bar_sync[i] = SHMEM_SYNC_VALUE;
    CHECK(shmem_addr_accessible(&counter, right) && shmem_addr_accessible(ring, right),
          "static data not accessible");
    shmem_barrier_all();

    int src[64];
    for (int i = 0; i < 64; i++)
        src[i] = me * 64 + i;
    shmem_int_put(ring, src, 64, right);
    shmem_double_p(&scalar, me + 0.5, right);
    shmem_long_p(&initialised, 42 + me, right);
    shmem_barrier_all();
    for (int i = 0; i < 64; i++)
        CHECK(ring[i] == left * 64 + i, "put into a static array, element %d", i);
    CHECK(scalar == left + 0.5 && initialised == 42 + left, "p into statics");
    CHECK(shmem_double_g(&scalar, right) == me + 0.5, "g from a static");
    int back[64];
    shmem_int_get(back, ring, 64, right);
    CHECK(back[63] == me * 64 + 63, "get from a static array");

    shmem_long_atomic_add(&counter, 1, 0);
    /* Only a fence orders the add before the fetch that follows it to the same PE. */
    shmem_fence();
    CHECK(shmem_long_atomic_fetch_add(&counter, 0, 0) >= 1, "fetch_add on a global");
    shmem_barrier_all();
    if (me == 0)
        CHECK(counter == n, "atomics on a .bss global gave %ld", counter);
    shmem_barrier_all();

    /* A lock in static data guarding a read-modify-write of PE 0's counter. */
    for (int r = 0; r < 10; r++) {
        shmem_set_lock(&lock);
        shmem_long_p(&counter, shmem_long_g(&counter, 0) + 1, 0);
        shmem_clear_lock(&lock);
    }
    shmem_barrier_all();
    if (me == 0)
        CHECK(counter == 11L * n, "lock in static data: counter %ld", counter);

    /* A wait and a signal on statics. */
    long data[16];
    for (int i = 0; i < 16; i++)
        data[i] = me * 16 + i;
    shmem_long_put(payload, data, 8, right);
    shmem_fence();
    shmem_long_p(&flag, 1, right);
    shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 1);
    CHECK(payload[7] == left * 16 + 7, "data before the flag");
    shmem_long_put_signal(payload + 8, data + 8, 8, &sig, 1, SHMEM_SIGNAL_SET, right);
    shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, 1);
    CHECK(payload[15] == left * 16 + 15, "data with the signal");
    shmem_barrier_all();

    /* Collective buffers in static data. */
    for (int i = 0; i < 4; i++)
        red_src[i] = me + i;
    CHECK(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, red_dst, red_src, 4) == 0, "sum_reduce");
    for (int i = 0; i < 4; i++)
        CHECK(red_dst[i] == (long)n * (n - 1) / 2 + (long)n * i, "static sum_reduce %d", i);
    CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, red_dst, red_src, 4, n - 1) == 0, "broadcast");
    CHECK(red_dst[0] == n - 1, "static broadcast");
    CHECK(shmem_long_fcollect(SHMEM_TEAM_WORLD, payload, red_src, 1) == 0, "fcollect");
    for (int p = 0; p < n && p < 16; p++)
        CHECK(payload[p] == p, "static fcollect element %d", p);
    shmem_barrier(0, 0, n, bar_sync);
    PASS("static_data");
    shmem_finalize();
    return 0;
}
