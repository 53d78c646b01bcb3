/* ctx_err_invalid_quiet: shmem_ctx_quiet on SHMEM_CTX_INVALID. OpenSHMEM 1.5 section 9.5
 * (communication contexts): RMA, AMO and memory-ordering routines must be given a valid
 * context, an invalid handle's use is undefined; rshmem refuses it with a message naming it. */
#include <shmem.h>

int main(void) {
    shmem_init();
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    shmem_ctx_quiet(ctx);
    shmem_finalize();
    return 0;
}
