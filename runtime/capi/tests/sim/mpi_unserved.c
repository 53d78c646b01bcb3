/* An MPI call the simulator does not serve (MPI_Scatter) ends the run, naming it. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank, size, mine = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int all[64] = {0};
    MPI_Scatter(all, 1, MPI_INT, &mine, 1, MPI_INT, 0, MPI_COMM_WORLD);
    printf("rank %d: scattered %d\n", rank, mine);
    MPI_Finalize();
    return 0;
}
