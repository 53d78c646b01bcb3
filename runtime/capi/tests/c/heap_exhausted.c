/* heap_exhausted (run with SHMEM_SYMMETRIC_SIZE=1m): a request larger than the heap is not an
 * error of the program. By the spec shmem_malloc returns NULL when it cannot allocate, so the
 * program sees NULL on every PE, the heap stays usable for small blocks, and it exits 0. */
#include "check.h"

int main(void) {
    shmem_init();
    void *big = shmem_malloc(64 << 20);
    CHECK(big == NULL, "shmem_malloc(64 MiB) in a 1 MiB heap gave %p", big);
    long *small = shmem_malloc(1024);
    CHECK(small != NULL, "a 1 KiB block after the failed request");
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_long_p(small, me, (me + 1) % n);
    shmem_barrier_all();
    CHECK(*small == (me + n - 1) % n, "put into the small block");
    shmem_free(small);
    PASS("heap_exhausted");
    shmem_finalize();
    return 0;
}
