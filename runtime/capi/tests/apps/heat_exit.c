/*
 * A 1-D heat diffusion in the style of older OpenSHMEM applications: the rod is split
 * evenly over the PEs, each step trades halo cells with the neighbours through
 * shmem_double_put, the residual is reduced with shmem_double_max_to_all and a pWrk array,
 * and main ends with exit(0) after shmem_finalize, as many published codes do.
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

#define CELLS_PER_PE 64
#define STEPS 50
#define ABS(x) ((x) < 0 ? -(x) : (x))

static double rod[CELLS_PER_PE + 2]; /* one halo cell at each end */
static double next_rod[CELLS_PER_PE + 2];
static double residual, max_residual;
static double pWrk[_SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long pSync[2][_SHMEM_REDUCE_SYNC_SIZE];

int main(int argc, char **argv)
{
    int i, step, me, npes;
    double total = 0.0, expected;

    start_pes(0);
    me = _my_pe();
    npes = _num_pes();

    for (i = 0; i < _SHMEM_REDUCE_SYNC_SIZE; i++)
        pSync[0][i] = pSync[1][i] = _SHMEM_SYNC_VALUE;
    for (i = 0; i < CELLS_PER_PE + 2; i++)
        rod[i] = 0.0;
    /* A hot spot in the middle cell of every PE. */
    rod[CELLS_PER_PE / 2] = 100.0;
    shmem_barrier_all();

    for (step = 0; step < STEPS; step++) {
        /* Halos: my first cell is my left neighbour's right halo, and so on. */
        if (me > 0)
            shmem_double_put(&rod[CELLS_PER_PE + 1], &rod[1], 1, me - 1);
        if (me < npes - 1)
            shmem_double_put(&rod[0], &rod[CELLS_PER_PE], 1, me + 1);
        shmem_barrier_all();
        /* Insulated ends: the outer halos mirror the edge cells. */
        if (me == 0)
            rod[0] = rod[1];
        if (me == npes - 1)
            rod[CELLS_PER_PE + 1] = rod[CELLS_PER_PE];
        residual = 0.0;
        for (i = 1; i <= CELLS_PER_PE; i++) {
            next_rod[i] = rod[i] + 0.25 * (rod[i - 1] - 2.0 * rod[i] + rod[i + 1]);
            if (ABS(next_rod[i] - rod[i]) > residual)
                residual = ABS(next_rod[i] - rod[i]);
        }
        shmem_barrier_all(); /* every neighbour has read my halo cells of this step */
        for (i = 1; i <= CELLS_PER_PE; i++)
            rod[i] = next_rod[i];
        shmem_double_max_to_all(&max_residual, &residual, 1, 0, 0, npes, pWrk,
                                pSync[step % 2]);
    }

    for (i = 1; i <= CELLS_PER_PE; i++)
        total += rod[i];
    /* Insulated ends conserve heat: each PE's share may move, the sum may not. */
    residual = total;
    shmem_double_sum_to_all(&max_residual, &residual, 1, 0, 0, npes, pWrk, pSync[0]);
    expected = 100.0 * npes;
    if (ABS(max_residual - expected) > 1e-6 * expected) {
        fprintf(stderr, "PE %d: heat %g, expected %g\n", me, max_residual, expected);
        exit(1);
    }
    if (me == 0)
        printf("heat_exit: %d PEs, %d steps, heat conserved\n", npes, STEPS);
    shmem_finalize();
    exit(0);
}
