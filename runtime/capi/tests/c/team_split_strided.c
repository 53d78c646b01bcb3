/* team_split_strided: strides the text allows (negative, zero with size 1), triplets it calls
 * invalid (SHMEM_TEAM_INVALID and a non-zero return on every PE), and the PEs left out of a
 * new team, which get SHMEM_TEAM_INVALID and -1 from its queries. */
#include "check.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_team_t team;
    long *buf = shmem_malloc(npes * sizeof(long));

    /* OpenSHMEM 1.5 section 9.4.6 (shmem_team_split_strided): with a negative stride the
     * new team's PEs are in reverse order relative to the parent; start is the highest. */
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, -1, npes, NULL, 0, &team);
    CHECK(rc == 0 && team != SHMEM_TEAM_INVALID, "reversed split returned %d", rc);
    CHECK(shmem_team_my_pe(team) == npes - 1 - me, "reversed my_pe %d",
          shmem_team_my_pe(team));
    CHECK(shmem_team_n_pes(team) == npes, "reversed n_pes %d", shmem_team_n_pes(team));
    CHECK(shmem_team_translate_pe(team, 0, SHMEM_TEAM_WORLD) == npes - 1, "translate 0");
    CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, team) == npes - 1, "translate back");
    /* A collective on it runs in team order: team PE 0 is world PE npes - 1. */
    long *src = shmem_malloc(sizeof(long));
    *src = me;
    shmem_barrier_all();
    shmem_long_fcollect(team, buf, src, 1);
    for (int i = 0; i < npes; i++)
        CHECK(buf[i] == npes - 1 - i, "fcollect on the reversed team [%d] = %ld", i, buf[i]);
    shmem_long_broadcast(team, buf, src, 1, 0);
    CHECK(buf[0] == npes - 1, "broadcast from reversed team PE 0: %ld", buf[0]);
    shmem_team_destroy(team);

    /* Every other PE downwards from the last: the PEs left out get SHMEM_TEAM_INVALID. */
    int size = (npes + 1) / 2;
    rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, -2, size, NULL, 0, &team);
    CHECK(rc == 0, "split with stride -2 returned %d", rc);
    int member = (npes - 1 - me) % 2 == 0;
    if (member) {
        CHECK(team != SHMEM_TEAM_INVALID, "a member got SHMEM_TEAM_INVALID");
        CHECK(shmem_team_my_pe(team) == (npes - 1 - me) / 2, "stride -2 my_pe %d",
              shmem_team_my_pe(team));
        shmem_team_sync(team);
        shmem_team_destroy(team);
    } else {
        /* Section 9.4.1/9.4.2: -1 for SHMEM_TEAM_INVALID. */
        CHECK(team == SHMEM_TEAM_INVALID, "a PE outside the team got a team");
        CHECK(shmem_team_my_pe(team) == -1 && shmem_team_n_pes(team) == -1, "queries");
        shmem_team_destroy(team); /* 9.4.8: no effect on SHMEM_TEAM_INVALID */
    }

    /* A zero stride with size 1 is the start PE alone. */
    rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, 0, 1, NULL, 0, &team);
    CHECK(rc == 0, "stride 0 with size 1 returned %d", rc);
    CHECK((team != SHMEM_TEAM_INVALID) == (me == npes - 1), "stride 0 membership");
    if (team != SHMEM_TEAM_INVALID) {
        CHECK(shmem_team_n_pes(team) == 1 && shmem_team_my_pe(team) == 0, "stride 0 team");
        shmem_team_destroy(team);
    }

    /* Invalid triplets: new_team is SHMEM_TEAM_INVALID and the return non-zero, on all. */
    int bad[][3] = {
        {0, 1, 0},             /* size must be positive */
        {0, 1, -2},            /* size must be positive */
        {-1, 1, 1},            /* start outside the parent */
        {npes, 1, 1},          /* start outside the parent */
        {0, 1, npes + 1},      /* past the last PE */
        {0, -1, 2},            /* wraps around below PE 0 */
        {npes - 1, 1, 2},      /* wraps around past the last PE */
    };
    for (unsigned t = 0; t < sizeof bad / sizeof bad[0]; t++) {
        team = SHMEM_TEAM_WORLD;
        rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, bad[t][0], bad[t][1], bad[t][2], NULL,
                                      0, &team);
        CHECK(rc != 0 && team == SHMEM_TEAM_INVALID, "triplet (%d, %d, %d): rc %d", bad[t][0],
              bad[t][1], bad[t][2], rc);
    }

    /* Splitting SHMEM_TEAM_INVALID makes no team and returns non-zero. */
    rc = shmem_team_split_strided(SHMEM_TEAM_INVALID, 0, 1, 1, NULL, 0, &team);
    CHECK(rc != 0 && team == SHMEM_TEAM_INVALID, "split of SHMEM_TEAM_INVALID");
    shmem_team_t x, y;
    rc = shmem_team_split_2d(SHMEM_TEAM_INVALID, 1, NULL, 0, &x, NULL, 0, &y);
    CHECK(rc != 0 && x == SHMEM_TEAM_INVALID && y == SHMEM_TEAM_INVALID, "split_2d invalid");
    /* Section 9.4.7: xrange must be positive; otherwise no teams. */
    rc = shmem_team_split_2d(SHMEM_TEAM_WORLD, -1, NULL, 0, &x, NULL, 0, &y);
    CHECK(rc != 0 && x == SHMEM_TEAM_INVALID && y == SHMEM_TEAM_INVALID, "split_2d xrange -1");

    shmem_free(src);
    shmem_free(buf);
    FINISH("team_split_strided");
    return 0;
}
