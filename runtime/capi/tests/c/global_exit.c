/* global_exit: the last PE calls shmem_global_exit(7) while the others block in a barrier
 * that can never complete; the whole job must end with status 7. Nothing after the call may
 * run, so reaching the end is a failure (status 3). */
#define _DEFAULT_SOURCE /* usleep under -std=c11 */
#include <unistd.h>

#include "check.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_barrier_all();
    if (me == n - 1) {
        usleep(100 * 1000); /* let the others get into the barrier */
        shmem_global_exit(7);
        fprintf(stderr, "FAIL global_exit: shmem_global_exit returned\n");
        return 3;
    }
    shmem_barrier_all();
    fprintf(stderr, "FAIL global_exit: PE %d left a barrier the exiting PE never entered\n", me);
    return 3;
}
