/* MPI misuse the simulator names: argv[1] says which. "bcast": the ranks broadcast different
 * counts; "send": a send to a rank the communicator does not have; "handle": a communicator
 * that is not one; "recv": a receive no rank sends to. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    int rank, size, value[4] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "bcast") == 0)
        MPI_Bcast(value, rank == 1 ? 2 : 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (strcmp(what, "send") == 0 && rank == 0)
        MPI_Send(value, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    if (strcmp(what, "handle") == 0) {
        MPI_Comm not_a_comm = (MPI_Comm)value;
        MPI_Barrier(not_a_comm);
    }
    if (strcmp(what, "recv") == 0 && rank == 0)
        MPI_Recv(value, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank %d: not refused\n", rank);
    MPI_Finalize();
    return 0;
}
