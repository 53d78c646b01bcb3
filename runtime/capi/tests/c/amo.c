/* amo: atomic memory operations.
 * Every standard AMO type through fetch_add/add/fetch_inc/inc from all PEs onto PE 0 (the
 * count proves atomicity), then fetch/set/swap/compare_swap on the right neighbour; the
 * extended types float and double through fetch/set/swap; the bitwise types through
 * and/or/xor and their fetching forms; the non-blocking fetching AMOs completed by quiet;
 * the deprecated names (shmem_long_fadd, finc, add, inc, cswap, swap, fetch, set). */
#include <stddef.h>
#include <stdint.h>

#include "check.h"

enum { ROUNDS = 25 };

static int me, n, right, left;

#define STD_AMO(T, NAME)                                                                    \
    static void amo_##NAME(void) {                                                          \
        T *counter = (T *)shmem_calloc(2, sizeof(T));                                       \
        CHECK(counter != NULL, "shmem_calloc for " #NAME);                                  \
        shmem_barrier_all();                                                                \
        T seen_max = 0;                                                                     \
        for (int r = 0; r < ROUNDS; r++) {                                                  \
            T before = shmem_##NAME##_atomic_fetch_add(&counter[0], (T)2, 0);               \
            CHECK(before % 2 == 0 && before < (T)(2 * ROUNDS * n + 6 * ROUNDS * n),         \
                  "shmem_" #NAME "_atomic_fetch_add gave %lld", (long long)before);         \
            if (before > seen_max)                                                          \
                seen_max = before;                                                          \
            shmem_##NAME##_atomic_add(&counter[0], (T)2, 0);                                \
            T inc_before = shmem_##NAME##_atomic_fetch_inc(&counter[1], 0);                 \
            CHECK(inc_before < (T)(2 * ROUNDS * n), "fetch_inc gave %lld",                  \
                  (long long)inc_before);                                                   \
            shmem_##NAME##_atomic_inc(&counter[1], 0);                                      \
        }                                                                                   \
        shmem_barrier_all();                                                                \
        if (me == 0) {                                                                      \
            CHECK(counter[0] == (T)(4 * ROUNDS * n), "shmem_" #NAME "_atomic_(fetch_)add "  \
                  "total %lld", (long long)counter[0]);                                     \
            CHECK(counter[1] == (T)(2 * ROUNDS * n), "shmem_" #NAME "_atomic_(fetch_)inc "  \
                  "total %lld", (long long)counter[1]);                                     \
        }                                                                                   \
        CHECK(shmem_##NAME##_atomic_fetch(&counter[0], 0) == (T)(4 * ROUNDS * n),           \
              "shmem_" #NAME "_atomic_fetch");                                              \
        shmem_barrier_all();                                                                \
        shmem_##NAME##_atomic_set(&counter[0], (T)(me + 10), right);                        \
        shmem_barrier_all();                                                                \
        CHECK(counter[0] == (T)(left + 10), "shmem_" #NAME "_atomic_set");                  \
        shmem_barrier_all();                                                                \
        T old = shmem_##NAME##_atomic_swap(&counter[0], (T)(me + 20), right);               \
        CHECK(old == (T)(me + 10), "shmem_" #NAME "_atomic_swap returned %lld",             \
              (long long)old);                                                              \
        shmem_barrier_all();                                                                \
        CHECK(counter[0] == (T)(left + 20), "shmem_" #NAME "_atomic_swap stored");          \
        shmem_barrier_all();                                                                \
        /* A failing compare leaves the value; a matching one replaces it. */              \
        old = shmem_##NAME##_atomic_compare_swap(&counter[0], (T)99, (T)1, right);          \
        CHECK(old == (T)(me + 20), "compare_swap (no match) returned %lld", (long long)old);\
        old = shmem_##NAME##_atomic_compare_swap(&counter[0], (T)(me + 20), (T)(me + 30),   \
                                                 right);                                    \
        CHECK(old == (T)(me + 20), "compare_swap (match) returned %lld", (long long)old);    \
        shmem_barrier_all();                                                                \
        CHECK(counter[0] == (T)(left + 30), "shmem_" #NAME "_atomic_compare_swap stored");  \
        shmem_barrier_all();                                                                \
        shmem_free(counter);                                                                \
    }

#define STD_AMO_TYPES(X)                                                                    \
    X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint)                  \
    X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32)              \
    X(int64_t, int64) X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size)               \
    X(ptrdiff_t, ptrdiff)
STD_AMO_TYPES(STD_AMO)

#define EXT_AMO(T, NAME)                                                                    \
    static void amo_ext_##NAME(void) {                                                      \
        T *x = (T *)shmem_malloc(sizeof(T));                                                \
        *x = (T)0.5;                                                                        \
        shmem_barrier_all();                                                                \
        shmem_##NAME##_atomic_set(x, (T)me + (T)0.25, right);                               \
        shmem_barrier_all();                                                                \
        CHECK(*x == (T)left + (T)0.25, "shmem_" #NAME "_atomic_set");                       \
        CHECK(shmem_##NAME##_atomic_fetch(x, right) == (T)me + (T)0.25,                     \
              "shmem_" #NAME "_atomic_fetch");                                              \
        shmem_barrier_all();                                                                \
        T old = shmem_##NAME##_atomic_swap(x, (T)-1.5, right);                              \
        CHECK(old == (T)me + (T)0.25, "shmem_" #NAME "_atomic_swap returned %g",            \
              (double)old);                                                                 \
        shmem_barrier_all();                                                                \
        CHECK(*x == (T)-1.5, "shmem_" #NAME "_atomic_swap stored");                         \
        shmem_barrier_all();                                                                \
        shmem_free(x);                                                                      \
    }
EXT_AMO(float, float)
EXT_AMO(double, double)

#define BIT_AMO(T, NAME)                                                                    \
    static void amo_bit_##NAME(void) {                                                      \
        T *w = (T *)shmem_malloc(3 * sizeof(T));                                            \
        w[0] = 0;                                                                           \
        w[1] = (T)~(T)0;                                                                    \
        w[2] = 0;                                                                           \
        shmem_barrier_all();                                                                \
        T bit = (T)((T)1 << me);                                                            \
        shmem_##NAME##_atomic_or(&w[0], bit, 0);                                            \
        shmem_##NAME##_atomic_and(&w[1], (T)~bit, 0);                                       \
        shmem_##NAME##_atomic_xor(&w[2], bit, 0);                                           \
        shmem_barrier_all();                                                                \
        T all = (T)(((T)1 << n) - 1);                                                       \
        if (me == 0) {                                                                      \
            CHECK(w[0] == all, "shmem_" #NAME "_atomic_or gave %llx",                       \
                  (unsigned long long)w[0]);                                                \
            CHECK(w[1] == (T)~all, "shmem_" #NAME "_atomic_and");                           \
            CHECK(w[2] == all, "shmem_" #NAME "_atomic_xor");                               \
        }                                                                                   \
        shmem_barrier_all();                                                                \
        /* Each PE takes its bit back out; the fetched values show the bit was there. */    \
        T f = shmem_##NAME##_atomic_fetch_xor(&w[0], bit, 0);                               \
        CHECK((f & bit) != 0, "fetch_xor: bit %d missing", me);                             \
        f = shmem_##NAME##_atomic_fetch_or(&w[1], bit, 0);                                  \
        CHECK((f & bit) == 0, "fetch_or: bit %d already set", me);                          \
        f = shmem_##NAME##_atomic_fetch_and(&w[2], (T)~bit, 0);                             \
        CHECK((f & bit) != 0, "fetch_and: bit %d missing", me);                             \
        shmem_barrier_all();                                                                \
        if (me == 0)                                                                        \
            CHECK(w[0] == 0 && w[1] == (T)~(T)0 && w[2] == 0, "fetching bitwise totals");  \
        shmem_barrier_all();                                                                \
        shmem_free(w);                                                                      \
    }
#define BIT_AMO_TYPES(X)                                                                    \
    X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong)          \
    X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32) X(uint64_t, uint64)
BIT_AMO_TYPES(BIT_AMO)

/* Non-blocking fetching AMOs: the fetched values are there after quiet. */
static void amo_nbi(void) {
    long *x = shmem_calloc(4, sizeof(long));
    unsigned int *u = shmem_calloc(1, sizeof(unsigned int));
    long fetched[6];
    unsigned int ufetched = 0;
    shmem_barrier_all();
    shmem_long_atomic_fetch_add_nbi(&fetched[0], &x[0], 5, 0);
    shmem_long_atomic_fetch_inc_nbi(&fetched[1], &x[1], 0);
    shmem_uint_atomic_fetch_or_nbi(&ufetched, u, 1u << me, 0);
    shmem_quiet();
    CHECK(fetched[0] % 5 == 0 && fetched[0] < 5 * n, "fetch_add_nbi fetched %ld", fetched[0]);
    CHECK(fetched[1] < n, "fetch_inc_nbi fetched %ld", fetched[1]);
    CHECK((ufetched & (1u << me)) == 0, "fetch_or_nbi saw its own bit");
    shmem_barrier_all();
    if (me == 0)
        CHECK(x[0] == 5 * n && x[1] == n && *u == (1u << n) - 1, "nbi totals");
    shmem_barrier_all();
    shmem_long_atomic_set(&x[2], me, right);
    shmem_barrier_all();
    shmem_long_atomic_fetch_nbi(&fetched[2], &x[2], right);
    shmem_long_atomic_swap_nbi(&fetched[3], &x[3], 40 + me, right);
    shmem_quiet();
    CHECK(fetched[2] == me && fetched[3] == 0, "fetch_nbi %ld swap_nbi %ld", fetched[2],
          fetched[3]);
    shmem_long_atomic_compare_swap_nbi(&fetched[4], &x[3], 40 + me, 50 + me, right);
    shmem_int64_atomic_fetch_xor_nbi(&fetched[5], &x[2], 0, right); /* long has no bitwise AMOs */
    shmem_quiet();
    CHECK(fetched[4] == 40 + me && fetched[5] == me, "compare_swap_nbi %ld fetch_xor_nbi %ld",
          fetched[4], fetched[5]);
    shmem_barrier_all();
    CHECK(x[3] == 50 + left, "compare_swap_nbi stored %ld", x[3]);
    shmem_barrier_all();
    shmem_free(u);
    shmem_free(x);
}

/* The names deprecated in 1.4, still in 1.5 and used by older programs. */
static void amo_deprecated(void) {
    long *x = shmem_calloc(2, sizeof(long));
    int *i = shmem_calloc(1, sizeof(int));
    double *d = shmem_calloc(1, sizeof(double));
    shmem_barrier_all();
    long before = shmem_long_fadd(&x[0], 3, 0);
    CHECK(before % 3 == 0, "shmem_long_fadd gave %ld", before);
    shmem_long_add(&x[0], 3, 0);
    CHECK(shmem_long_finc(&x[1], 0) < 2 * n, "shmem_long_finc");
    shmem_long_inc(&x[1], 0);
    shmem_int_add(i, 1, 0);
    CHECK(shmem_int_fadd(i, 1, 0) < 2 * n, "shmem_int_fadd");
    shmem_barrier_all();
    CHECK(shmem_long_fetch(&x[0], 0) == 6 * n && shmem_long_fetch(&x[1], 0) == 2 * n,
          "deprecated add totals");
    CHECK(shmem_int_fetch(i, 0) == 2 * n, "shmem_int_fetch");
    shmem_barrier_all();
    shmem_long_set(&x[0], me, right);
    shmem_double_set(d, 0.5 * me, right);
    shmem_barrier_all();
    CHECK(x[0] == left && *d == 0.5 * left, "shmem_long_set / shmem_double_set");
    shmem_barrier_all();
    CHECK(shmem_long_swap(&x[0], 100 + me, right) == me, "shmem_long_swap");
    CHECK(shmem_double_swap(d, 1.0, right) == 0.5 * me, "shmem_double_swap");
    CHECK(shmem_long_cswap(&x[0], 100 + me, 200 + me, right) == 100 + me, "shmem_long_cswap");
    shmem_barrier_all();
    CHECK(x[0] == 200 + left && *d == 1.0, "swap/cswap stored");
    shmem_barrier_all();
    shmem_free(d);
    shmem_free(i);
    shmem_free(x);
}

int main(void) {
    shmem_init();
    ring_of_pes(&me, &n, &right, &left);
#define CALL(T, NAME) amo_##NAME();
    STD_AMO_TYPES(CALL)
#undef CALL
#define CALL(T, NAME) amo_bit_##NAME();
    BIT_AMO_TYPES(CALL)
    amo_ext_float();
    amo_ext_double();
    amo_nbi();
    amo_deprecated();
    FINISH("amo");
    return 0;
}
