/* err_pe_range (expected to fail): a put to PE n_pes, one past the last. The library must
 * stop the program with a message naming shmem_long_p and the PE, not write anywhere. */
#include "check.h"

int main(void) {
    shmem_init();
    long *x = shmem_calloc(1, sizeof(long));
    shmem_barrier_all();
    shmem_long_p(x, 1, shmem_n_pes());
    fprintf(stderr, "FAIL err_pe_range: shmem_long_p to PE %d returned\n", shmem_n_pes());
    return 0; /* the harness expects a failure: returning 0 here is the wrong outcome */
}
