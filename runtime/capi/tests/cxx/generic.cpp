// generic (C++): the spec's generic names as C++ overloads (C++ has no _Generic).
// put/get/p/g, atomic_fetch_add/add/fetch/set/swap/compare_swap, a context-first overload,
// wait_until/test, and the team collectives sum_reduce/broadcast/fcollect, on long, int and
// double.
#include "../c/check.h"

int main() {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    long *l = static_cast<long *>(shmem_calloc(8, sizeof(long)));
    double *d = static_cast<double *>(shmem_calloc(8, sizeof(double)));
    int *i32 = static_cast<int *>(shmem_calloc(8, sizeof(int)));
    const long lsrc[4] = {me + 0L, me + 1L, me + 2L, me + 3L};
    const double dsrc[4] = {me + 0.5, me + 1.5, me + 2.5, me + 3.5};
    shmem_barrier_all();

    shmem_put(l, lsrc, 4, right);
    shmem_put(d, dsrc, 4, right);
    shmem_p(&i32[0], me + 7, right);
    shmem_barrier_all();
    CHECK(l[3] == left + 3 && d[3] == left + 3.5 && i32[0] == left + 7, "put/p overloads");
    long lgot[4];
    shmem_get(lgot, l, 4, right);
    CHECK(lgot[2] == me + 2, "get overload");
    CHECK(shmem_g(&d[1], right) == me + 1.5, "g overload");
    shmem_barrier_all();

    CHECK(shmem_atomic_fetch_add(&l[4], 2L, 0) >= 0, "atomic_fetch_add overload");
    shmem_atomic_add(&i32[1], 1, 0);
    shmem_barrier_all();
    if (me == 0)
        CHECK(l[4] == 2L * n && i32[1] == n, "atomic add overloads: %ld %d", l[4], i32[1]);
    shmem_barrier_all();
    shmem_atomic_set(&d[5], 0.25 * me, right);
    shmem_barrier_all();
    CHECK(shmem_atomic_fetch(&d[5], me) == 0.25 * left, "atomic_set/fetch overloads");
    shmem_barrier_all();
    CHECK(shmem_atomic_swap(&d[5], 9.0, right) == 0.25 * me, "atomic_swap overload");
    CHECK(shmem_atomic_compare_swap(&i32[3], 0, me + 1, right) == 0, "compare_swap overload");
    shmem_barrier_all();

    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");
    shmem_atomic_add(ctx, &l[5], 5L, right);
    shmem_put(ctx, &l[6], lsrc, 1, right);
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    CHECK(l[5] == 5 && l[6] == left, "context-first overloads");

    shmem_p(&l[7], 1L, right);
    shmem_wait_until(&l[7], SHMEM_CMP_EQ, 1L);
    CHECK(shmem_test(&l[7], SHMEM_CMP_EQ, 1L) == 1, "test overload");
    shmem_barrier_all();

    long *red = static_cast<long *>(shmem_malloc(2 * sizeof(long)));
    long *out = static_cast<long *>(shmem_malloc(2 * n * sizeof(long)));
    red[0] = me;
    red[1] = 1;
    CHECK(shmem_sum_reduce(SHMEM_TEAM_WORLD, out, red, 2) == 0, "sum_reduce overload");
    CHECK(out[0] == static_cast<long>(n) * (n - 1) / 2 && out[1] == n, "sum_reduce result");
    CHECK(shmem_broadcast(SHMEM_TEAM_WORLD, out, red, 1, n - 1) == 0 && out[0] == n - 1,
          "broadcast overload");
    CHECK(shmem_fcollect(SHMEM_TEAM_WORLD, out, red, 2) == 0 && out[2 * (n - 1)] == n - 1,
          "fcollect overload");
    shmem_barrier_all();
    shmem_free(out);
    shmem_free(red);
    shmem_free(i32);
    shmem_free(d);
    shmem_free(l);
    PASS("generic_cxx");
    shmem_finalize();
    return 0;
}
