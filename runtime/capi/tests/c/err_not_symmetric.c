/* err_not_symmetric (expected to fail): a stack variable, outside the symmetric heap and the
 * data segment, as the destination of a put. */
#include "check.h"

int main(void) {
    shmem_init();
    long on_stack = 0, src = 5;
    shmem_barrier_all();
    shmem_long_put(&on_stack, &src, 1, 0);
    fprintf(stderr, "FAIL err_not_symmetric: shmem_long_put to a stack address returned\n");
    return 0;
}
