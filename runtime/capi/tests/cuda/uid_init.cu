// An MPI program that initialises NVSHMEM with a unique id, as NVSHMEM's uid-based-init example
// does: rank 0 calls nvshmemx_get_uniqueid, MPI_Bcast hands the id to every rank, and each
// calls nvshmemx_set_attr_uniqueid_args with its rank and nvshmemx_init_attr with
// NVSHMEMX_INIT_WITH_UNIQUEID. A kernel then puts this PE's number to the next PE; every PE
// prints what it received and checks it.
//
//   nvcc -rdc=true uid_init.cu -I$RSHMEM/runtime/capi/include $(mpicxx --showme:compile) \
//        -L$RSHMEM/target/release -lshmem $(mpicxx --showme:link) -o uid_init
//   mpirun -np 2 ./uid_init
#include <mpi.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <cstdlib>
#include <iostream>

__global__ void put_to_next(int* destination) {
    const int me = nvshmem_my_pe();
    nvshmem_int_p(destination, me, (me + 1) % nvshmem_n_pes());
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, nranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (rank == 0) nvshmemx_get_uniqueid(&id);
    MPI_Bcast(&id, sizeof(nvshmemx_uniqueid_t), MPI_UINT8_T, 0, MPI_COMM_WORLD);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr);
    nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
    const int me = nvshmem_my_pe(), n_pes = nvshmem_n_pes();
    cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE));
    cudaStream_t stream;
    cudaStreamCreate(&stream);

    int* destination = static_cast<int*>(nvshmem_malloc(sizeof(int)));
    put_to_next<<<1, 1, 0, stream>>>(destination);
    nvshmemx_barrier_all_on_stream(stream);
    int received = -1;
    cudaMemcpyAsync(&received, destination, sizeof(int), cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);

    const int expected = (me + n_pes - 1) % n_pes;
    std::cout << "uid_init: PE " << me << " of " << n_pes << " received " << received << std::endl;
    nvshmem_free(destination);
    cudaStreamDestroy(stream);
    nvshmem_finalize();
    MPI_Finalize();
    if (received != expected || me != rank || n_pes != nranks) {
        std::cerr << "FAIL uid_init: PE " << me << " (rank " << rank << ") expected " << expected << std::endl;
        return EXIT_FAILURE;
    }
    return EXIT_SUCCESS;
}
