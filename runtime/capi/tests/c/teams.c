/* teams: team management.
 * SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED against my_pe/n_pes; split_strided into the even PEs
 * (team_my_pe, team_n_pes, translate_pe both ways, non-members get SHMEM_TEAM_INVALID);
 * get_config of the contexts asked for; split_2d into rows of 2; team_sync and a reduction
 * on a sub-team; team_ptr; destroy; the -1 answers of SHMEM_TEAM_INVALID. */
#include "check.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();

    CHECK(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me, "team_my_pe(WORLD)");
    CHECK(shmem_team_n_pes(SHMEM_TEAM_WORLD) == n, "team_n_pes(WORLD)");
    int shared_n = shmem_team_n_pes(SHMEM_TEAM_SHARED);
    int shared_me = shmem_team_my_pe(SHMEM_TEAM_SHARED);
    CHECK(shared_n >= 1 && shared_n <= n && shared_me >= 0 && shared_me < shared_n,
          "SHMEM_TEAM_SHARED: PE %d of %d", shared_me, shared_n);
    CHECK(shmem_team_translate_pe(SHMEM_TEAM_SHARED, shared_me, SHMEM_TEAM_WORLD) == me,
          "translate SHARED -> WORLD");
    CHECK(shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1, "team_my_pe(INVALID)");
    CHECK(shmem_team_n_pes(SHMEM_TEAM_INVALID) == -1, "team_n_pes(INVALID)");

    /* The even PEs, with two contexts asked for. */
    shmem_team_config_t config = {.num_contexts = 2};
    shmem_team_t evens = SHMEM_TEAM_INVALID;
    /* Allocated by every PE: shmem_malloc is a collective of the world. */
    long *src = shmem_malloc(sizeof(long)), *dst = shmem_malloc(sizeof(long));
    int n_evens = (n + 1) / 2;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, n_evens, &config,
                                      SHMEM_TEAM_NUM_CONTEXTS, &evens);
    CHECK(rc == 0, "split_strided returned %d", rc);
    if (me % 2 == 0) {
        CHECK(evens != SHMEM_TEAM_INVALID, "member got SHMEM_TEAM_INVALID");
        CHECK(shmem_team_my_pe(evens) == me / 2, "team_my_pe(evens) %d",
              shmem_team_my_pe(evens));
        CHECK(shmem_team_n_pes(evens) == n_evens, "team_n_pes(evens)");
        for (int i = 0; i < n_evens; i++)
            CHECK(shmem_team_translate_pe(evens, i, SHMEM_TEAM_WORLD) == 2 * i,
                  "translate evens %d -> WORLD", i);
        shmem_team_config_t got = {.num_contexts = -1};
        CHECK(shmem_team_get_config(evens, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0, "get_config");
        CHECK(got.num_contexts == 2, "get_config num_contexts %d", got.num_contexts);
        /* A reduction over the sub-team: the sum of the even world ranks. */
        *src = me;
        CHECK(shmem_long_sum_reduce(evens, dst, src, 1) == 0, "sum_reduce on evens");
        CHECK(*dst == (long)n_evens * (n_evens - 1), "sum over evens %ld", *dst);
        CHECK(shmem_team_sync(evens) == 0, "team_sync(evens)");
        /* team_ptr with a team PE number: oneself is the same address. */
        CHECK(shmem_team_ptr(evens, src, me / 2) == (void *)src, "team_ptr to oneself");
    } else {
        CHECK(evens == SHMEM_TEAM_INVALID, "non-member got a team");
    }
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
    /* From the world to the evens: PE 1 is not a member. */
    if (evens != SHMEM_TEAM_INVALID) {
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me, evens) == me / 2,
              "translate WORLD -> evens");
        if (n > 1)
            CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, 1, evens) == -1, "PE 1 in evens");
    }
    shmem_barrier_all();

    /* split_2d: rows of xrange 2; x is the position in the row, y the row. */
    shmem_team_t xteam = SHMEM_TEAM_INVALID, yteam = SHMEM_TEAM_INVALID;
    rc = shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &xteam, NULL, 0, &yteam);
    CHECK(rc == 0, "split_2d returned %d", rc);
    CHECK(shmem_team_my_pe(xteam) == me % 2, "x team PE %d", shmem_team_my_pe(xteam));
    CHECK(shmem_team_my_pe(yteam) == me / 2, "y team PE %d", shmem_team_my_pe(yteam));
    int row_len = (me / 2) * 2 + 2 <= n ? 2 : n - (me / 2) * 2;
    CHECK(shmem_team_n_pes(xteam) == row_len, "x team size %d", shmem_team_n_pes(xteam));
    int col_len = (n - me % 2 + 1) / 2;
    CHECK(shmem_team_n_pes(yteam) == col_len, "y team size %d, want %d",
          shmem_team_n_pes(yteam), col_len);
    CHECK(shmem_team_translate_pe(yteam, 0, SHMEM_TEAM_WORLD) == me % 2, "y team's first PE");
    CHECK(shmem_team_sync(xteam) == 0 && shmem_team_sync(yteam) == 0, "sync on 2d teams");

    /* A split of a split: the first PE of each y team alone. */
    shmem_team_t alone = SHMEM_TEAM_INVALID;
    rc = shmem_team_split_strided(yteam, 0, 1, 1, NULL, 0, &alone);
    CHECK(rc == 0, "split of a split returned %d", rc);
    if (shmem_team_my_pe(yteam) == 0) {
        CHECK(alone != SHMEM_TEAM_INVALID, "first PE of the y team left out");
        CHECK(shmem_team_n_pes(alone) == 1 && shmem_team_my_pe(alone) == 0, "team of one");
        CHECK(shmem_team_translate_pe(alone, 0, SHMEM_TEAM_WORLD) == me, "team of one -> WORLD");
    } else {
        CHECK(alone == SHMEM_TEAM_INVALID, "a later PE of the y team got the team of one");
    }

    shmem_barrier_all();
    if (alone != SHMEM_TEAM_INVALID)
        shmem_team_destroy(alone);
    shmem_team_destroy(yteam);
    shmem_team_destroy(xteam);
    if (evens != SHMEM_TEAM_INVALID)
        shmem_team_destroy(evens);
    FINISH("teams");
    return 0;
}
