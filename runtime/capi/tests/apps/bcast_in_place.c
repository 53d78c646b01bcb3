/*
 * Parameters read by one PE and spread to all, in place: the style of many application
 * start-ups, which fill a buffer on the root and broadcast it onto itself with the
 * deprecated shmem_broadcast32/64 and a pSync array. The root's own buffer is left as it
 * was (the deprecated routines never write the root's dest); every other PE gets the root's.
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPARAMS 8

static int params[NPARAMS];
static long long wide[NPARAMS];
static long pSync[_SHMEM_BCAST_SYNC_SIZE];
static long pSync2[_SHMEM_BCAST_SYNC_SIZE];

int main(void)
{
    int i, me, npes, root, bad = 0;

    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    root = npes - 1;
    for (i = 0; i < _SHMEM_BCAST_SYNC_SIZE; i++)
        pSync[i] = pSync2[i] = _SHMEM_SYNC_VALUE;

    if (me == root)
        for (i = 0; i < NPARAMS; i++) {
            params[i] = 1000 + i;
            wide[i] = 1000000000000LL + i;
        }
    shmem_barrier_all();

    /* The same array as source and dest. */
    shmem_broadcast32(params, params, NPARAMS, root, 0, 0, npes, pSync);
    shmem_broadcast64(wide, wide, NPARAMS, root, 0, 0, npes, pSync2);
    shmem_barrier_all();

    for (i = 0; i < NPARAMS; i++) {
        if (params[i] != 1000 + i || wide[i] != 1000000000000LL + i) {
            fprintf(stderr, "PE %d: param %d is %d / %lld\n", me, i, params[i], wide[i]);
            bad = 1;
        }
    }
    /* And once more through the 1.5 team routine, in place too. */
    if (me == 0)
        for (i = 0; i < NPARAMS; i++)
            params[i] = -i;
    shmem_barrier_all();
    shmem_int_broadcast(SHMEM_TEAM_WORLD, params, params, NPARAMS, 0);
    for (i = 0; i < NPARAMS; i++)
        if (params[i] != -i) {
            fprintf(stderr, "PE %d: team param %d is %d\n", me, i, params[i]);
            bad = 1;
        }
    if (bad)
        shmem_global_exit(1);
    if (me == 0)
        printf("bcast_in_place: %d PEs agree\n", npes);
    shmem_finalize();
    return 0;
}
