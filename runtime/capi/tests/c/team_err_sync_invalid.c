/* team_err_sync_invalid: a team collective on SHMEM_TEAM_INVALID. OpenSHMEM 1.5 section 9.9
 * (team-based collectives): an invalid team handle gives undefined behaviour; rshmem refuses
 * the call with a message naming the handle. */
#include <shmem.h>

int main(void) {
    shmem_init();
    shmem_team_sync(SHMEM_TEAM_INVALID);
    shmem_finalize();
    return 0;
}
