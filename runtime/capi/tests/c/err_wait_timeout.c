/* err_wait_timeout (expected to fail, run with RSHMEM_WAIT_TIMEOUT_MS=500): every PE waits for
 * a flag nobody sets. The job must end within seconds, and stderr must say which call waited
 * for what, instead of hanging forever. */
#include "check.h"

int main(void) {
    shmem_init();
    long *flag = shmem_calloc(1, sizeof(long));
    shmem_barrier_all();
    shmem_long_wait_until(flag, SHMEM_CMP_EQ, 1);
    fprintf(stderr, "FAIL err_wait_timeout: a wait nobody satisfies returned\n");
    return 0;
}
