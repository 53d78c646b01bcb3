// An MPI program that initialises NVSHMEM with its MPI communicator, as NVSHMEM's
// mpi-based-init example does: MPI_Init, nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM) with
// MPI_COMM_WORLD, the GPU chosen by the PE's place on its node, then a kernel that puts this
// PE's number to the next PE. Every PE prints what it received and checks it.
//
//   nvcc -rdc=true mpi_init.cu -I$RSHMEM/runtime/capi/include $(mpicxx --showme:compile) \
//        -L$RSHMEM/target/release -lshmem $(mpicxx --showme:link) -o mpi_init
//   mpirun -np 2 ./mpi_init
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
    MPI_Comm comm = MPI_COMM_WORLD;
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    attr.mpi_comm = &comm;
    nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, &attr);
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

    int rank = -1;
    MPI_Comm_rank(comm, &rank);
    const int expected = (me + n_pes - 1) % n_pes;
    std::cout << "mpi_init: PE " << me << " (MPI rank " << rank << ") received " << received << std::endl;
    nvshmem_free(destination);
    cudaStreamDestroy(stream);
    nvshmem_finalize();
    MPI_Finalize();
    if (received != expected || rank != me) {
        std::cerr << "FAIL mpi_init: PE " << me << " expected " << expected << " from PE " << expected << std::endl;
        return EXIT_FAILURE;
    }
    return EXIT_SUCCESS;
}
