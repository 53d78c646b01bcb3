/* err_collective_mismatch (expected to fail, at 2 and more PEs): a broadcast whose byte count
 * differs from PE to PE. The library must report the disagreement instead of copying a
 * wrong amount or hanging. */
#include "check.h"

int main(void) {
    shmem_init();
    char *src = shmem_calloc(64, 1), *dst = shmem_calloc(64, 1);
    shmem_barrier_all();
    shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, 8 + (size_t)shmem_my_pe(), 0);
    fprintf(stderr, "FAIL err_collective_mismatch: mismatched broadcastmem returned\n");
    return 0;
}
