/* collectives: the team-based data collectives of 1.5 on SHMEM_TEAM_WORLD and on a sub-team.
 * barrier_all, sync_all, team_sync; broadcastmem and typed broadcast (every PE's dest, the
 * root's included, is written); collectmem/collect with a different count per PE;
 * fcollectmem/fcollect; alltoallmem/alltoall; alltoalls with strides. */
#include <string.h>

#include "check.h"

enum { K = 3 };

static int me, n;

static void broadcasts(void) {
    long *src = shmem_malloc(8 * sizeof(long)), *dst = shmem_malloc(8 * sizeof(long));
    double *dsrc = shmem_malloc(4 * sizeof(double)), *ddst = shmem_malloc(4 * sizeof(double));
    for (int root = 0; root < n; root++) {
        for (int i = 0; i < 8; i++) {
            src[i] = me * 100 + i;
            dst[i] = -1;
        }
        for (int i = 0; i < 4; i++) {
            dsrc[i] = me + 0.5 * i;
            ddst[i] = -1;
        }
        shmem_barrier_all();
        CHECK(shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, 4 * sizeof(long), root) == 0,
              "broadcastmem");
        CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, dst + 4, src + 4, 4, root) == 0,
              "long_broadcast");
        CHECK(shmem_double_broadcast(SHMEM_TEAM_WORLD, ddst, dsrc, 4, root) == 0,
              "double_broadcast");
        for (int i = 0; i < 8; i++)
            CHECK(dst[i] == root * 100 + i, "broadcast from %d element %d: %ld", root, i, dst[i]);
        for (int i = 0; i < 4; i++)
            CHECK(ddst[i] == root + 0.5 * i, "double_broadcast element %d", i);
    }
    shmem_barrier_all();
    shmem_free(ddst);
    shmem_free(dsrc);
    shmem_free(dst);
    shmem_free(src);
}

static void collects(void) {
    /* PE i gives i + 1 elements; the result is every contribution in PE order. */
    int total = n * (n + 1) / 2;
    long *src = shmem_malloc(n * sizeof(long)), *dst = shmem_malloc(total * sizeof(long));
    int *isrc = shmem_malloc(K * sizeof(int)), *idst = shmem_malloc(K * n * sizeof(int));
    char *csrc = shmem_malloc(n), *cdst = shmem_malloc(total);
    for (int i = 0; i <= me; i++) {
        src[i] = me * 10 + i;
        csrc[i] = (char)(me * 10 + i);
    }
    for (int i = 0; i < K; i++)
        isrc[i] = me * K + i;
    shmem_barrier_all();
    CHECK(shmem_long_collect(SHMEM_TEAM_WORLD, dst, src, me + 1) == 0, "long_collect");
    CHECK(shmem_collectmem(SHMEM_TEAM_WORLD, cdst, csrc, me + 1) == 0, "collectmem");
    int at = 0;
    for (int pe = 0; pe < n; pe++)
        for (int i = 0; i <= pe; i++, at++) {
            CHECK(dst[at] == pe * 10 + i, "collect element %d: %ld", at, dst[at]);
            CHECK(cdst[at] == (char)(pe * 10 + i), "collectmem byte %d", at);
        }
    CHECK(shmem_int_fcollect(SHMEM_TEAM_WORLD, idst, isrc, K) == 0, "int_fcollect");
    for (int i = 0; i < K * n; i++)
        CHECK(idst[i] == i, "fcollect element %d: %d", i, idst[i]);
    memset(idst, 0, K * n * sizeof(int));
    shmem_barrier_all();
    CHECK(shmem_fcollectmem(SHMEM_TEAM_WORLD, idst, isrc, K * sizeof(int)) == 0, "fcollectmem");
    for (int i = 0; i < K * n; i++)
        CHECK(idst[i] == i, "fcollectmem element %d", i);
    shmem_barrier_all();
    shmem_free(cdst);
    shmem_free(csrc);
    shmem_free(idst);
    shmem_free(isrc);
    shmem_free(dst);
    shmem_free(src);
}

static void alltoalls(void) {
    /* Block j of PE i's source goes to block i of PE j's dest: value 1000 i + 10 j + k. */
    long *src = shmem_malloc(K * n * 3 * sizeof(long)), *dst = shmem_malloc(K * n * 2 * sizeof(long));
    for (int j = 0; j < n; j++)
        for (int k = 0; k < K; k++)
            src[j * K + k] = 1000 * me + 10 * j + k;
    shmem_barrier_all();
    CHECK(shmem_long_alltoall(SHMEM_TEAM_WORLD, dst, src, K) == 0, "long_alltoall");
    for (int i = 0; i < n; i++)
        for (int k = 0; k < K; k++)
            CHECK(dst[i * K + k] == 1000 * i + 10 * me + k, "alltoall from %d element %d", i, k);
    shmem_barrier_all();
    CHECK(shmem_alltoallmem(SHMEM_TEAM_WORLD, dst, src, K * sizeof(long)) == 0, "alltoallmem");
    for (int i = 0; i < n; i++)
        for (int k = 0; k < K; k++)
            CHECK(dst[i * K + k] == 1000 * i + 10 * me + k, "alltoallmem from %d", i);
    shmem_barrier_all();
    /* Strided: source elements 3 apart, dest elements 2 apart. */
    for (int j = 0; j < n; j++)
        for (int k = 0; k < K; k++)
            src[3 * (j * K + k)] = 1000 * me + 10 * j + k;
    for (int i = 0; i < K * n * 2; i++)
        dst[i] = -1;
    shmem_barrier_all();
    CHECK(shmem_long_alltoalls(SHMEM_TEAM_WORLD, dst, src, 2, 3, K) == 0, "long_alltoalls");
    for (int i = 0; i < n; i++)
        for (int k = 0; k < K; k++) {
            CHECK(dst[2 * (i * K + k)] == 1000 * i + 10 * me + k, "alltoalls from %d elt %d", i, k);
            CHECK(dst[2 * (i * K + k) + 1] == -1, "alltoalls wrote between strides");
        }
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
}

/* The same calls on the odd PEs (or PE 0 alone at one PE), with team PE numbers. */
static void on_subteam(void) {
    shmem_team_t team = SHMEM_TEAM_INVALID;
    int start = n > 1 ? 1 : 0, size = n > 1 ? n / 2 : 1;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, start, 2, size, NULL, 0, &team) == 0,
          "split_strided");
    long *src = shmem_malloc(4 * sizeof(long)), *dst = shmem_malloc(4 * n * sizeof(long));
    if (team != SHMEM_TEAM_INVALID) {
        int t_me = shmem_team_my_pe(team), t_n = shmem_team_n_pes(team);
        for (int i = 0; i < 4; i++)
            src[i] = t_me * 4 + i;
        CHECK(shmem_team_sync(team) == 0, "team_sync");
        int root = t_n - 1;
        CHECK(shmem_long_broadcast(team, dst, src, 4, root) == 0, "sub-team broadcast");
        for (int i = 0; i < 4; i++)
            CHECK(dst[i] == root * 4 + i, "sub-team broadcast element %d", i);
        CHECK(shmem_long_fcollect(team, dst, src, 4) == 0, "sub-team fcollect");
        for (int i = 0; i < 4 * t_n; i++)
            CHECK(dst[i] == i, "sub-team fcollect element %d", i);
        CHECK(shmem_team_sync(team) == 0, "team_sync");
        shmem_team_destroy(team);
    }
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    n = shmem_n_pes();
    shmem_barrier_all();
    shmem_sync_all();
    CHECK(shmem_team_sync(SHMEM_TEAM_WORLD) == 0, "team_sync(WORLD)");
    broadcasts();
    collects();
    alltoalls();
    on_subteam();
    FINISH("collectives");
    return 0;
}
