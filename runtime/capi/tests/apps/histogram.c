/*
 * A distributed histogram: each PE bins its own samples, then the bins are summed across
 * PEs in place (source == dest) with the deprecated shmem_long_sum_to_all, a pWrk array of
 * the size the specification asks for and a pSync array, and the largest sample is found
 * with shmem_int_max_to_all. Written like the reductions of classic OpenSHMEM codes.
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

#define NBINS 40
#define SAMPLES 1000

#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define WRK_LONGS MAX(NBINS / 2 + 1, _SHMEM_REDUCE_MIN_WRKDATA_SIZE)

long bins[NBINS];
long pWrk[WRK_LONGS];
int biggest, my_biggest;
int iWrk[_SHMEM_REDUCE_MIN_WRKDATA_SIZE];
long pSync_a[_SHMEM_REDUCE_SYNC_SIZE];
long pSync_b[_SHMEM_REDUCE_SYNC_SIZE];

int main(void)
{
    int i, me, npes;
    long total = 0;
    unsigned int state;

    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    for (i = 0; i < _SHMEM_REDUCE_SYNC_SIZE; i++)
        pSync_a[i] = pSync_b[i] = _SHMEM_SYNC_VALUE;

    state = 12345u + 977u * (unsigned int)me;
    my_biggest = 0;
    for (i = 0; i < SAMPLES; i++) {
        int sample;
        state = state * 1103515245u + 12345u;
        sample = (int)((state >> 8) % 10000u);
        bins[sample % NBINS]++;
        if (sample > my_biggest)
            my_biggest = sample;
    }
    shmem_barrier_all(); /* pSync is initialised on every PE before anyone uses it */

    shmem_long_sum_to_all(bins, bins, NBINS, 0, 0, npes, pWrk, pSync_a);
    shmem_int_max_to_all(&biggest, &my_biggest, 1, 0, 0, npes, iWrk, pSync_b);

    for (i = 0; i < NBINS; i++)
        total += bins[i];
    if (total != (long)SAMPLES * npes) {
        fprintf(stderr, "PE %d: %ld samples in the bins, expected %ld\n", me, total,
                (long)SAMPLES * npes);
        return 1;
    }
    if (biggest < my_biggest || biggest >= 10000) {
        fprintf(stderr, "PE %d: max %d below my own %d\n", me, biggest, my_biggest);
        return 1;
    }
    if (me == 0)
        printf("histogram: %ld samples over %d PEs, max %d\n", total, npes, biggest);
    shmem_finalize();
    return 0;
}
