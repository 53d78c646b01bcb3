/* generic_rma: every C11 generic name over the standard RMA types, on every type of that
 * table (OpenSHMEM 1.5 section 9.6, Table "Standard RMA Types and Names"), each typedef'd
 * type through variables declared with the typedef, with and without a context:
 *   put, p, g, get, iput, iget, put_nbi, get_nbi (1.5 section 9.6),
 *   ibput, ibget (1.6),
 *   put_signal, put_signal_nbi (1.5 section 9.8),
 *   and the team collectives over the same table: alltoall, alltoalls, broadcast,
 *   collect, fcollect (1.5 section 9.9).
 * On LP64, int64_t is long, size_t is unsigned long, ...: the values carry a high bit so that a
 * selection of a routine of the wrong width would show. */
#include "check.h"
#include "generic_tables.h"

static int me, npes, right, left;
static shmem_ctx_t ctx;
static uint64_t *sig;

/* The value element k of PE pe puts: distinct per PE and element, high bit included. */
#define PE_VALUE(T, HIGH, pe, k) VALUE(T, HIGH, (pe) * 8 + (k) + 1)

/* One function per type: every RMA and collective generic name on T. */
#define RMA_TEST(T, NAME, HIGH)                                                           \
    static void rma_##NAME(void) {                                                        \
        T *dest = shmem_calloc(64, sizeof(T));                                            \
        T *src = shmem_calloc(8, sizeof(T));                                              \
        T back[8];                                                                        \
        T got;                                                                            \
        CHECK(dest && src, #NAME ": calloc");                                             \
        for (int k = 0; k < 8; k++)                                                       \
            src[k] = PE_VALUE(T, HIGH, me, k);                                            \
        *sig = 0;                                                                         \
        shmem_barrier_all();                                                              \
        /* Writes into the right neighbour's dest, each form into its own elements. */    \
        shmem_put(dest, src, 2, right);                                                   \
        shmem_put(ctx, dest + 2, src, 2, right);                                          \
        shmem_p(dest + 4, src[0], right);                                                 \
        shmem_p(ctx, dest + 5, src[1], right);                                            \
        shmem_iput(dest + 6, src, 2, 1, 2, right);                                        \
        shmem_iput(ctx, dest + 10, src, 2, 1, 2, right);                                  \
        shmem_ibput(dest + 14, src, 3, 4, 2, 2, right);                                   \
        shmem_ibput(ctx, dest + 20, src, 3, 4, 2, 2, right);                              \
        shmem_put_nbi(dest + 26, src, 2, right);                                          \
        shmem_put_nbi(ctx, dest + 28, src, 2, right);                                     \
        shmem_put_signal(dest + 30, src, 2, sig, 1, SHMEM_SIGNAL_ADD, right);             \
        shmem_put_signal(ctx, dest + 32, src, 2, sig, 1, SHMEM_SIGNAL_ADD, right);        \
        shmem_put_signal_nbi(dest + 34, src, 2, sig, 1, SHMEM_SIGNAL_ADD, right);         \
        shmem_put_signal_nbi(ctx, dest + 36, src, 2, sig, 1, SHMEM_SIGNAL_ADD, right);    \
        shmem_ctx_quiet(ctx);                                                             \
        shmem_quiet();                                                                    \
        shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 4);                                    \
        shmem_barrier_all();                                                              \
        for (int k = 0; k < 2; k++) {                                                     \
            T want = PE_VALUE(T, HIGH, left, k);                                          \
            CHECK(dest[k] == want && dest[2 + k] == want, #NAME ": put element %d", k);   \
            CHECK(dest[4 + k] == want, #NAME ": p element %d", k);                        \
            CHECK(dest[6 + 2 * k] == want && dest[10 + 2 * k] == want,                    \
                  #NAME ": iput element %d", k);                                          \
            CHECK(dest[26 + k] == want && dest[28 + k] == want, #NAME ": put_nbi %d", k); \
            CHECK(dest[30 + k] == want && dest[32 + k] == want, #NAME ": put_signal %d",  \
                  k);                                                                     \
            CHECK(dest[34 + k] == want && dest[36 + k] == want,                           \
                  #NAME ": put_signal_nbi %d", k);                                        \
        }                                                                                 \
        /* ibput: block b of 2 elements from src + 4b to dest + 3b. */                    \
        for (int b = 0; b < 2; b++)                                                       \
            for (int k = 0; k < 2; k++) {                                                 \
                T want = PE_VALUE(T, HIGH, left, 4 * b + k);                              \
                CHECK(dest[14 + 3 * b + k] == want && dest[20 + 3 * b + k] == want,       \
                      #NAME ": ibput block %d element %d", b, k);                         \
            }                                                                             \
        /* Reads from the right neighbour, whose dest this PE wrote. */                   \
        got = shmem_g(dest + 4, right);                                                   \
        CHECK(got == PE_VALUE(T, HIGH, me, 0), #NAME ": g");                              \
        got = shmem_g(ctx, dest + 5, right);                                              \
        CHECK(got == PE_VALUE(T, HIGH, me, 1), #NAME ": ctx g");                          \
        shmem_get(back, dest, 2, right);                                                  \
        shmem_get(ctx, back + 2, dest + 2, 2, right);                                     \
        shmem_get_nbi(back + 4, dest + 26, 2, right);                                     \
        shmem_get_nbi(ctx, back + 6, dest + 28, 2, right);                                \
        shmem_ctx_quiet(ctx);                                                             \
        shmem_quiet();                                                                    \
        for (int k = 0; k < 8; k++)                                                       \
            CHECK(back[k] == PE_VALUE(T, HIGH, me, k % 2), #NAME ": get element %d", k);  \
        shmem_iget(back, dest + 6, 1, 2, 2, right);                                       \
        shmem_iget(ctx, back + 2, dest + 10, 1, 2, 2, right);                             \
        for (int k = 0; k < 4; k++)                                                       \
            CHECK(back[k] == PE_VALUE(T, HIGH, me, k % 2), #NAME ": iget element %d", k); \
        /* ibget: block b of 2 elements from dest + 3b to back + 4b. */                   \
        shmem_ibget(back, dest + 14, 4, 3, 2, 2, right);                                  \
        CHECK(back[0] == PE_VALUE(T, HIGH, me, 0) && back[1] == PE_VALUE(T, HIGH, me, 1) && \
                  back[4] == PE_VALUE(T, HIGH, me, 4) && back[5] == PE_VALUE(T, HIGH, me, 5), \
              #NAME ": ibget");                                                           \
        shmem_ibget(ctx, back + 1, dest + 20, 4, 3, 1, 2, right);                         \
        CHECK(back[1] == PE_VALUE(T, HIGH, me, 0) && back[5] == PE_VALUE(T, HIGH, me, 4), \
              #NAME ": ctx ibget");                                                       \
        shmem_barrier_all();                                                              \
        /* Collectives, each into its own part of dest (a PE may write it on entering). */ \
        src[0] = PE_VALUE(T, HIGH, me, 0);                                                \
        CHECK(shmem_broadcast(SHMEM_TEAM_WORLD, dest + 40, src, 1, 0) == 0, #NAME ": bcast"); \
        CHECK(me == 0 || dest[40] == PE_VALUE(T, HIGH, 0, 0), #NAME ": broadcast value"); \
        CHECK(shmem_collect(SHMEM_TEAM_WORLD, dest + 44, src, 1) == 0, #NAME ": collect"); \
        CHECK(shmem_fcollect(SHMEM_TEAM_WORLD, dest + 48, src, 1) == 0, #NAME ": fcollect"); \
        for (int p = 0; p < npes; p++)                                                    \
            CHECK(dest[44 + p] == PE_VALUE(T, HIGH, p, 0) &&                              \
                      dest[48 + p] == PE_VALUE(T, HIGH, p, 0),                            \
                  #NAME ": (f)collect from PE %d", p);                                    \
        for (int p = 0; p < npes; p++)                                                    \
            src[p] = PE_VALUE(T, HIGH, me, p);                                            \
        CHECK(shmem_alltoall(SHMEM_TEAM_WORLD, dest + 52, src, 1) == 0, #NAME ": alltoall"); \
        CHECK(shmem_alltoalls(SHMEM_TEAM_WORLD, dest + 56, src, 1, 1, 1) == 0,            \
              #NAME ": alltoalls");                                                       \
        for (int p = 0; p < npes; p++)                                                    \
            CHECK(dest[52 + p] == PE_VALUE(T, HIGH, p, me) &&                             \
                      dest[56 + p] == PE_VALUE(T, HIGH, p, me),                           \
                  #NAME ": alltoall(s) from PE %d", p);                                   \
        shmem_barrier_all();                                                              \
        shmem_free(src);                                                                  \
        shmem_free(dest);                                                                 \
    }

RMA_TYPES(RMA_TEST)

int main(void) {
    shmem_init();
    ring_of_pes(&me, &npes, &right, &left);
    CHECK(npes <= 4, "the values are made for at most 4 PEs");
    sig = shmem_calloc(1, sizeof(uint64_t));
    CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");
#define RUN(T, NAME, HIGH) rma_##NAME();
    RMA_TYPES(RUN)
    shmem_ctx_destroy(ctx);
    shmem_free(sig);
    FINISH("generic_rma");
    return 0;
}
