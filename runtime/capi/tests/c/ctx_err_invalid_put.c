/* ctx_err_invalid_put: a put on SHMEM_CTX_INVALID. OpenSHMEM 1.5 section 9.5 (communication
 * contexts): RMA and AMO routines must be given a valid context, and an invalid handle's use
 * there is undefined; rshmem refuses it with a message naming the handle. (Fence and quiet of
 * SHMEM_CTX_INVALID do nothing: c/ctx_on_teams.c.) */
#include <shmem.h>

static long target;

int main(void) {
    shmem_init();
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    shmem_ctx_long_p(ctx, &target, 1, 0);
    shmem_finalize();
    return 0;
}
