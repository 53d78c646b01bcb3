/* generic: the C11 _Generic names, which pick the typed call from the argument types.
 * RMA (put/get/p/g/iput/put_nbi), AMO (atomic_fetch_add, add, fetch, set, swap,
 * compare_swap, fetch_inc, inc, fetch_or), their context-first forms, wait_until/test,
 * put_signal, and the team collectives (broadcast, fcollect, alltoall, sum/max_reduce). */
#include <stdint.h>

#include "check.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    long *l = shmem_calloc(8, sizeof(long));
    double *d = shmem_calloc(8, sizeof(double));
    int *i32 = shmem_calloc(8, sizeof(int));
    unsigned long *u = shmem_calloc(1, sizeof(unsigned long));
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    long lsrc[4] = {me, me + 1, me + 2, me + 3};
    double dsrc[4] = {me + 0.5, me + 1.5, me + 2.5, me + 3.5};
    shmem_barrier_all();

    shmem_put(l, lsrc, 4, right);
    shmem_put(d, dsrc, 4, right);
    shmem_p(&i32[0], me + 7, right);
    shmem_barrier_all();
    CHECK(l[3] == left + 3 && d[3] == left + 3.5 && i32[0] == left + 7, "put/p generics");
    long lgot[4];
    double dgot[4];
    shmem_get(lgot, l, 4, right);
    shmem_get(dgot, d, 4, right);
    CHECK(lgot[2] == me + 2 && dgot[2] == me + 2.5, "get generics");
    CHECK(shmem_g(&d[1], right) == me + 1.5 && shmem_g(&i32[0], right) == me + 7, "g generic");
    shmem_barrier_all();
    shmem_iput(&l[4], lsrc, 2, 1, 2, right);
    /* A named array: a compound literal's commas would split the generic macro's arguments. */
    const int four[4] = {1, 2, 3, 4};
    shmem_put_nbi(&i32[4], four, 4, right);
    shmem_quiet();
    shmem_barrier_all();
    CHECK(l[4] == left && l[6] == left + 1 && i32[7] == 4, "iput/put_nbi generics");
    shmem_barrier_all();

    /* AMOs on PE 0 and on the right neighbour. */
    CHECK(shmem_atomic_fetch_add(&l[0], 2L, 0) >= n - 1, "atomic_fetch_add generic");
    shmem_atomic_add(&l[0], 1L, 0);
    shmem_atomic_inc(&i32[1], 0);
    CHECK(shmem_atomic_fetch_inc(&i32[2], 0) >= 0, "atomic_fetch_inc generic");
    shmem_atomic_fetch_or(u, 1UL << me, 0);
    shmem_barrier_all();
    if (me == 0)
        CHECK(l[0] == n - 1 + 3L * n, "atomic add generics gave %ld", l[0]);
    shmem_barrier_all();
    shmem_atomic_set(&d[0], 0.25 * me, right);
    shmem_barrier_all();
    CHECK(shmem_atomic_fetch(&d[0], me) == 0.25 * left, "atomic_set/fetch on double");
    shmem_barrier_all();
    CHECK(shmem_atomic_swap(&d[0], 9.0, right) == 0.25 * me, "atomic_swap on double");
    CHECK(shmem_atomic_compare_swap(&i32[3], 0, me + 1, right) == 0, "compare_swap generic");
    shmem_barrier_all();
    CHECK(i32[3] == left + 1, "compare_swap stored");
    if (me == 0)
        CHECK(*u == (1UL << n) - 1 && i32[1] == n, "fetch_or / inc generics");
    shmem_barrier_all();

    /* Context-first forms. */
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");
    shmem_put(ctx, l, lsrc, 1, right);
    shmem_atomic_add(ctx, &l[1], 5L, right);
    CHECK(shmem_atomic_fetch_add(ctx, &l[2], 0L, right) == me + 2, "ctx atomic_fetch_add");
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    CHECK(l[0] == left && l[1] == left + 1 + 5, "ctx put/atomic_add generics");
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();

    /* Waits and signals. */
    shmem_p(&l[7], 1L, right);
    shmem_wait_until(&l[7], SHMEM_CMP_EQ, 1L);
    while (!shmem_test(&l[7], SHMEM_CMP_EQ, 1L))
        ;
    shmem_put_signal(&d[4], dsrc, 4, sig, 1, SHMEM_SIGNAL_SET, right);
    shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 1);
    CHECK(d[7] == left + 3.5, "put_signal generic");
    shmem_barrier_all();

    /* Team collectives. */
    long *red = shmem_malloc(4 * n * sizeof(long)), *out = shmem_malloc(4 * n * sizeof(long));
    for (int k = 0; k < 4; k++)
        red[k] = me + k;
    CHECK(shmem_sum_reduce(SHMEM_TEAM_WORLD, out, red, 4) == 0, "sum_reduce generic");
    CHECK(out[3] == (long)n * (n - 1) / 2 + 3L * n, "sum_reduce gave %ld", out[3]);
    CHECK(shmem_max_reduce(SHMEM_TEAM_WORLD, out, red, 1) == 0 && out[0] == n - 1, "max");
    CHECK(shmem_broadcast(SHMEM_TEAM_WORLD, out, red, 4, 0) == 0 && out[1] == 1, "broadcast");
    CHECK(shmem_fcollect(SHMEM_TEAM_WORLD, out, red, 1) == 0 && out[n - 1] == n - 1, "fcollect");
    shmem_barrier_all();
    for (int k = 0; k < n; k++)
        red[k] = me; /* one element to every PE */
    CHECK(shmem_alltoall(SHMEM_TEAM_WORLD, out, red, 1) == 0, "alltoall generic");
    CHECK(out[left] == left, "alltoall gave %ld", out[left]);
    shmem_barrier_all();
    shmem_free(out);
    shmem_free(red);
    shmem_free(sig);
    shmem_free(u);
    shmem_free(i32);
    shmem_free(d);
    shmem_free(l);
    PASS("generic");
    shmem_finalize();
    return 0;
}
