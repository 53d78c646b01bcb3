/* generic_sync: the C11 generic names of point-to-point synchronization on every type of
 * the point-to-point synchronization types (OpenSHMEM 1.5 section 9.10, Table
 * "Point-to-Point Synchronization Types and Names", short and unsigned short included as the
 * deprecated rows), each typedef'd type through variables declared with the typedef:
 *   wait_until, wait_until_all, _any, _some, _all_vector, _any_vector, _some_vector, and
 *   test with the same six forms;
 * the deprecated generic shmem_wait(ivar, cmp_value) (OpenSHMEM 1.3, deprecated by 1.4) on
 *   short, int, long and long long;
 * shmem_sync(team), the C11 name of shmem_team_sync (1.5 section 9.9, SHMEM_SYNC), next to the
 *   deprecated active-set shmem_sync(PE_start, logPE_stride, PE_size, pSync) of the same
 *   name;
 * shmem_signal_add and shmem_signal_set with the optional context first (1.6 section 9.8).
 * The values carry a high bit, so a routine of the wrong width would compare wrongly. */
#include "check.h"
#include "generic_tables.h"

static int me, npes, right, left;

/* The left neighbour sets this PE's four ivars to the high bit plus one; every form then
 * waits for or tests that value, and a test for the low bits alone must fail. */
#define P2P_TEST(T, NAME, HIGH)                                                           \
    static void p2p_##NAME(void) {                                                        \
        T *ivars = shmem_calloc(4, sizeof(T));                                            \
        T want = VALUE(T, HIGH, 1), low = (T) 1;                                          \
        T cmp_values[4] = {want, want, want, want};                                       \
        int status[4] = {0, 0, 0, 0};                                                     \
        size_t indices[4], found;                                                         \
        CHECK(ivars != NULL, #NAME ": calloc");                                           \
        shmem_barrier_all();                                                              \
        for (int k = 0; k < 4; k++)                                                       \
            shmem_p(ivars + k, want, right);                                              \
        shmem_wait_until(ivars, SHMEM_CMP_EQ, want);                                      \
        shmem_wait_until_all(ivars, 4, status, SHMEM_CMP_EQ, want);                       \
        found = shmem_wait_until_any(ivars, 4, status, SHMEM_CMP_EQ, want);               \
        CHECK(found < 4, #NAME ": wait_until_any gave %zu", found);                       \
        found = shmem_wait_until_some(ivars, 4, indices, status, SHMEM_CMP_EQ, want);     \
        CHECK(found == 4, #NAME ": wait_until_some gave %zu", found);                     \
        shmem_wait_until_all_vector(ivars, 4, status, SHMEM_CMP_EQ, cmp_values);          \
        found = shmem_wait_until_any_vector(ivars, 4, status, SHMEM_CMP_EQ, cmp_values);  \
        CHECK(found < 4, #NAME ": wait_until_any_vector gave %zu", found);                \
        found = shmem_wait_until_some_vector(ivars, 4, indices, status, SHMEM_CMP_EQ,     \
                                             cmp_values);                                 \
        CHECK(found == 4, #NAME ": wait_until_some_vector gave %zu", found);              \
        CHECK(shmem_test(ivars, SHMEM_CMP_EQ, want), #NAME ": test");                     \
        CHECK(!shmem_test(ivars, SHMEM_CMP_EQ, low), #NAME ": test of the low bits");     \
        CHECK(shmem_test_all(ivars, 4, status, SHMEM_CMP_EQ, want), #NAME ": test_all");  \
        CHECK(!shmem_test_all(ivars, 4, status, SHMEM_CMP_LE, low), #NAME ": test_all LE"); \
        CHECK(shmem_test_any(ivars, 4, status, SHMEM_CMP_EQ, want) < 4, #NAME ": test_any"); \
        CHECK(shmem_test_some(ivars, 4, indices, status, SHMEM_CMP_EQ, want) == 4,        \
              #NAME ": test_some");                                                       \
        CHECK(shmem_test_all_vector(ivars, 4, status, SHMEM_CMP_EQ, cmp_values),          \
              #NAME ": test_all_vector");                                                 \
        CHECK(shmem_test_any_vector(ivars, 4, status, SHMEM_CMP_EQ, cmp_values) < 4,      \
              #NAME ": test_any_vector");                                                 \
        CHECK(shmem_test_some_vector(ivars, 4, indices, status, SHMEM_CMP_EQ, cmp_values) \
                  == 4,                                                                   \
              #NAME ": test_some_vector");                                                \
        shmem_barrier_all();                                                              \
        shmem_free(ivars);                                                                \
    }

P2P_TYPES(P2P_TEST)

/* The deprecated shmem_wait returns once ivar differs from cmp_value. */
#define WAIT_TEST(T, NAME, HIGH)                                                          \
    static void wait_##NAME(void) {                                                       \
        T *ivar = shmem_calloc(1, sizeof(T));                                             \
        CHECK(ivar != NULL, #NAME ": calloc");                                            \
        shmem_barrier_all();                                                              \
        shmem_p(ivar, VALUE(T, HIGH, 0), right);                                          \
        shmem_wait(ivar, (T) 0);                                                          \
        CHECK(*ivar == VALUE(T, HIGH, 0), #NAME ": shmem_wait returned early");           \
        shmem_barrier_all();                                                              \
        shmem_free(ivar);                                                                 \
    }

DEPRECATED_WAIT_TYPES(WAIT_TEST)

int main(void) {
    static long psync[SHMEM_SYNC_SIZE];
    shmem_ctx_t ctx;
    uint64_t *sig;
    shmem_init();
    ring_of_pes(&me, &npes, &right, &left);
    sig = shmem_calloc(2, sizeof(uint64_t));
    CHECK(sig != NULL, "calloc");
#define RUN_P2P(T, NAME, HIGH) p2p_##NAME();
#define RUN_WAIT(T, NAME, HIGH) wait_##NAME();
    P2P_TYPES(RUN_P2P)
    DEPRECATED_WAIT_TYPES(RUN_WAIT)

    /* shmem_sync: one argument is the team form, four the deprecated active set. */
    for (int k = 0; k < SHMEM_SYNC_SIZE; k++)
        psync[k] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    CHECK(shmem_sync(SHMEM_TEAM_WORLD) == 0, "shmem_sync(team)");
    shmem_sync(0, 0, npes, psync);
    CHECK(shmem_sync(SHMEM_TEAM_WORLD) == 0, "shmem_sync(team) after the active-set form");

    /* Signal updates, with and without a context. */
    CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");
    shmem_signal_set(sig, 10, right);
    shmem_fence();
    shmem_signal_add(sig, 5, right);
    shmem_signal_set(ctx, sig + 1, 20, right);
    shmem_ctx_fence(ctx);
    shmem_signal_add(ctx, sig + 1, 7, right);
    shmem_ctx_quiet(ctx);
    CHECK(shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 15) == 15, "signal_set/add");
    CHECK(shmem_signal_wait_until(sig + 1, SHMEM_CMP_EQ, 27) == 27, "ctx signal_set/add");
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    shmem_free(sig);
    FINISH("generic_sync");
    return 0;
}
