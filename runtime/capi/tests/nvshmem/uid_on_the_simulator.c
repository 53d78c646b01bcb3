/* nvshmemx_init_attr with a unique id, on the simulator: every PE makes an id (it opens nothing
 * there) and claims to be rank 0 of argv[1] ranks. At one PE that is the truth and the program
 * prints "uid: PE 0 of 1"; at more, PE 1's claim is refused, naming its simulated identity. */
#include <nvshmem.h>
#include <nvshmemx.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    const int nranks = argc > 1 ? atoi(argv[1]) : 1;
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (nvshmemx_get_uniqueid(&id) != NVSHMEMX_SUCCESS) {
        fprintf(stderr, "FAIL uid: nvshmemx_get_uniqueid\n");
        return 1;
    }
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_set_attr_uniqueid_args(0, nranks, &id, &attr);
    if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != NVSHMEMX_SUCCESS) {
        fprintf(stderr, "FAIL uid: nvshmemx_init_attr\n");
        return 1;
    }
    printf("uid: PE %d of %d\n", nvshmem_my_pe(), nvshmem_n_pes());
    nvshmem_finalize();
    return 0;
}
