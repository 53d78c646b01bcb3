/* err_before_init (expected to fail): a put before shmem_init. The message must name the call
 * and shmem_init, the fix. */
#include <shmem.h>
#include <stdio.h>

long x;

int main(void) {
    shmem_long_p(&x, 1, 0);
    fprintf(stderr, "FAIL err_before_init: shmem_long_p before shmem_init returned\n");
    return 0;
}
