/* coll_in_place: collectives whose source and dest are the same array, and a broadcast whose
 * arrays overlap. Team broadcasts (typed and mem), the deprecated shmem_broadcast32/64 with
 * their pSync, team reductions, the deprecated *_to_all with pWrk, and the 1.6 scans. */
#include "check.h"

#define N 4

static long pSync[SHMEM_BCAST_SYNC_SIZE];
static long pSync2[SHMEM_BCAST_SYNC_SIZE];
static long pSyncRed[SHMEM_REDUCE_SYNC_SIZE];
static long pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long lbuf[N];
static int ibuf[N];

int main(void) {
    int i, root;
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    for (i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++)
        pSync[i] = pSync2[i] = SHMEM_SYNC_VALUE;
    for (i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        pSyncRed[i] = SHMEM_SYNC_VALUE;
    long *buf = shmem_malloc(2 * N * sizeof(long));
    shmem_barrier_all();

    /* OpenSHMEM 1.5 section 9.9.7 (shmem_broadcast): the team broadcast updates dest on
     * every PE, the root's too; with source == dest the root's copy is onto itself. */
    for (root = 0; root < npes; root++) {
        for (i = 0; i < N; i++)
            buf[i] = me == root ? 100 * root + i : -1;
        shmem_barrier_all();
        CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, buf, buf, N, root) == 0, "broadcast");
        for (i = 0; i < N; i++)
            CHECK(buf[i] == 100 * root + i, "in-place broadcast from %d: [%d] = %ld", root, i,
                  buf[i]);
        shmem_barrier_all();
    }
    for (i = 0; i < N; i++)
        buf[i] = me == 0 ? 7 + i : 0;
    shmem_barrier_all();
    shmem_broadcastmem(SHMEM_TEAM_WORLD, buf, buf, N * sizeof(long), 0);
    for (i = 0; i < N; i++)
        CHECK(buf[i] == 7 + i, "in-place broadcastmem [%d] = %ld", i, buf[i]);
    shmem_barrier_all();

    /* Overlapping arrays: the root copies its source one element up, as memmove would; the
     * text asks only that dest receive the root's source. */
    for (i = 0; i < 2 * N; i++)
        buf[i] = me == 0 ? i : -1;
    shmem_barrier_all();
    shmem_long_broadcast(SHMEM_TEAM_WORLD, buf + 1, buf, N, 0);
    for (i = 0; i < N; i++)
        CHECK(buf[1 + i] == i, "overlapping broadcast [%d] = %ld", 1 + i, buf[1 + i]);
    shmem_barrier_all();

    /* Section 9.9.7, deprecated active-set form: dest is updated on every PE but the root;
     * the data is not copied to the root's dest. In place, as applications write it. */
    for (i = 0; i < N; i++) {
        ibuf[i] = me == 0 ? 40 + i : -1;
        lbuf[i] = me == 0 ? 80 + i : -1;
    }
    shmem_barrier_all();
    shmem_broadcast32(ibuf, ibuf, N, 0, 0, 0, npes, pSync);
    shmem_broadcast64(lbuf, lbuf, N, 0, 0, 0, npes, pSync2);
    for (i = 0; i < N; i++) {
        CHECK(ibuf[i] == 40 + i, "in-place broadcast32 [%d] = %d", i, ibuf[i]);
        CHECK(lbuf[i] == 80 + i, "in-place broadcast64 [%d] = %ld", i, lbuf[i]);
    }
    shmem_barrier_all();

    /* Section 9.9.9 (reductions): source and dest may be the same array. */
    for (i = 0; i < N; i++)
        buf[i] = me + i;
    shmem_barrier_all();
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, buf, buf, N);
    for (i = 0; i < N; i++) {
        long want = (long)npes * (npes - 1) / 2 + (long)npes * i;
        CHECK(buf[i] == want, "in-place sum_reduce [%d] = %ld want %ld", i, buf[i], want);
    }
    shmem_barrier_all();
    for (i = 0; i < N; i++)
        lbuf[i] = me == npes - 1 ? 1000 + i : i;
    shmem_barrier_all();
    shmem_long_max_to_all(lbuf, lbuf, N, 0, 0, npes, pWrk, pSyncRed);
    for (i = 0; i < N; i++)
        CHECK(lbuf[i] == 1000 + i, "in-place max_to_all [%d] = %ld", i,
              lbuf[i]);
    shmem_barrier_all();

    /* OpenSHMEM 1.6 scans: in place as the reductions. */
    for (i = 0; i < N; i++)
        buf[i] = 1;
    shmem_barrier_all();
    shmem_long_sum_inscan(SHMEM_TEAM_WORLD, buf, buf, N);
    for (i = 0; i < N; i++)
        CHECK(buf[i] == me + 1, "in-place sum_inscan [%d] = %ld", i, buf[i]);

    shmem_barrier_all();
    shmem_free(buf);
    PASS("coll_in_place");
    shmem_finalize();
    return 0;
}
