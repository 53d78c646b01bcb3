/* coll_err_alltoalls_stride: shmem_alltoalls with a dst stride of 0. OpenSHMEM 1.5 section
 * 9.9.6 (shmem_alltoalls): both strides must be at least 1, so the call is refused. */
#include <shmem.h>

int main(void) {
    shmem_init();
    int n = shmem_n_pes();
    long *source = shmem_calloc(2 * n, sizeof(long));
    long *dest = shmem_calloc(2 * n, sizeof(long));
    shmem_long_alltoalls(SHMEM_TEAM_WORLD, dest, source, 0, 1, 2);
    shmem_finalize();
    return 0;
}
