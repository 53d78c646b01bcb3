/* team_get_config: what shmem_team_get_config reports, with and without
 * SHMEM_TEAM_NUM_CONTEXTS in the mask, for the world team, split teams, and
 * SHMEM_TEAM_INVALID. */
#include "check.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_team_config_t config, got;

    /* OpenSHMEM 1.5 section 9.4.4 (shmem_team_get_config): 0 for a valid team, and the
     * parameters the mask names. The world team can hold the default context at least. */
    got.num_contexts = -7;
    CHECK(shmem_team_get_config(SHMEM_TEAM_WORLD, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0,
          "get_config of the world team");
    CHECK(got.num_contexts >= 1, "world num_contexts %d", got.num_contexts);
    /* A mask of 0 asks for nothing: config is not touched and may be NULL. */
    got.num_contexts = -7;
    CHECK(shmem_team_get_config(SHMEM_TEAM_WORLD, 0, &got) == 0 && got.num_contexts == -7,
          "mask 0 wrote num_contexts %d", got.num_contexts);
    CHECK(shmem_team_get_config(SHMEM_TEAM_WORLD, 0, NULL) == 0, "mask 0 with NULL");
    /* SHMEM_TEAM_INVALID: nothing is done, and the return is non-zero. */
    CHECK(shmem_team_get_config(SHMEM_TEAM_INVALID, SHMEM_TEAM_NUM_CONTEXTS, &got) != 0 &&
              got.num_contexts == -7,
          "get_config of SHMEM_TEAM_INVALID");

    /* Section 9.4.3 (shmem_team_config_t): the team is made with num_contexts when the mask
     * has SHMEM_TEAM_NUM_CONTEXTS ... */
    shmem_team_t evens, all;
    config.num_contexts = 3;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, &config,
                                      SHMEM_TEAM_NUM_CONTEXTS, &evens);
    CHECK(rc == 0, "split returned %d", rc);
    if (me % 2 == 0) {
        CHECK(shmem_team_get_config(evens, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0, "get_config");
        CHECK(got.num_contexts == 3, "num_contexts %d, asked for 3", got.num_contexts);
        shmem_team_destroy(evens);
    } else {
        CHECK(evens == SHMEM_TEAM_INVALID, "odd PE in the even team");
        CHECK(shmem_team_get_config(evens, SHMEM_TEAM_NUM_CONTEXTS, &got) != 0,
              "get_config of a team this PE is not in");
    }
    /* ... and a value the mask leaves out is ignored: the default, 0, is used instead. */
    config.num_contexts = 3;
    rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, &config, 0, &all);
    CHECK(rc == 0, "split returned %d", rc);
    CHECK(shmem_team_get_config(all, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0, "get_config");
    CHECK(got.num_contexts == 0, "num_contexts %d, the mask left it out", got.num_contexts);
    shmem_team_destroy(all);

    FINISH("team_get_config");
    return 0;
}
