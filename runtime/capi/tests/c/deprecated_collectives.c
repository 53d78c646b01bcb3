/* deprecated_collectives: the active-set collectives of 1.0-1.4 with their pSync and pWrk
 * arrays, on a sub-set of the PEs (the even ones: PE_start 0, logPE_stride 1) and on all.
 * barrier, broadcast64 (the root's dest is left alone), fcollect64, collect32, alltoall64,
 * and the *_to_all reductions (sum, max, and, prod). Each pSync is used once, so no wait for
 * its reset is needed between calls. */
#include "check.h"

static long *new_psync(size_t words) {
    long *p = shmem_malloc(words * sizeof(long));
    for (size_t i = 0; i < words; i++)
        p[i] = SHMEM_SYNC_VALUE;
    return p;
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int set_size = (n + 1) / 2;
    int in_set = me % 2 == 0;
    long *bar_sync = new_psync(SHMEM_BARRIER_SYNC_SIZE);
    long *bcast_sync = new_psync(SHMEM_BCAST_SYNC_SIZE);
    long *coll_sync = new_psync(SHMEM_COLLECT_SYNC_SIZE);
    long *coll32_sync = new_psync(SHMEM_COLLECT_SYNC_SIZE);
    long *a2a_sync = new_psync(SHMEM_ALLTOALL_SYNC_SIZE);
    long *red_sync[4];
    for (int k = 0; k < 4; k++)
        red_sync[k] = new_psync(SHMEM_REDUCE_SYNC_SIZE);
    long *pwrk = shmem_malloc(SHMEM_REDUCE_MIN_WRKDATA_SIZE * sizeof(long));
    int *ipwrk = shmem_malloc(SHMEM_REDUCE_MIN_WRKDATA_SIZE * sizeof(int));
    double *dpwrk = shmem_malloc(SHMEM_REDUCE_MIN_WRKDATA_SIZE * sizeof(double));
    long *src = shmem_malloc(4 * sizeof(long)), *dst = shmem_malloc(4 * n * sizeof(long));
    int *isrc = shmem_malloc(2 * sizeof(int)), *idst = shmem_malloc(2 * n * sizeof(int));
    double *dsrc = shmem_malloc(sizeof(double)), *ddst = shmem_malloc(sizeof(double));
    for (int i = 0; i < 4; i++)
        src[i] = me * 4 + i;
    for (int i = 0; i < 4 * n; i++)
        dst[i] = -1;
    shmem_barrier_all();

    if (in_set) {
        shmem_barrier(0, 1, set_size, bar_sync);
        /* Root index 0 of the set is PE 0; its dest keeps its old value. */
        shmem_broadcast64(dst, src, 4, 0, 0, 1, set_size, bcast_sync);
        for (int i = 0; i < 4; i++)
            CHECK(dst[i] == (me == 0 ? -1 : i), "broadcast64 element %d: %ld", i, dst[i]);
        shmem_fcollect64(dst, src, 4, 0, 1, set_size, coll_sync);
        for (int p = 0; p < set_size; p++)
            for (int i = 0; i < 4; i++)
                CHECK(dst[p * 4 + i] == 2 * p * 4 + i, "fcollect64 block %d element %d", p, i);
        isrc[0] = me;
        shmem_collect32(idst, isrc, 1, 0, 1, set_size, coll32_sync);
        for (int p = 0; p < set_size; p++)
            CHECK(idst[p] == 2 * p, "collect32 element %d", p);
        shmem_long_sum_to_all(dst, src, 4, 0, 1, set_size, pwrk, red_sync[0]);
        for (int i = 0; i < 4; i++) {
            long want = 0;
            for (int p = 0; p < n; p += 2)
                want += p * 4 + i;
            CHECK(dst[i] == want, "long_sum_to_all element %d: %ld want %ld", i, dst[i], want);
        }
    }
    shmem_barrier_all();

    /* Over all PEs. */
    long *a2a_src = shmem_malloc(n * sizeof(long)), *a2a_dst = shmem_malloc(n * sizeof(long));
    for (int j = 0; j < n; j++)
        a2a_src[j] = me * 100 + j; /* element j goes to PE j */
    shmem_barrier_all();
    shmem_alltoall64(a2a_dst, a2a_src, 1, 0, 0, n, a2a_sync);
    for (int i = 0; i < n; i++)
        CHECK(a2a_dst[i] == i * 100 + me, "alltoall64 from %d", i);
    isrc[0] = me;
    shmem_int_max_to_all(idst, isrc, 1, 0, 0, n, ipwrk, red_sync[1]);
    CHECK(idst[0] == n - 1, "int_max_to_all %d", idst[0]);
    src[0] = ~(1L << me);
    shmem_long_and_to_all(dst, src, 1, 0, 0, n, pwrk, red_sync[2]);
    CHECK(dst[0] == ~((1L << n) - 1), "long_and_to_all");
    *dsrc = me + 1;
    shmem_double_prod_to_all(ddst, dsrc, 1, 0, 0, n, dpwrk, red_sync[3]);
    double fact = 1;
    for (int p = 1; p <= n; p++)
        fact *= p;
    CHECK(*ddst == fact, "double_prod_to_all %g", *ddst);
    FINISH("deprecated_collectives");
    return 0;
}
