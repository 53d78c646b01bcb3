/* err_misaligned_amo (expected to fail): an atomic on a long one byte off its alignment. */
#include "check.h"

int main(void) {
    shmem_init();
    char *heap = shmem_calloc(4, sizeof(long));
    shmem_barrier_all();
    long *odd = (long *)(heap + 1);
    shmem_long_atomic_fetch_add(odd, 1, 0);
    fprintf(stderr, "FAIL err_misaligned_amo: a misaligned atomic returned\n");
    return 0;
}
