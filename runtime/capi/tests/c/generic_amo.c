/* generic_amo: every C11 generic AMO name on every type of its table, each typedef'd type
 * through variables declared with the typedef, with and without a context (OpenSHMEM 1.5
 * section 9.7):
 *   standard AMO types: atomic_compare_swap, fetch_inc, inc, fetch_add, add and the nbi
 *     compare_swap, fetch_inc, fetch_add;
 *   extended AMO types: atomic_fetch, set, swap and the nbi fetch, swap;
 *   bitwise AMO types: atomic_fetch_and, and, fetch_or, or, fetch_xor, xor and their nbi
 *     fetching forms (the table lists int32_t and int64_t but not int and long: on LP64 an
 *     int64_t variable is a long, and must still select the 64-bit routine);
 *   the deprecated generic names of OpenSHMEM 1.3 (fetch, set, swap on float, double, int,
 *     long, long long; cswap, finc, inc, fadd, add on int, long, long long).
 * The values carry a high bit, so that a routine of the wrong width would show. */
#include "check.h"
#include "generic_tables.h"

static int me, npes, right, left;
static shmem_ctx_t ctx;

/* Standard AMOs: 12 increments by 1 of PE 0's a[0] from every PE, and a chain of
 * compare-and-swaps on the right neighbour's a[1], starting from the high bit. */
#define STD_AMO_TEST(T, NAME, HIGH)                                                       \
    static void std_amo_##NAME(void) {                                                    \
        T *a = shmem_calloc(4, sizeof(T));                                                \
        T fetched[4], old;                                                                \
        CHECK(a != NULL, #NAME ": calloc");                                               \
        a[1] = VALUE(T, HIGH, 0);                                                         \
        shmem_barrier_all();                                                              \
        shmem_atomic_add(a, (T) 1, 0);                                                    \
        shmem_atomic_add(ctx, a, (T) 1, 0);                                               \
        shmem_atomic_inc(a, 0);                                                           \
        shmem_atomic_inc(ctx, a, 0);                                                      \
        old = shmem_atomic_fetch_add(a, (T) 1, 0);                                        \
        CHECK(old < (T) (12 * npes), #NAME ": fetch_add gave a value never held");        \
        old = shmem_atomic_fetch_add(ctx, a, (T) 1, 0);                                   \
        CHECK(old < (T) (12 * npes), #NAME ": ctx fetch_add");                            \
        old = shmem_atomic_fetch_inc(a, 0);                                               \
        CHECK(old < (T) (12 * npes), #NAME ": fetch_inc");                                \
        old = shmem_atomic_fetch_inc(ctx, a, 0);                                          \
        CHECK(old < (T) (12 * npes), #NAME ": ctx fetch_inc");                            \
        shmem_atomic_fetch_add_nbi(fetched, a, (T) 1, 0);                                 \
        shmem_atomic_fetch_add_nbi(ctx, fetched + 1, a, (T) 1, 0);                        \
        shmem_atomic_fetch_inc_nbi(fetched + 2, a, 0);                                    \
        shmem_atomic_fetch_inc_nbi(ctx, fetched + 3, a, 0);                               \
        shmem_quiet();                                                                    \
        shmem_ctx_quiet(ctx);                                                             \
        for (int k = 0; k < 4; k++)                                                       \
            CHECK(fetched[k] < (T) (12 * npes), #NAME ": nbi fetch %d", k);               \
        old = shmem_atomic_compare_swap(a + 1, VALUE(T, HIGH, 0), VALUE(T, HIGH, 1), right); \
        CHECK(old == VALUE(T, HIGH, 0), #NAME ": compare_swap");                          \
        old = shmem_atomic_compare_swap(ctx, a + 1, VALUE(T, HIGH, 1), VALUE(T, HIGH, 2), \
                                        right);                                           \
        CHECK(old == VALUE(T, HIGH, 1), #NAME ": ctx compare_swap");                      \
        old = shmem_atomic_compare_swap(a + 1, (T) 2, (T) 0, right);                      \
        CHECK(old == VALUE(T, HIGH, 2), #NAME ": compare_swap compared the high bit");    \
        shmem_atomic_compare_swap_nbi(fetched, a + 1, VALUE(T, HIGH, 2), VALUE(T, HIGH, 3), \
                                      right);                                             \
        shmem_quiet();                                                                    \
        shmem_atomic_compare_swap_nbi(ctx, fetched + 1, a + 1, VALUE(T, HIGH, 3),         \
                                      VALUE(T, HIGH, 4), right);                          \
        shmem_ctx_quiet(ctx);                                                             \
        CHECK(fetched[0] == VALUE(T, HIGH, 2) && fetched[1] == VALUE(T, HIGH, 3),         \
              #NAME ": compare_swap_nbi");                                                \
        shmem_barrier_all();                                                              \
        CHECK(me != 0 || a[0] == (T) (12 * npes), #NAME ": 12 adds per PE");              \
        CHECK(a[1] == VALUE(T, HIGH, 4), #NAME ": the compare_swap chain");               \
        shmem_barrier_all();                                                              \
        shmem_free(a);                                                                    \
    }

/* Extended AMOs: set, fetch and swap on the right neighbour's e[0] and e[1]. */
#define EXT_AMO_TEST(T, NAME, HIGH)                                                       \
    static void ext_amo_##NAME(void) {                                                    \
        T *e = shmem_calloc(2, sizeof(T));                                                \
        T fetched[2], old;                                                                \
        CHECK(e != NULL, #NAME ": calloc");                                               \
        shmem_barrier_all();                                                              \
        shmem_atomic_set(e, VALUE(T, HIGH, me + 1), right);                               \
        shmem_atomic_set(ctx, e + 1, VALUE(T, HIGH, me + 2), right);                      \
        shmem_quiet();                                                                    \
        shmem_ctx_quiet(ctx);                                                             \
        shmem_barrier_all();                                                              \
        CHECK(shmem_atomic_fetch(e, me) == VALUE(T, HIGH, left + 1), #NAME ": fetch");    \
        CHECK(shmem_atomic_fetch(ctx, e + 1, me) == VALUE(T, HIGH, left + 2),             \
              #NAME ": ctx fetch");                                                       \
        shmem_barrier_all(); /* before the left neighbour swaps e */                      \
        shmem_atomic_fetch_nbi(fetched, e, right);                                        \
        shmem_atomic_fetch_nbi(ctx, fetched + 1, e + 1, right);                           \
        shmem_quiet();                                                                    \
        shmem_ctx_quiet(ctx);                                                             \
        CHECK(fetched[0] == VALUE(T, HIGH, me + 1) && fetched[1] == VALUE(T, HIGH, me + 2), \
              #NAME ": fetch_nbi");                                                       \
        old = shmem_atomic_swap(e, VALUE(T, HIGH, 7), right);                             \
        CHECK(old == VALUE(T, HIGH, me + 1), #NAME ": swap");                             \
        old = shmem_atomic_swap(ctx, e + 1, VALUE(T, HIGH, 8), right);                    \
        CHECK(old == VALUE(T, HIGH, me + 2), #NAME ": ctx swap");                         \
        shmem_atomic_swap_nbi(fetched, e, (T) 9, right);                                  \
        shmem_quiet();                                                                    \
        shmem_atomic_swap_nbi(ctx, fetched + 1, e + 1, (T) 10, right);                    \
        shmem_ctx_quiet(ctx);                                                             \
        CHECK(fetched[0] == VALUE(T, HIGH, 7) && fetched[1] == VALUE(T, HIGH, 8),         \
              #NAME ": swap_nbi");                                                        \
        shmem_barrier_all();                                                              \
        CHECK(e[0] == (T) 9 && e[1] == (T) 10, #NAME ": swapped in");                     \
        shmem_barrier_all();                                                              \
        shmem_free(e);                                                                    \
    }

/* Bitwise AMOs on PE 0's b: element 6 * op + form, op and (from all ones), or, xor (from
 * zero); every PE clears or sets its own bit and the high bit. */
#define BIT_AMO_TEST(T, NAME, HIGH)                                                       \
    static void bit_amo_##NAME(void) {                                                    \
        T *b = shmem_calloc(18, sizeof(T));                                               \
        T fetched[6];                                                                     \
        T mine = (T) ((T) 1 << me), all = (T) (((T) 1 << npes) - 1);                      \
        CHECK(b != NULL, #NAME ": calloc");                                               \
        for (int f = 0; f < 6; f++)                                                       \
            b[f] = (T) ~(T) 0;                                                            \
        shmem_barrier_all();                                                              \
        shmem_atomic_and(b, (T) ~mine, 0);                                                \
        shmem_atomic_and(ctx, b + 1, (T) ~mine, 0);                                       \
        fetched[0] = shmem_atomic_fetch_and(b + 2, (T) ~mine, 0);                         \
        fetched[1] = shmem_atomic_fetch_and(ctx, b + 3, (T) ~mine, 0);                    \
        shmem_atomic_fetch_and_nbi(fetched + 2, b + 4, (T) ~mine, 0);                     \
        shmem_atomic_fetch_and_nbi(ctx, fetched + 3, b + 5, (T) ~mine, 0);                \
        shmem_quiet();                                                                    \
        shmem_ctx_quiet(ctx);                                                             \
        for (int k = 0; k < 4; k++)                                                       \
            CHECK((fetched[k] & (T) HIGH) && (fetched[k] & mine), #NAME ": fetch_and %d", k); \
        shmem_atomic_or(b + 6, (T) (mine | (T) HIGH), 0);                                 \
        shmem_atomic_or(ctx, b + 7, (T) (mine | (T) HIGH), 0);                            \
        fetched[0] = shmem_atomic_fetch_or(b + 8, (T) (mine | (T) HIGH), 0);              \
        fetched[1] = shmem_atomic_fetch_or(ctx, b + 9, (T) (mine | (T) HIGH), 0);         \
        shmem_atomic_fetch_or_nbi(fetched + 2, b + 10, (T) (mine | (T) HIGH), 0);         \
        shmem_atomic_fetch_or_nbi(ctx, fetched + 3, b + 11, (T) (mine | (T) HIGH), 0);    \
        shmem_quiet();                                                                    \
        shmem_ctx_quiet(ctx);                                                             \
        for (int k = 0; k < 4; k++)                                                       \
            CHECK(!(fetched[k] & mine), #NAME ": fetch_or %d saw its own bit", k);        \
        shmem_atomic_xor(b + 12, mine, 0);                                                \
        shmem_atomic_xor(ctx, b + 13, mine, 0);                                           \
        fetched[0] = shmem_atomic_fetch_xor(b + 14, mine, 0);                             \
        fetched[1] = shmem_atomic_fetch_xor(ctx, b + 15, mine, 0);                        \
        shmem_atomic_fetch_xor_nbi(fetched + 2, b + 16, mine, 0);                         \
        shmem_atomic_fetch_xor_nbi(ctx, fetched + 3, b + 17, mine, 0);                    \
        shmem_quiet();                                                                    \
        shmem_ctx_quiet(ctx);                                                             \
        for (int k = 0; k < 4; k++)                                                       \
            CHECK(!(fetched[k] & mine), #NAME ": fetch_xor %d saw its own bit", k);       \
        shmem_barrier_all();                                                              \
        for (int f = 0; me == 0 && f < 6; f++) {                                          \
            CHECK(b[f] == (T) ~all, #NAME ": and form %d", f);                            \
            CHECK(b[6 + f] == (T) (all | (T) HIGH), #NAME ": or form %d", f);             \
            CHECK(b[12 + f] == all, #NAME ": xor form %d", f);                            \
        }                                                                                 \
        shmem_barrier_all();                                                              \
        shmem_free(b);                                                                    \
    }

STD_AMO_TYPES(STD_AMO_TEST)
EXT_AMO_TYPES(EXT_AMO_TEST)
BIT_AMO_TYPES(BIT_AMO_TEST)

/* The deprecated generic names: OpenSHMEM 1.3's C11 spellings, deprecated by 1.4 and still
 * listed by 1.5 (Annex "Deprecated API"); they have no context form. */
#define DEPRECATED_EXT_TEST(T, NAME, HIGH)                                                \
    static void deprecated_ext_##NAME(void) {                                             \
        T *d = shmem_calloc(1, sizeof(T));                                                \
        CHECK(d != NULL, #NAME ": calloc");                                               \
        shmem_barrier_all();                                                              \
        shmem_set(d, VALUE(T, HIGH, me + 1), right);                                      \
        shmem_barrier_all();                                                              \
        CHECK(shmem_fetch(d, me) == VALUE(T, HIGH, left + 1), #NAME ": shmem_fetch");     \
        shmem_barrier_all(); /* before the left neighbour swaps d */                      \
        CHECK(shmem_swap(d, (T) 5, right) == VALUE(T, HIGH, me + 1), #NAME ": shmem_swap"); \
        shmem_barrier_all();                                                              \
        CHECK(*d == (T) 5, #NAME ": swapped in");                                         \
        shmem_barrier_all();                                                              \
        shmem_free(d);                                                                    \
    }

#define DEPRECATED_STD_TEST(T, NAME, HIGH)                                                \
    static void deprecated_std_##NAME(void) {                                             \
        T *d = shmem_calloc(2, sizeof(T));                                                \
        CHECK(d != NULL, #NAME ": calloc");                                               \
        d[1] = VALUE(T, HIGH, 0);                                                         \
        shmem_barrier_all();                                                              \
        shmem_add(d, (T) 1, 0);                                                           \
        shmem_inc(d, 0);                                                                  \
        CHECK(shmem_fadd(d, (T) 1, 0) < (T) (4 * npes), #NAME ": shmem_fadd");            \
        CHECK(shmem_finc(d, 0) < (T) (4 * npes), #NAME ": shmem_finc");                   \
        CHECK(shmem_cswap(d + 1, VALUE(T, HIGH, 0), VALUE(T, HIGH, 1), right) ==          \
                  VALUE(T, HIGH, 0),                                                      \
              #NAME ": shmem_cswap");                                                     \
        shmem_barrier_all();                                                              \
        CHECK(me != 0 || d[0] == (T) (4 * npes), #NAME ": 4 adds per PE");                \
        CHECK(d[1] == VALUE(T, HIGH, 1), #NAME ": cswap stored");                         \
        shmem_barrier_all();                                                              \
        shmem_free(d);                                                                    \
    }

DEPRECATED_EXT_TYPES(DEPRECATED_EXT_TEST)
DEPRECATED_STD_TYPES(DEPRECATED_STD_TEST)

int main(void) {
    shmem_init();
    ring_of_pes(&me, &npes, &right, &left);
    CHECK(npes <= 8, "the bit masks are made for at most 8 PEs");
    CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");
#define RUN_STD(T, NAME, HIGH) std_amo_##NAME();
#define RUN_EXT(T, NAME, HIGH) ext_amo_##NAME();
#define RUN_BIT(T, NAME, HIGH) bit_amo_##NAME();
#define RUN_DEPRECATED_EXT(T, NAME, HIGH) deprecated_ext_##NAME();
#define RUN_DEPRECATED_STD(T, NAME, HIGH) deprecated_std_##NAME();
    STD_AMO_TYPES(RUN_STD)
    EXT_AMO_TYPES(RUN_EXT)
    BIT_AMO_TYPES(RUN_BIT)
    DEPRECATED_EXT_TYPES(RUN_DEPRECATED_EXT)
    DEPRECATED_STD_TYPES(RUN_DEPRECATED_STD)
    shmem_ctx_destroy(ctx);
    FINISH("generic_amo");
    return 0;
}
