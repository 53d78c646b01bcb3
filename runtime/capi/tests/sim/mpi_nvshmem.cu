// An NVSHMEM program that starts with MPI, as NVSHMEM's MPI users write them: ranks from MPI,
// a kernel's put to the next PE, the values summed by MPI_Allreduce. Built with
// -DOMPI_SKIP_MPICXX, as NVSHMEM's examples are: the C API, not Open MPI's C++ bindings.
#include <mpi.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <iostream>

__global__ void put_rank(int *dest, int value, int peer) { nvshmem_int_p(dest, value, peer); }

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = -1, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    nvshmem_init();
    int mype = nvshmem_my_pe();
    int npes = nvshmem_n_pes();
    cudaSetDevice(nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE));
    int *dest = static_cast<int *>(nvshmem_malloc(sizeof(int)));
    put_rank<<<1, 1>>>(dest, mype + 1, (mype + 1) % npes);
    nvshmemx_barrier_all_on_stream(0);
    cudaDeviceSynchronize();
    int got = 0;
    cudaMemcpy(&got, dest, sizeof got, cudaMemcpyDeviceToHost);
    int sum = 0;
    MPI_Allreduce(&got, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    std::cout << "rank " << rank << " of " << size << " is PE " << mype << ", got " << got
              << ", sum " << sum << std::endl;
    nvshmem_free(dest);
    nvshmem_finalize();
    MPI_Finalize();
    bool ok = rank == mype && size == npes && got == (mype + npes - 1) % npes + 1 &&
              sum == npes * (npes + 1) / 2;
    return ok ? 0 : 1;
}
