/* hello: setup and query calls.
 * query_initialized before and after init and finalize, my_pe/n_pes (and the deprecated
 * _my_pe/_num_pes) against the launcher's RSHMEM_RANK, pe_accessible, the version and vendor
 * constants against info_get_version/info_get_name. */
#include <string.h>

#include "check.h"

int main(void) {
    int initialized = -1;
    shmem_query_initialized(&initialized);
    if (initialized != 0) {
        fprintf(stderr, "FAIL hello: shmem_query_initialized gave %d before shmem_init\n",
                initialized);
        return 1;
    }

    shmem_init();
    shmem_query_initialized(&initialized);
    CHECK(initialized != 0, "shmem_query_initialized gave 0 after shmem_init");

    int me = shmem_my_pe(), n = shmem_n_pes();
    CHECK(n >= 1 && me >= 0 && me < n, "my_pe %d of n_pes %d", me, n);
    CHECK(_my_pe() == me && _num_pes() == n, "_my_pe/_num_pes disagree with shmem_my_pe");
    /* Under oshrun each process is the PE of its rank (docs/launcher.md). */
    const char *rank = getenv("RSHMEM_RANK");
    if (rank != NULL)
        CHECK(atoi(rank) == me, "RSHMEM_RANK is %s", rank);
    const char *n_ranks = getenv("RSHMEM_N_RANKS");
    if (n_ranks != NULL)
        CHECK(atoi(n_ranks) == n, "RSHMEM_N_RANKS is %s", n_ranks);

    for (int pe = 0; pe < n; pe++)
        CHECK(shmem_pe_accessible(pe) == 1, "PE %d not accessible", pe);

    int major = -1, minor = -1;
    shmem_info_get_version(&major, &minor);
    CHECK(major == SHMEM_MAJOR_VERSION && minor == SHMEM_MINOR_VERSION,
          "info_get_version %d.%d, header %d.%d", major, minor, SHMEM_MAJOR_VERSION,
          SHMEM_MINOR_VERSION);
#ifndef OSHMEM_MAJOR_VERSION /* Open MPI's OSHMEM, the peer these programs are tried on, is 1.4 */
    CHECK(major == 1 && minor >= 5, "version %d.%d, want 1.5 or later", major, minor);
#endif
    char name[SHMEM_MAX_NAME_LEN];
    memset(name, 0, sizeof name);
    shmem_info_get_name(name);
    CHECK(name[0] != '\0' && memchr(name, '\0', sizeof name) != NULL, "empty or unterminated");
    CHECK(strcmp(name, SHMEM_VENDOR_STRING) == 0, "name '%s' vs SHMEM_VENDOR_STRING '%s'", name,
          SHMEM_VENDOR_STRING);

    printf("hello from PE %d of %d (%s %d.%d)\n", me, n, name, major, minor);
    FINISH("hello");

    shmem_query_initialized(&initialized);
    if (initialized != 0) {
        fprintf(stderr, "FAIL hello: shmem_query_initialized gave %d after shmem_finalize\n",
                initialized);
        return 1;
    }
    return 0;
}
