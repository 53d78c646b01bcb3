/* ctx_on_teams: contexts made on two strided teams, as in the specification's example of
 * shmem_team_create_ctx (OpenSHMEM 1.5 section 9.5.2): a PE outside a team is given
 * SHMEM_CTX_INVALID and a non-zero return, guards its puts and atomics with a comparison, and
 * still quiets and destroys the handle with every other PE, which must do nothing. */
#include "check.h"

static int got_even, got_third, total;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_team_config_t config = {.num_contexts = 1};
    shmem_team_t evens, thirds;
    shmem_ctx_t on_evens, on_thirds;

    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, &config,
                             SHMEM_TEAM_NUM_CONTEXTS, &evens);
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 3, (npes + 2) / 3, &config,
                             SHMEM_TEAM_NUM_CONTEXTS, &thirds);
    int made_even = shmem_team_create_ctx(evens, 0, &on_evens);
    int made_third = shmem_team_create_ctx(thirds, 0, &on_thirds);
    CHECK((made_even == 0) == (me % 2 == 0), "team_create_ctx on the evens returned %d",
          made_even);
    CHECK((made_third == 0) == (me % 3 == 0), "team_create_ctx on the thirds returned %d",
          made_third);
    CHECK(made_even == 0 || on_evens == SHMEM_CTX_INVALID, "no context, yet not INVALID");
    CHECK(made_third == 0 || on_thirds == SHMEM_CTX_INVALID, "no context, yet not INVALID");

    /* Each team passes its own PE number around a ring of the team. */
    if (on_evens != SHMEM_CTX_INVALID) {
        int pe = shmem_team_my_pe(evens), n = shmem_team_n_pes(evens);
        shmem_ctx_int_p(on_evens, &got_even, pe + 100, (pe + 1) % n);
    }
    if (on_thirds != SHMEM_CTX_INVALID) {
        int pe = shmem_team_my_pe(thirds), n = shmem_team_n_pes(thirds);
        shmem_ctx_int_p(on_thirds, &got_third, pe + 200, (pe + 1) % n);
    }
    /* Every PE quiets and fences both handles, valid or not. */
    shmem_ctx_fence(on_evens);
    shmem_ctx_fence(on_thirds);
    shmem_ctx_quiet(on_evens);
    shmem_ctx_quiet(on_thirds);
    int first = 0; /* a PE of every team */
    shmem_ctx_pe_quiet(on_evens, &first, 1);
    shmem_team_sync(SHMEM_TEAM_WORLD);

    if (me % 2 == 0) {
        int n = shmem_team_n_pes(evens), pe = shmem_team_my_pe(evens);
        CHECK(got_even == (pe + n - 1) % n + 100, "evens: got %d", got_even);
    }
    if (me % 3 == 0) {
        int n = shmem_team_n_pes(thirds), pe = shmem_team_my_pe(thirds);
        CHECK(got_third == (pe + n - 1) % n + 200, "thirds: got %d", got_third);
    }
    /* PEs in both teams add to PE 0 through the evens' context. */
    if (on_evens != SHMEM_CTX_INVALID && on_thirds != SHMEM_CTX_INVALID)
        shmem_ctx_int_atomic_add(on_evens, &total, 1, 0);
    shmem_ctx_quiet(on_evens);
    shmem_team_sync(SHMEM_TEAM_WORLD);
    if (me == 0) {
        int both = 0;
        for (int pe = 0; pe < npes; pe += 6)
            both++;
        CHECK(total == both, "PE 0 counted %d PEs in both teams, want %d", total, both);
    }

    shmem_ctx_destroy(on_evens);
    shmem_team_destroy(evens);
    shmem_ctx_destroy(on_thirds);
    shmem_team_destroy(thirds);
    shmem_finalize();
    return 0;
}
