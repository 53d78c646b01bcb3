/* coll_err_reduce_overlap: a reduction whose source and dest overlap without being the same
 * array. OpenSHMEM 1.5 section 9.9.9 (reductions): source and dest may be the very same
 * array but must not otherwise overlap, so the call is refused with a message naming it. */
#include <shmem.h>

int main(void) {
    shmem_init();
    long *buf = shmem_malloc(8 * sizeof(long));
    for (int i = 0; i < 8; i++)
        buf[i] = i;
    shmem_barrier_all();
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, buf + 1, buf, 4);
    shmem_finalize();
    return 0;
}
