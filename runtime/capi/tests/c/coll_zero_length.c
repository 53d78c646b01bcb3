/* coll_zero_length: every collective with nelems == 0 and NULL buffers does nothing and
 * returns 0; a collect in which some PEs bring no elements (and no source array) still
 * concatenates the others' elements. Team forms, the *mem forms, the deprecated active-set
 * forms with their pSync and pWrk, and the 1.6 scans. */
#include "check.h"

static long pSync[SHMEM_COLLECT_SYNC_SIZE];
static long pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];

static void reset_psync(void) {
    for (int i = 0; i < SHMEM_COLLECT_SYNC_SIZE; i++)
        pSync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_team_t world = SHMEM_TEAM_WORLD;
    reset_psync();

    /* OpenSHMEM 1.5 sections 9.9.5 to 9.9.9: nelems (nreduce) counts the elements moved; with
     * none, no buffer is read or written, so none need exist. */
    CHECK(shmem_long_broadcast(world, NULL, NULL, 0, 0) == 0, "broadcast of 0");
    CHECK(shmem_broadcastmem(world, NULL, NULL, 0, 0) == 0, "broadcastmem of 0");
    CHECK(shmem_int_collect(world, NULL, NULL, 0) == 0, "collect of 0");
    CHECK(shmem_collectmem(world, NULL, NULL, 0) == 0, "collectmem of 0");
    CHECK(shmem_double_fcollect(world, NULL, NULL, 0) == 0, "fcollect of 0");
    CHECK(shmem_fcollectmem(world, NULL, NULL, 0) == 0, "fcollectmem of 0");
    CHECK(shmem_long_alltoall(world, NULL, NULL, 0) == 0, "alltoall of 0");
    CHECK(shmem_alltoallmem(world, NULL, NULL, 0) == 0, "alltoallmem of 0");
    CHECK(shmem_long_alltoalls(world, NULL, NULL, 1, 1, 0) == 0, "alltoalls of 0");
    CHECK(shmem_alltoallsmem(world, NULL, NULL, 1, 1, 0) == 0, "alltoallsmem of 0");
    CHECK(shmem_long_sum_reduce(world, NULL, NULL, 0) == 0, "sum_reduce of 0");
    CHECK(shmem_int_max_reduce(world, NULL, NULL, 0) == 0, "max_reduce of 0");
    CHECK(shmem_ulong_and_reduce(world, NULL, NULL, 0) == 0, "and_reduce of 0");
    CHECK(shmem_long_sum_inscan(world, NULL, NULL, 0) == 0, "sum_inscan of 0");
    CHECK(shmem_long_sum_exscan(world, NULL, NULL, 0) == 0, "sum_exscan of 0");

    /* The deprecated active-set forms, over every PE and over PE 0 alone. */
    shmem_broadcast32(NULL, NULL, 0, 0, 0, 0, npes, pSync);
    shmem_broadcast64(NULL, NULL, 0, 0, 0, 0, npes, pSync);
    shmem_collect32(NULL, NULL, 0, 0, 0, npes, pSync);
    shmem_fcollect64(NULL, NULL, 0, 0, 0, npes, pSync);
    shmem_alltoall32(NULL, NULL, 0, 0, 0, npes, pSync);
    shmem_alltoalls64(NULL, NULL, 1, 1, 0, 0, 0, npes, pSync);
    shmem_long_sum_to_all(NULL, NULL, 0, 0, 0, npes, pWrk, pSync);
    shmem_barrier_all();
    if (me == 0) {
        shmem_collect64(NULL, NULL, 0, 0, 0, 1, pSync);
        shmem_long_max_to_all(NULL, NULL, 0, 0, 0, 1, pWrk, pSync);
    }
    reset_psync();

    /* Section 9.9.8: collect lets nelems vary from PE to PE; here the odd PEs bring none,
     * and pass no source array. */
    long total = 0;
    for (int p = 0; p < npes; p += 2)
        total += p + 1;
    long *src = shmem_malloc(npes * sizeof(long));
    long *dest = shmem_malloc(total * sizeof(long));
    for (int i = 0; i < npes; i++)
        src[i] = 10 * me + i;
    shmem_barrier_all();
    int odd = me % 2;
    CHECK(shmem_long_collect(world, dest, odd ? NULL : src, odd ? 0 : me + 1) == 0, "collect");
    long k = 0;
    for (int p = 0; p < npes; p += 2)
        for (int i = 0; i <= p; i++, k++)
            CHECK(dest[k] == 10 * p + i, "collect [%ld] = %ld", k, dest[k]);
    shmem_barrier_all();
    for (long i = 0; i < total; i++)
        dest[i] = -1;
    shmem_barrier_all();
    shmem_collect64(dest, odd ? NULL : src, odd ? 0 : me + 1, 0, 0, npes, pSync);
    k = 0;
    for (int p = 0; p < npes; p += 2)
        for (int i = 0; i <= p; i++, k++)
            CHECK(dest[k] == 10 * p + i, "collect64 [%ld] = %ld", k, dest[k]);

    shmem_barrier_all();
    shmem_free(dest);
    shmem_free(src);
    PASS("coll_zero_length");
    shmem_finalize();
    return 0;
}
