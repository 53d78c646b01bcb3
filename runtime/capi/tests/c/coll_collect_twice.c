/* coll_collect_twice: two team collects in a row whose PEs bring different counts, into
 * arrays sized exactly for each total, with a guard array allocated right after; then the
 * same on a sub-team and through the deprecated collect32. Nothing outside dest changes. */
#include "check.h"

static long pSync[SHMEM_COLLECT_SYNC_SIZE];

static void check_guard(const long *guard, const char *what) {
    for (int i = 0; i < 16; i++)
        CHECK(guard[i] == 0x5a5a, "%s wrote past dest: guard[%d] = %ld", what, i, guard[i]);
}

int main(void) {
    int i, p;
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    for (i = 0; i < SHMEM_COLLECT_SYNC_SIZE; i++)
        pSync[i] = SHMEM_SYNC_VALUE;

    /* OpenSHMEM 1.5 section 9.9.8 (shmem_collect): dest is large enough for the
     * concatenation of every PE's source; nelems may differ from PE to PE. */
    int first = me + 1, second = 2 * (npes - me);
    long total1 = 0, total2 = 0;
    for (p = 0; p < npes; p++) {
        total1 += p + 1;
        total2 += 2 * (npes - p);
    }
    long *src = shmem_malloc(2 * npes * sizeof(long));
    long *dest1 = shmem_malloc(total1 * sizeof(long));
    long *dest2 = shmem_malloc(total2 * sizeof(long));
    long *guard = shmem_malloc(16 * sizeof(long));
    for (i = 0; i < 16; i++)
        guard[i] = 0x5a5a;
    for (i = 0; i < 2 * npes; i++)
        src[i] = 1000 * me + i;
    shmem_barrier_all();

    shmem_long_collect(SHMEM_TEAM_WORLD, dest1, src, first);
    shmem_long_collect(SHMEM_TEAM_WORLD, dest2, src, second);
    long k = 0;
    for (p = 0; p < npes; p++)
        for (i = 0; i < p + 1; i++, k++)
            CHECK(dest1[k] == 1000 * p + i, "first collect [%ld] = %ld", k, dest1[k]);
    k = 0;
    for (p = 0; p < npes; p++)
        for (i = 0; i < 2 * (npes - p); i++, k++)
            CHECK(dest2[k] == 1000 * p + i, "second collect [%ld] = %ld", k, dest2[k]);
    check_guard(guard, "team collect");

    /* The same array again, with the counts swapped between the ends. */
    shmem_barrier_all();
    shmem_long_collect(SHMEM_TEAM_WORLD, dest1, src, npes - me);
    k = 0;
    for (p = 0; p < npes; p++)
        for (i = 0; i < npes - p; i++, k++)
            CHECK(dest1[k] == 1000 * p + i, "third collect [%ld] = %ld", k, dest1[k]);
    check_guard(guard, "team collect into the same dest");

    /* On the even PEs, as a split team and as an active set (logPE_stride 1). */
    shmem_team_t evens;
    int n_evens = (npes + 1) / 2;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, n_evens, NULL, 0, &evens);
    shmem_barrier_all();
    if (me % 2 == 0) {
        int *isrc = (int *)src;
        int *idest = (int *)dest2;
        for (i = 0; i < 2 * npes; i++)
            isrc[i] = 100 * me + i;
        shmem_int_collect(evens, idest, isrc, me / 2 + 1);
        shmem_int_collect(evens, idest, isrc, 1);
        for (p = 0; p < n_evens; p++)
            CHECK(idest[p] == 100 * 2 * p, "sub-team collect [%d] = %d", p, idest[p]);
        shmem_collect32(idest, isrc, n_evens - me / 2, 0, 1, n_evens, pSync);
        k = 0;
        for (p = 0; p < n_evens; p++)
            for (i = 0; i < n_evens - p; i++, k++)
                CHECK(idest[k] == 100 * 2 * p + i, "collect32 [%ld] = %d", k, idest[k]);
        shmem_team_destroy(evens);
    }
    check_guard(guard, "sub-team collect");

    shmem_barrier_all();
    PASS("coll_collect_twice");
    shmem_finalize();
    return 0;
}
