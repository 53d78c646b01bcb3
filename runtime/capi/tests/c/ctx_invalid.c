/* ctx_invalid: contexts and teams that are SHMEM_CTX_INVALID or SHMEM_TEAM_INVALID, as a PE
 * outside a split team gets them: the routines the text gives an answer for do no harm. */
#include "check.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_team_t team, got_team;
    shmem_ctx_t ctx;
    static long target;
    shmem_team_config_t config = {.num_contexts = 1};

    /* A team of the last PE alone: every other PE gets SHMEM_TEAM_INVALID. */
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, 1, 1, &config,
                                      SHMEM_TEAM_NUM_CONTEXTS, &team);
    CHECK(rc == 0, "split returned %d", rc);
    CHECK((team == SHMEM_TEAM_INVALID) == (me != npes - 1), "membership");

    /* OpenSHMEM 1.5 section 9.5.2 (shmem_team_create_ctx): on SHMEM_TEAM_INVALID no context
     * is made, ctx is SHMEM_CTX_INVALID, and the return is non-zero. */
    rc = shmem_team_create_ctx(team, 0, &ctx);
    if (team == SHMEM_TEAM_INVALID) {
        CHECK(rc != 0 && ctx == SHMEM_CTX_INVALID, "team_create_ctx on SHMEM_TEAM_INVALID");
    } else {
        CHECK(rc == 0 && ctx != SHMEM_CTX_INVALID, "team_create_ctx on a team of one");
        shmem_ctx_long_p(ctx, &target, 5, 0);
        shmem_ctx_quiet(ctx);
        CHECK(target == 5, "put through the team's context");
    }
    /* Section 9.5.4 (shmem_ctx_get_team): SHMEM_CTX_INVALID gives SHMEM_TEAM_INVALID and a
     * non-zero return. */
    got_team = SHMEM_TEAM_WORLD;
    rc = shmem_ctx_get_team(ctx, &got_team);
    if (ctx == SHMEM_CTX_INVALID)
        CHECK(rc != 0 && got_team == SHMEM_TEAM_INVALID, "ctx_get_team of SHMEM_CTX_INVALID");
    else
        CHECK(rc == 0 && got_team == team, "ctx_get_team");
    /* Section 9.5.3 (shmem_ctx_destroy): no effect on SHMEM_CTX_INVALID; the 1.6 session
     * hints do nothing either. */
    shmem_ctx_session_start(ctx, 0, NULL, 0);
    shmem_ctx_session_stop(ctx);
    shmem_ctx_destroy(ctx);
    shmem_ctx_destroy(SHMEM_CTX_INVALID);

    /* Section 9.4: the queries answer -1 (or NULL) for SHMEM_TEAM_INVALID, destroy does
     * nothing. */
    CHECK(shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1, "team_my_pe");
    CHECK(shmem_team_n_pes(SHMEM_TEAM_INVALID) == -1, "team_n_pes");
    CHECK(shmem_team_translate_pe(SHMEM_TEAM_INVALID, 0, SHMEM_TEAM_WORLD) == -1, "translate");
    CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, SHMEM_TEAM_INVALID) == -1, "translate");
    CHECK(shmem_team_ptr(SHMEM_TEAM_INVALID, &target, 0) == NULL, "team_ptr");
    /* Section 9.4.5: -1 too for a src_pe that is not in both teams. */
    CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, npes, SHMEM_TEAM_WORLD) == -1, "translate");
    if (team != SHMEM_TEAM_INVALID)
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, team) == (npes == 1 ? 0 : -1),
              "translate of a PE outside the team");
    shmem_team_destroy(team);
    shmem_team_destroy(SHMEM_TEAM_INVALID);

    FINISH("ctx_invalid");
    return 0;
}
