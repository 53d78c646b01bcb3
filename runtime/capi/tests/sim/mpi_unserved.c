/* An MPI call the simulator does not serve (MPI_Scan) ends the run, naming it. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank, prefix = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Scan(&rank, &prefix, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d: prefix %d\n", rank, prefix);
    MPI_Finalize();
    return 0;
}
