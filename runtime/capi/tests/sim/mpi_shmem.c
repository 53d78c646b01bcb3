/* An MPI + OpenSHMEM program as users write them: MPI starts the job, SHMEM moves the data,
 * MPI reduces and checks it. Every rank prints one line; the run must end with status 0. */
#include <mpi.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                                                        \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "rank %d: check failed: %s: ", rank, #cond);                       \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, "\n");                                                             \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static long slot;

int main(int argc, char **argv) {
    int rank = -1, size = 0, flag = 0;
    MPI_Init(&argc, &argv);
    shmem_init();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Initialized(&flag);
    CHECK(flag == 1, "MPI_Initialized says %d", flag);
    CHECK(rank == shmem_my_pe(), "MPI rank %d, SHMEM PE %d", rank, shmem_my_pe());
    CHECK(size == shmem_n_pes(), "MPI size %d, SHMEM PEs %d", size, shmem_n_pes());
    double start = MPI_Wtime();

    /* A value put by SHMEM, summed by MPI. */
    shmem_long_p(&slot, rank + 1, (rank + 1) % size);
    shmem_barrier_all();
    long sum = 0;
    MPI_Allreduce(&slot, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == (long)size * (size + 1) / 2, "sum %ld", sum);

    /* A token around the ring. */
    MPI_Status status;
    int token = 100;
    if (rank == 0) {
        MPI_Send(&token, 1, MPI_INT, 1 % size, 7, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, size - 1, 7, MPI_COMM_WORLD, &status);
        CHECK(token == 100 + size - 1, "token %d", token);
    } else {
        MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        CHECK(status.MPI_SOURCE == rank - 1 && status.MPI_TAG == 7, "from %d tag %d",
              status.MPI_SOURCE, status.MPI_TAG);
        int count = -1;
        MPI_Get_count(&status, MPI_INT, &count);
        CHECK(count == 1, "count %d", count);
        token++;
        MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD);
    }

    /* A unique id from rank 0, as NVSHMEM's MPI bootstrap broadcasts one. */
    char id[32] = {0};
    if (rank == 0)
        snprintf(id, sizeof id, "unique-id-%d", 4242);
    MPI_Bcast(id, sizeof id, MPI_CHAR, 0, MPI_COMM_WORLD);
    CHECK(strcmp(id, "unique-id-4242") == 0, "id '%s'", id);

    /* Two halves, each with its own reduction. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank < size / 2, size - rank, &half);
    int half_rank, half_size, half_sum = 0;
    MPI_Comm_rank(half, &half_rank);
    MPI_Comm_size(half, &half_size);
    MPI_Allreduce(&rank, &half_sum, 1, MPI_INT, MPI_SUM, half);
    int low = rank < size / 2;
    int want = low ? (size / 2) * (size / 2 - 1) / 2 : (size - 1) * size / 2 - (size / 2) * (size / 2 - 1) / 2;
    CHECK(half_sum == want, "half sum %d, want %d", half_sum, want);
    CHECK(half_size == (low ? size / 2 : size - size / 2), "half size %d", half_size);
    CHECK(half_rank == half_size - 1 - (low ? rank : rank - size / 2), "half rank %d", half_rank);

    /* Neighbours exchange with non-blocking calls. */
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int from_left = -1, from_right = -1, mine = rank * 10;
    MPI_Request requests[4];
    MPI_Irecv(&from_left, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &requests[0]);
    MPI_Irecv(&from_right, 1, MPI_INT, right, 2, MPI_COMM_WORLD, &requests[1]);
    MPI_Isend(&mine, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &requests[2]);
    MPI_Isend(&mine, 1, MPI_INT, left, 2, MPI_COMM_WORLD, &requests[3]);
    MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
    CHECK(from_left == left * 10 && from_right == right * 10, "%d %d", from_left, from_right);
    CHECK(requests[0] == MPI_REQUEST_NULL, "a completed request is MPI_REQUEST_NULL");

    /* The other collectives. */
    int all[64], each[64], back[64];
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        CHECK(all[i] == i, "allgather[%d] = %d", i, all[i]);
    for (int i = 0; i < size; i++)
        each[i] = rank * 100 + i;
    MPI_Alltoall(each, 1, MPI_INT, back, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        CHECK(back[i] == i * 100 + rank, "alltoall[%d] = %d", i, back[i]);
    double mine_d = rank + 0.5, most = 0;
    MPI_Reduce(&mine_d, &most, 1, MPI_DOUBLE, MPI_MAX, size - 1, MPI_COMM_WORLD);
    if (rank == size - 1)
        CHECK(most == size - 0.5, "max %f", most);
    int gathered[64];
    MPI_Gather(&rank, 1, MPI_INT, gathered, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int i = 0; i < size; i++)
            CHECK(gathered[i] == i, "gather[%d] = %d", i, gathered[i]);
    int counts[64], displs[64], varied[256], mine_v[64];
    for (int i = 0; i < size; i++) {
        counts[i] = i + 1;
        displs[i] = i * (i + 1) / 2;
    }
    for (int i = 0; i <= rank; i++)
        mine_v[i] = rank;
    MPI_Allgatherv(mine_v, rank + 1, MPI_INT, varied, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        CHECK(varied[displs[i] + i] == i, "allgatherv block %d", i);
    unsigned bits = 1u << rank, every = 0;
    MPI_Allreduce(&bits, &every, 1, MPI_UNSIGNED, MPI_BOR, MPI_COMM_WORLD);
    CHECK(every == (1u << size) - 1, "bor %x", every);
    int in_place = rank;
    MPI_Allreduce(MPI_IN_PLACE, &in_place, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(in_place == size - 1, "in place max %d", in_place);

    /* The node's ranks: every simulated GPU of hgx8 is on one host. */
    MPI_Comm node;
    int node_size = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    CHECK(node_size == size, "node size %d", node_size);
    char host[MPI_MAX_PROCESSOR_NAME];
    int host_len = 0;
    MPI_Get_processor_name(host, &host_len);

    MPI_Barrier(MPI_COMM_WORLD);
    double elapsed = MPI_Wtime() - start;
    CHECK(elapsed > 0, "MPI_Wtime did not move: %g", elapsed);
    MPI_Comm_free(&half);
    MPI_Comm_free(&node);
    CHECK(half == MPI_COMM_NULL, "a freed communicator is MPI_COMM_NULL");
    printf("rank %d of %d on %s: sum %ld, token %d, half rank %d of %d, %.0f ns\n", rank, size,
           host, sum, token, half_rank, half_size, elapsed * 1e9);
    shmem_finalize();
    MPI_Finalize();
    MPI_Finalized(&flag);
    CHECK(flag == 1, "MPI_Finalized says %d", flag);
    return 0;
}
