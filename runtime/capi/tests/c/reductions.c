/* reductions: the team-based reductions and scans.
 * sum/prod/max/min over integer and floating types, and/or/xor over the bitwise types, with
 * several elements, in place (dest == source) too; sum_inscan and sum_exscan (1.6; the
 * exclusive scan's dest on the first PE is not checked: the spec leaves it unspecified). */
#include <stddef.h>
#include <stdint.h>

#include "check.h"

enum { NR = 8 };

static int me, n;

/* PE p contributes p + 1 + i at element i: sums, products, maxima and minima are known. */
#define ARITH(T, NAME)                                                                      \
    static void reduce_##NAME(void) {                                                       \
        T *src = (T *)shmem_malloc(NR * sizeof(T)), *dst = (T *)shmem_malloc(NR * sizeof(T));\
        for (int i = 0; i < NR; i++)                                                        \
            src[i] = (T)(me + 1 + i);                                                       \
        shmem_barrier_all();                                                                \
        CHECK(shmem_##NAME##_sum_reduce(SHMEM_TEAM_WORLD, dst, src, NR) == 0, #NAME " sum");\
        for (int i = 0; i < NR; i++)                                                        \
            CHECK(dst[i] == (T)(n * (n + 1) / 2 + n * i), #NAME "_sum_reduce element %d", i);\
        CHECK(shmem_##NAME##_max_reduce(SHMEM_TEAM_WORLD, dst, src, NR) == 0, #NAME " max");\
        for (int i = 0; i < NR; i++)                                                        \
            CHECK(dst[i] == (T)(n + i), #NAME "_max_reduce element %d", i);                 \
        CHECK(shmem_##NAME##_min_reduce(SHMEM_TEAM_WORLD, dst, src, NR) == 0, #NAME " min");\
        for (int i = 0; i < NR; i++)                                                        \
            CHECK(dst[i] == (T)(1 + i), #NAME "_min_reduce element %d", i);                 \
        CHECK(shmem_##NAME##_prod_reduce(SHMEM_TEAM_WORLD, dst, src, 2) == 0, #NAME " prod");\
        T fact = 1;                                                                         \
        for (int p = 1; p <= n; p++)                                                        \
            fact = (T)(fact * p);                                                           \
        CHECK(dst[0] == fact, #NAME "_prod_reduce");                                        \
        shmem_barrier_all();                                                                \
        /* In place. */                                                                     \
        CHECK(shmem_##NAME##_sum_reduce(SHMEM_TEAM_WORLD, src, src, NR) == 0, "in place");  \
        for (int i = 0; i < NR; i++)                                                        \
            CHECK(src[i] == (T)(n * (n + 1) / 2 + n * i), #NAME " in-place sum %d", i);     \
        shmem_barrier_all();                                                                \
        shmem_free(dst);                                                                    \
        shmem_free(src);                                                                    \
    }
#define ARITH_TYPES(X)                                                                      \
    X(char, char) X(short, short) X(int, int) X(long, long) X(long long, longlong)          \
    X(unsigned int, uint) X(unsigned long, ulong) X(int32_t, int32) X(int64_t, int64)       \
    X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff) X(float, float)               \
    X(double, double) X(long double, longdouble)
ARITH_TYPES(ARITH)

#define BITWISE(T, NAME)                                                                    \
    static void bits_##NAME(void) {                                                         \
        T *src = (T *)shmem_malloc(2 * sizeof(T)), *dst = (T *)shmem_malloc(2 * sizeof(T)); \
        T bit = (T)((T)1 << me), all = (T)(((T)1 << n) - 1);                                \
        src[0] = bit;                                                                       \
        src[1] = (T)~bit;                                                                   \
        shmem_barrier_all();                                                                \
        CHECK(shmem_##NAME##_or_reduce(SHMEM_TEAM_WORLD, dst, src, 2) == 0, "or");          \
        CHECK(dst[0] == all && dst[1] == (T)~(T)(n == 1 ? bit : 0), #NAME "_or_reduce");           \
        CHECK(shmem_##NAME##_and_reduce(SHMEM_TEAM_WORLD, dst, src, 2) == 0, "and");        \
        CHECK(dst[0] == (n == 1 ? bit : 0) && dst[1] == (T)~all, #NAME "_and_reduce");      \
        CHECK(shmem_##NAME##_xor_reduce(SHMEM_TEAM_WORLD, dst, src, 1) == 0, "xor");        \
        CHECK(dst[0] == all, #NAME "_xor_reduce");                                          \
        shmem_barrier_all();                                                                \
        shmem_free(dst);                                                                    \
        shmem_free(src);                                                                    \
    }
#define BITWISE_TYPES(X)                                                                    \
    X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint)                 \
    X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32)              \
    X(uint8_t, uint8) X(uint64_t, uint64) X(size_t, size)
BITWISE_TYPES(BITWISE)

static void scans(void) {
    long *src = shmem_malloc(NR * sizeof(long)), *dst = shmem_malloc(NR * sizeof(long));
    double *dsrc = shmem_malloc(sizeof(double)), *ddst = shmem_malloc(sizeof(double));
    for (int i = 0; i < NR; i++)
        src[i] = me + 1 + i;
    *dsrc = 0.5 * (me + 1);
    shmem_barrier_all();
    /* Inclusive at PE p: sum over q <= p of (q + 1 + i). */
    CHECK(shmem_long_sum_inscan(SHMEM_TEAM_WORLD, dst, src, NR) == 0, "long_sum_inscan");
    for (int i = 0; i < NR; i++)
        CHECK(dst[i] == (long)(me + 1) * (me + 2) / 2 + (long)(me + 1) * i,
              "inscan element %d: %ld", i, dst[i]);
    CHECK(shmem_double_sum_inscan(SHMEM_TEAM_WORLD, ddst, dsrc, 1) == 0, "double_sum_inscan");
    CHECK(*ddst == 0.25 * (me + 1) * (me + 2), "double inscan %g", *ddst);
    CHECK(shmem_long_sum_exscan(SHMEM_TEAM_WORLD, dst, src, NR) == 0, "long_sum_exscan");
    if (me > 0)
        for (int i = 0; i < NR; i++)
            CHECK(dst[i] == (long)me * (me + 1) / 2 + (long)me * i, "exscan element %d: %ld", i,
                  dst[i]);
    shmem_barrier_all();
    shmem_free(ddst);
    shmem_free(dsrc);
    shmem_free(dst);
    shmem_free(src);
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    n = shmem_n_pes();
#define CALL(T, NAME) reduce_##NAME();
    ARITH_TYPES(CALL)
#undef CALL
#define CALL(T, NAME) bits_##NAME();
    BITWISE_TYPES(CALL)
    scans();
    FINISH("reductions");
    return 0;
}
