/* contexts: communication contexts.
 * ctx_create with each option, RMA/AMO/ordering through a context and through
 * SHMEM_CTX_DEFAULT, ctx_get_team, team_create_ctx (PE numbers are the team's), sessions
 * (1.6: ctx_session_start/stop, a no-op on SHMEM_CTX_INVALID), ctx_pe_quiet, destroy. */
#include "check.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    long *x = shmem_calloc(8, sizeof(long));
    shmem_barrier_all();

    long options[] = {0, SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED, SHMEM_CTX_NOSTORE,
                      SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED};
    long store_rounds = 0;
    for (unsigned k = 0; k < sizeof options / sizeof options[0]; k++) {
        shmem_ctx_t ctx;
        CHECK(shmem_ctx_create(options[k], &ctx) == 0, "ctx_create(%ld)", options[k]);
        shmem_team_t team = SHMEM_TEAM_INVALID;
        CHECK(shmem_ctx_get_team(ctx, &team) == 0 && team == SHMEM_TEAM_WORLD,
              "ctx_get_team of a world context");
        long v = 100 * (long)k + me;
        if (options[k] & SHMEM_CTX_NOSTORE) {
            /* A NOSTORE context is for loads only: a store on it is the program's error. */
            /* The previous round put 100 * (k - 1) + me into the right neighbour's x[0]. */
            CHECK(shmem_ctx_long_g(ctx, &x[0], right) == 100 * (long)(k - 1) + me,
                  "ctx_long_g on a NOSTORE context");
            shmem_barrier_all();
            shmem_ctx_destroy(ctx);
            continue;
        }
        store_rounds++;
        shmem_ctx_long_put(ctx, &x[0], &v, 1, right);
        shmem_ctx_long_p(ctx, &x[1], v, right);
        shmem_ctx_long_atomic_add(ctx, &x[2], 1, 0);
        shmem_ctx_fence(ctx);
        shmem_ctx_quiet(ctx);
        shmem_barrier_all();
        CHECK(x[0] == 100 * (long)k + left && x[1] == x[0], "ctx put/p with option %ld",
              options[k]);
        CHECK(shmem_ctx_long_g(ctx, &x[0], right) == 100 * (long)k + me, "ctx_long_g");
        long got = -1;
        shmem_ctx_long_get(ctx, &got, &x[1], 1, right);
        CHECK(got == 100 * (long)k + me, "ctx_long_get");
        CHECK(shmem_ctx_long_atomic_fetch(ctx, &x[2], 0) == store_rounds * n, "ctx AMO");
        shmem_barrier_all();
        shmem_ctx_destroy(ctx);
    }

    /* SHMEM_CTX_DEFAULT is a context like any other; its team is the world. */
    shmem_team_t team = SHMEM_TEAM_INVALID;
    CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &team) == 0 && team == SHMEM_TEAM_WORLD,
          "ctx_get_team(SHMEM_CTX_DEFAULT)");
    shmem_ctx_long_p(SHMEM_CTX_DEFAULT, &x[3], me, right);
    shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
    shmem_barrier_all();
    CHECK(x[3] == left, "put on SHMEM_CTX_DEFAULT");

    /* Nonblocking operations on a context, completed by ctx_pe_quiet and ctx_quiet. */
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");
    long src[4] = {me, me + 1, me + 2, me + 3};
    shmem_ctx_long_put_nbi(ctx, &x[4], src, 4, right);
    int target = right;
    shmem_ctx_pe_quiet(ctx, &target, 1);
    shmem_barrier_all();
    for (int i = 0; i < 4; i++)
        CHECK(x[4 + i] == left + i, "ctx put_nbi + ctx_pe_quiet element %d", i);
    long fetched = -1;
    shmem_ctx_long_atomic_fetch_add_nbi(ctx, &fetched, &x[2], 0, 0);
    shmem_ctx_quiet(ctx);
    CHECK(fetched >= 0, "ctx fetch_add_nbi fetched %ld", fetched);
    shmem_barrier_all();

    /* A session of small puts and AMOs on the context. */
    x[2] = 0;
    shmem_barrier_all();
    shmem_ctx_session_config_t cfg = {.total_ops = 64};
    shmem_ctx_session_start(ctx, SHMEM_CTX_SESSION_BATCH, &cfg, SHMEM_CTX_SESSION_TOTAL_OPS);
    for (int i = 0; i < 32; i++) {
        shmem_ctx_long_atomic_add(ctx, &x[2], 1, right);
        shmem_ctx_long_p(ctx, &x[3], i, right);
    }
    shmem_ctx_session_stop(ctx);
    shmem_ctx_session_start(SHMEM_CTX_INVALID, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    shmem_ctx_session_stop(SHMEM_CTX_INVALID);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    /* The puts to one address are unordered; the AMOs all count. */
    CHECK(x[2] == 32 && x[3] >= 0 && x[3] < 32, "session gave %ld and %ld", x[2], x[3]);
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();

    /* A context on the even PEs: its PE numbers are the team's. */
    shmem_team_t evens = SHMEM_TEAM_INVALID;
    int n_evens = (n + 1) / 2;
    shmem_team_config_t config = {.num_contexts = 1};
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, n_evens, &config,
                                   SHMEM_TEAM_NUM_CONTEXTS, &evens) == 0,
          "split_strided");
    if (evens != SHMEM_TEAM_INVALID) {
        shmem_ctx_t tctx;
        CHECK(shmem_team_create_ctx(evens, 0, &tctx) == 0, "team_create_ctx");
        shmem_team_t got = SHMEM_TEAM_INVALID;
        CHECK(shmem_ctx_get_team(tctx, &got) == 0 && got == evens, "ctx_get_team(team ctx)");
        int t_me = shmem_team_my_pe(evens), t_right = (t_me + 1) % n_evens;
        shmem_ctx_long_p(tctx, &x[0], 1000 + me, t_right);
        shmem_ctx_quiet(tctx);
        shmem_team_sync(evens);
        int world_left = 2 * ((t_me + n_evens - 1) % n_evens);
        CHECK(x[0] == 1000 + world_left, "team ctx put landed from %ld, want %d", x[0] - 1000,
              world_left);
        shmem_team_sync(evens);
        shmem_ctx_destroy(tctx);
        shmem_team_destroy(evens);
    }
    shmem_ctx_t bad;
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &bad) != 0 && bad == SHMEM_CTX_INVALID,
          "team_create_ctx(SHMEM_TEAM_INVALID)");
    shmem_barrier_all();
    shmem_free(x);
    PASS("contexts");
    shmem_finalize();
    return 0;
}
