/* An MPI program that also uses OpenSHMEM, initialising the two in the order its first argument
 * says: "mpi-first" (MPI_Init, then shmem_init: under RSHMEM_BOOTSTRAP=mpi the job's PEs are
 * MPI_COMM_WORLD's ranks) or "shmem-first" (shmem_init, then MPI_Init). Each PE puts its
 * number into the next PE's symmetric word; MPI's rank must be the PE number. */
#include <mpi.h>
#include <shmem.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int word = -1;

int main(int argc, char **argv) {
    const int mpi_first = argc > 1 && strcmp(argv[1], "mpi-first") == 0;
    if (mpi_first) {
        MPI_Init(&argc, &argv);
        shmem_init();
    } else {
        shmem_init();
        MPI_Init(&argc, &argv);
    }
    int rank = -1, size = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    if (rank != me || size != npes) {
        fprintf(stderr, "FAIL shmem_and_mpi: PE %d of %d is MPI rank %d of %d\n", me, npes, rank, size);
        exit(1);
    }
    shmem_int_p(&word, me, (me + 1) % npes);
    shmem_barrier_all();
    MPI_Barrier(MPI_COMM_WORLD);
    if (word != (me + npes - 1) % npes) {
        fprintf(stderr, "FAIL shmem_and_mpi: PE %d holds %d\n", me, word);
        exit(1);
    }
    shmem_finalize();
    if (me == 0) printf("shmem_and_mpi %s: ok at %d PEs\n", mpi_first ? "mpi-first" : "shmem-first", npes);
    MPI_Finalize();
    return 0;
}
