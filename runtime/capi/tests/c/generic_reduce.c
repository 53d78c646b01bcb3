/* generic_reduce: the C11 generic team reductions and scans on every type of the table
 * "Reduction Types, Names and Supporting Operations for Team-Based Reductions" (OpenSHMEM
 * 1.5 section 9.9, SHMEM_REDUCTIONS, and the 1.6 scans), each typedef'd type through
 * variables declared with the typedef:
 *   and_reduce, or_reduce, xor_reduce on the 14 types with AND, OR, XOR (the table lists
 *     int8_t ... int64_t but not signed char ... long: on LP64 an int64_t variable is a
 *     long, and must still select the 64-bit routine);
 *   max_reduce, min_reduce on the 24 types with MAX, MIN;
 *   sum_reduce, prod_reduce, sum_inscan, sum_exscan on all 26, the complex types included
 *     (the exclusive scan's value at PE 0 is left unchecked, as in reductions.c).
 * The bitwise values carry a high bit, so a routine of the wrong width would show. */
#include "check.h"
#include "generic_tables.h"

static int me, npes;

/* Every PE clears, sets or flips its own bit; OR also sets the high bit. */
#define BIT_TEST(T, NAME, HIGH)                                                           \
    static void bit_##NAME(void) {                                                        \
        T *src = shmem_malloc(3 * sizeof(T)), *dst = shmem_malloc(3 * sizeof(T));         \
        T mine = (T) ((T) 1 << me), all = (T) (((T) 1 << npes) - 1), none = (T) ~all;     \
        CHECK(src && dst, #NAME ": malloc");                                              \
        src[0] = (T) ~mine;                                                               \
        src[1] = (T) (mine | (T) (HIGH));                                                 \
        src[2] = mine;                                                                    \
        CHECK(shmem_and_reduce(SHMEM_TEAM_WORLD, dst, src, 1) == 0, #NAME ": and");       \
        CHECK(shmem_or_reduce(SHMEM_TEAM_WORLD, dst + 1, src + 1, 1) == 0, #NAME ": or"); \
        CHECK(shmem_xor_reduce(SHMEM_TEAM_WORLD, dst + 2, src + 2, 1) == 0, #NAME ": xor"); \
        CHECK(dst[0] == none, #NAME ": and gave %#llx", (unsigned long long) dst[0]);     \
        CHECK(dst[1] == (T) (all | (T) (HIGH)), #NAME ": or gave %#llx",                  \
              (unsigned long long) dst[1]);                                               \
        CHECK(dst[2] == all, #NAME ": xor gave %#llx", (unsigned long long) dst[2]);      \
        shmem_barrier_all();                                                              \
        shmem_free(dst);                                                                  \
        shmem_free(src);                                                                  \
    }

/* PE i contributes i + 1: max npes, min 1. */
#define MINMAX_TEST(T, NAME, HIGH)                                                        \
    static void minmax_##NAME(void) {                                                     \
        T *src = shmem_malloc(sizeof(T)), *dst = shmem_malloc(2 * sizeof(T));             \
        CHECK(src && dst, #NAME ": malloc");                                              \
        *src = (T) (me + 1);                                                              \
        CHECK(shmem_max_reduce(SHMEM_TEAM_WORLD, dst, src, 1) == 0, #NAME ": max");       \
        CHECK(shmem_min_reduce(SHMEM_TEAM_WORLD, dst + 1, src, 1) == 0, #NAME ": min");   \
        CHECK(dst[0] == (T) npes && dst[1] == (T) 1, #NAME ": max/min values");           \
        shmem_barrier_all();                                                              \
        shmem_free(dst);                                                                  \
        shmem_free(src);                                                                  \
    }

/* PE i contributes i + 1: sum n(n+1)/2, product n!, inclusive scan (i+1)(i+2)/2, exclusive
 * scan i(i+1)/2. */
#define ARITH_TEST(T, NAME, HIGH)                                                         \
    static void arith_##NAME(void) {                                                      \
        T *src = shmem_malloc(sizeof(T)), *dst = shmem_malloc(4 * sizeof(T));             \
        int product = 1;                                                                  \
        CHECK(src && dst, #NAME ": malloc");                                              \
        for (int p = 2; p <= npes; p++)                                                   \
            product *= p;                                                                 \
        *src = (T) (me + 1);                                                              \
        CHECK(shmem_sum_reduce(SHMEM_TEAM_WORLD, dst, src, 1) == 0, #NAME ": sum");       \
        CHECK(shmem_prod_reduce(SHMEM_TEAM_WORLD, dst + 1, src, 1) == 0, #NAME ": prod"); \
        CHECK(shmem_sum_inscan(SHMEM_TEAM_WORLD, dst + 2, src, 1) == 0, #NAME ": inscan"); \
        CHECK(shmem_sum_exscan(SHMEM_TEAM_WORLD, dst + 3, src, 1) == 0, #NAME ": exscan"); \
        CHECK(dst[0] == (T) (npes * (npes + 1) / 2), #NAME ": sum value");                \
        CHECK(dst[1] == (T) product, #NAME ": prod value");                               \
        CHECK(dst[2] == (T) ((me + 1) * (me + 2) / 2), #NAME ": inscan value");           \
        CHECK(me == 0 || dst[3] == (T) (me * (me + 1) / 2), #NAME ": exscan value");      \
        shmem_barrier_all();                                                              \
        shmem_free(dst);                                                                  \
        shmem_free(src);                                                                  \
    }

REDUCE_BIT_TYPES(BIT_TEST)
REDUCE_MINMAX_TYPES(MINMAX_TEST)
REDUCE_ARITH_TYPES(ARITH_TEST)

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    CHECK(npes <= 5, "the values are made for at most 5 PEs (5! fits a signed char)");
#define RUN_BIT(T, NAME, HIGH) bit_##NAME();
#define RUN_MINMAX(T, NAME, HIGH) minmax_##NAME();
#define RUN_ARITH(T, NAME, HIGH) arith_##NAME();
    REDUCE_BIT_TYPES(RUN_BIT)
    REDUCE_MINMAX_TYPES(RUN_MINMAX)
    REDUCE_ARITH_TYPES(RUN_ARITH)
    FINISH("generic_reduce");
    return 0;
}
