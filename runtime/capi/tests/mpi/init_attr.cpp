// An MPI program that initialises NVSHMEM by its own means, as NVSHMEM's examples do, with the
// host API only (it runs on the process backend where there is no GPU). The first argument
// picks how:
//   world          nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM) with MPI_COMM_WORLD
//   dup            ... with a duplicate of MPI_COMM_WORLD
//   reversed       ... with MPI_Comm_split of every rank in the reverse order
//   uid            rank 0's nvshmemx_get_uniqueid, sent by MPI_Bcast, and
//                  nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID)
//   uid-wrong-key  as uid, but the last rank changes a byte of the id's job key
//   uid-wrong-size as uid, but the last rank says the job has one rank more
// Each PE puts its number into the next PE's symmetric word, and checks what the previous PE
// put; the PE numbers must be the communicator's ranks.
#include <mpi.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstring>
#include <iostream>
#include <string>

static int fail(const std::string &what) {
    std::cerr << "FAIL init_attr: " << what << std::endl;
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const std::string mode = argc > 1 ? argv[1] : "world";
    int world_rank = 0, world_size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);

    if (nvshmemx_init_status() != NVSHMEM_STATUS_NOT_INITIALIZED) return fail("initialised before init_attr");
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    MPI_Comm comm = MPI_COMM_WORLD;
    if (mode.rfind("uid", 0) == 0) {
        nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
        if (world_rank == 0 && nvshmemx_get_uniqueid(&id) != NVSHMEMX_SUCCESS) return fail("get_uniqueid");
        MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
        int nranks = world_size;
        if (world_rank == world_size - 1 && mode == "uid-wrong-key") id.internal[40] ^= 0x5a;
        if (world_rank == world_size - 1 && mode == "uid-wrong-size") nranks += 1;
        nvshmemx_set_attr_uniqueid_args(world_rank, nranks, &id, &attr);
        nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
    } else {
        if (mode == "dup") MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        if (mode == "reversed") MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - 1 - world_rank, &comm);
        nvshmemx_set_attr_mpi_comm_args(&comm, &attr);
        nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, &attr);
    }
    if (nvshmemx_init_status() != NVSHMEM_STATUS_IS_INITIALIZED) return fail("not initialised after init_attr");

    int rank = world_rank;
    MPI_Comm_rank(comm, &rank);
    const int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    if (me != rank || npes != world_size)
        return fail("PE " + std::to_string(me) + " of " + std::to_string(npes) + " is rank " + std::to_string(rank) +
                    " of " + std::to_string(world_size));

    int *word = static_cast<int *>(nvshmem_malloc(sizeof(int)));
    *word = -1;
    nvshmem_barrier_all();
    nvshmem_int_p(word, me, (me + 1) % npes);
    nvshmem_barrier_all();
    const int previous = (me + npes - 1) % npes;
    if (*word != previous)
        return fail("PE " + std::to_string(me) + " holds " + std::to_string(*word) + ", not " +
                    std::to_string(previous));
    nvshmem_free(word);
    nvshmem_finalize();
    if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
    if (me == 0) std::cout << "init_attr " << mode << ": ok at " << npes << " PEs" << std::endl;
    MPI_Finalize();
    return 0;
}
