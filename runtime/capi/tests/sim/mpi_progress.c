/* An MPI program as users write them, with the calls that test for completion instead of
 * waiting (MPI_Test, MPI_Testall, MPI_Iprobe), a probe before a receive sized by it
 * (MPI_Probe, MPI_Get_count), and prefix sums and a scattered reduction (MPI_Scan,
 * MPI_Exscan, MPI_Reduce_scatter_block). Every rank checks what it got and prints one line;
 * the run must end with status 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                                                        \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "rank %d: check failed: %s: ", rank, #cond);                       \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, "\n");                                                             \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

int main(int argc, char **argv) {
    int rank = -1, size = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* A ring: post the receive, send late, and poll the receive until it completes. */
    int got = -1, polls = 0, flag = 0;
    MPI_Request recv;
    MPI_Status status;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Irecv(&got, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &recv);
    MPI_Test(&recv, &flag, &status);
    CHECK(!flag, "a receive completed before any rank sent");
    MPI_Send(&rank, 1, MPI_INT, right, 7, MPI_COMM_WORLD);
    while (!flag) {
        MPI_Test(&recv, &flag, &status);
        ++polls;
    }
    CHECK(got == left, "received %d from the left, not %d", got, left);
    CHECK(status.MPI_SOURCE == left && status.MPI_TAG == 7, "status %d/%d", status.MPI_SOURCE,
          status.MPI_TAG);
    CHECK(recv == MPI_REQUEST_NULL, "a completed request is MPI_REQUEST_NULL");
    MPI_Test(&recv, &flag, MPI_STATUS_IGNORE);
    CHECK(flag, "testing MPI_REQUEST_NULL says done");

    /* Testall completes every request or none. */
    int from[2] = {-1, -1}, to = rank * 10;
    MPI_Request both[2];
    MPI_Irecv(&from[0], 1, MPI_INT, left, 8, MPI_COMM_WORLD, &both[0]);
    MPI_Irecv(&from[1], 1, MPI_INT, right, 9, MPI_COMM_WORLD, &both[1]);
    MPI_Send(&to, 1, MPI_INT, right, 8, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    flag = 0;
    MPI_Testall(2, both, &flag, MPI_STATUSES_IGNORE);
    CHECK(!flag, "Testall said done while the tag-9 message was never sent");
    CHECK(both[0] != MPI_REQUEST_NULL, "Testall completed one request of two");
    MPI_Send(&to, 1, MPI_INT, left, 9, MPI_COMM_WORLD);
    MPI_Status statuses[2];
    for (flag = 0; !flag;) MPI_Testall(2, both, &flag, statuses);
    CHECK(from[0] == left * 10 && from[1] == right * 10, "got %d and %d", from[0], from[1]);
    CHECK(statuses[1].MPI_SOURCE == right, "the second status names rank %d", statuses[1].MPI_SOURCE);

    /* Probe for a message whose length the receiver does not know. */
    int length = 3 + rank % 3;
    int message[8] = {0};
    for (int i = 0; i < length; ++i) message[i] = rank + i;
    MPI_Send(message, length, MPI_INT, right, 10, MPI_COMM_WORLD);
    flag = 0;
    while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &flag, &status);
    CHECK(status.MPI_SOURCE == left, "Iprobe saw rank %d", status.MPI_SOURCE);
    MPI_Probe(left, 10, MPI_COMM_WORLD, &status);
    int count = -1;
    MPI_Get_count(&status, MPI_INT, &count);
    CHECK(count == 3 + left % 3, "the probed message has %d ints", count);
    int *sized = malloc(count * sizeof *sized);
    MPI_Recv(sized, count, MPI_INT, left, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(sized[count - 1] == left + count - 1, "last int %d", sized[count - 1]);
    free(sized);
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "a message is left after every one was received");

    /* Prefix sums of rank + 1, inclusive and exclusive. */
    long mine = rank + 1, inclusive = 0, exclusive = -7;
    MPI_Scan(&mine, &inclusive, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan(&mine, &exclusive, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(inclusive == (long)(rank + 1) * (rank + 2) / 2, "scan %ld", inclusive);
    CHECK(rank == 0 ? exclusive == -7 : exclusive == (long)rank * (rank + 1) / 2, "exscan %ld",
          exclusive);
    int high = 0;
    MPI_Scan(&rank, &high, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(high == rank, "max scan %d", high);

    /* Every rank contributes a block per rank; rank r gets the sum of the blocks for r. */
    double blocks[64][2], block[2] = {0, 0};
    for (int r = 0; r < size; ++r) {
        blocks[r][0] = r;
        blocks[r][1] = rank;
    }
    MPI_Reduce_scatter_block(blocks, block, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(block[0] == (double)rank * size && block[1] == size * (size - 1) / 2.0, "block %g %g",
          block[0], block[1]);
    MPI_Reduce_scatter_block(MPI_IN_PLACE, blocks, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(blocks[0][0] == (double)rank * size, "in place %g", blocks[0][0]);

    printf("rank %d of %d: progress ok (%s)\n", rank, size, polls > 0 ? "polled" : "not polled");
    MPI_Finalize();
    return 0;
}
