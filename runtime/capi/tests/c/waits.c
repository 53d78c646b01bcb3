/* waits: point-to-point synchronization, each wait satisfied by the left neighbour's put (at
 * one PE, by the PE's own put).
 * wait_until and test over several p2p types; wait_until_all/any/some and test_all/any/some
 * with a status mask; their _vector forms; the SIZE_MAX and 0 answers when nothing is ready. */
#include <stddef.h>
#include <stdint.h>

#include "check.h"

enum { NV = 4 };

static int me, n, right, left;

#define WAIT_TYPE(T, NAME)                                                                  \
    static void wait_##NAME(void) {                                                         \
        T *v = (T *)shmem_calloc(2, sizeof(T));                                             \
        CHECK(shmem_##NAME##_test(&v[0], SHMEM_CMP_NE, 0) == 0, #NAME "_test too early");   \
        shmem_barrier_all();                                                                \
        shmem_##NAME##_p(&v[1], (T)9, right);                            \
        shmem_fence();                                                                      \
        shmem_##NAME##_p(&v[0], (T)(me + 1), right);                                        \
        shmem_##NAME##_wait_until(&v[0], SHMEM_CMP_EQ, (T)(left + 1));                      \
        CHECK(v[1] == (T)9, "data before flag (" #NAME ")");                                \
        shmem_##NAME##_wait_until(&v[0], SHMEM_CMP_GE, (T)1);                               \
        shmem_##NAME##_wait_until(&v[0], SHMEM_CMP_NE, (T)0);                               \
        shmem_##NAME##_wait_until(&v[0], SHMEM_CMP_GT, (T)0);                               \
        shmem_##NAME##_wait_until(&v[0], SHMEM_CMP_LE, (T)(left + 1));                      \
        shmem_##NAME##_wait_until(&v[0], SHMEM_CMP_LT, (T)(left + 2));                      \
        shmem_barrier_all();                                                                \
        shmem_##NAME##_p(&v[1], (T)5, right);                                               \
        while (!shmem_##NAME##_test(&v[1], SHMEM_CMP_EQ, (T)5))                             \
            ;                                                                               \
        shmem_barrier_all();                                                                \
        shmem_free(v);                                                                      \
    }

#define WAIT_TYPES(X)                                                                       \
    X(short, short) X(int, int) X(long, long) X(long long, longlong)                        \
    X(unsigned short, ushort) X(unsigned int, uint) X(unsigned long, ulong)                 \
    X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64)                    \
    X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)
WAIT_TYPES(WAIT_TYPE)

/* The multi-element forms on an array of NV ints; status[i] != 0 leaves element i out. */
static void wait_multi(void) {
    int *iv = shmem_calloc(NV, sizeof(int));
    int status[NV] = {0, 0, 1, 0};
    size_t idx[NV];
    int ones[NV] = {1, 1, 1, 1};
    shmem_barrier_all();

    /* Nothing is set yet: any answers SIZE_MAX, some answers 0, all answers 0. */
    CHECK(shmem_int_test_any(iv, NV, NULL, SHMEM_CMP_EQ, 1) == SIZE_MAX, "test_any early");
    CHECK(shmem_int_test_some(iv, NV, idx, NULL, SHMEM_CMP_EQ, 1) == 0, "test_some early");
    CHECK(shmem_int_test_all(iv, NV, NULL, SHMEM_CMP_EQ, 1) == 0, "test_all early");
    int all_masked[NV] = {1, 1, 1, 1};
    CHECK(shmem_int_wait_until_any(iv, NV, all_masked, SHMEM_CMP_EQ, 1) == SIZE_MAX,
          "wait_until_any with every element masked");
    shmem_barrier_all();

    /* any: only element 3 is set. */
    shmem_int_p(&iv[3], 1, right);
    size_t which = shmem_int_wait_until_any(iv, NV, status, SHMEM_CMP_EQ, 1);
    CHECK(which == 3, "wait_until_any gave %zu", which);
    CHECK(shmem_int_test_any(iv, NV, status, SHMEM_CMP_EQ, 1) == 3, "test_any");
    shmem_barrier_all();

    /* some: elements 0 and 1 are set; collect until both were reported. */
    shmem_int_p(&iv[0], 1, right);
    shmem_int_p(&iv[1], 1, right);
    int seen[NV] = {0, 0, 0, 0};
    while (!(seen[0] && seen[1])) {
        size_t k = shmem_int_wait_until_some(iv, 2, idx, NULL, SHMEM_CMP_EQ, 1);
        CHECK(k >= 1 && k <= 2, "wait_until_some gave %zu", k);
        for (size_t j = 0; j < k; j++) {
            CHECK(idx[j] < 2, "wait_until_some index %zu", idx[j]);
            seen[idx[j]] = 1;
        }
    }
    CHECK(shmem_int_test_some(iv, NV, idx, status, SHMEM_CMP_EQ, 1) == 3, "test_some count");
    shmem_barrier_all();

    /* all: element 2 is masked and never set, the rest are. */
    shmem_int_wait_until_all(iv, NV, status, SHMEM_CMP_EQ, 1);
    CHECK(shmem_int_test_all(iv, NV, status, SHMEM_CMP_EQ, 1) == 1, "test_all");
    CHECK(shmem_int_test_all(iv, NV, NULL, SHMEM_CMP_EQ, 1) == 0, "test_all saw masked");
    shmem_barrier_all();

    /* vector forms: element i waits for the value 10 + i. */
    int want[NV] = {10, 11, 12, 13};
    for (int i = 0; i < NV; i++)
        shmem_int_p(&iv[i], 10 + i, right);
    shmem_int_wait_until_all_vector(iv, NV, NULL, SHMEM_CMP_EQ, want);
    CHECK(shmem_int_wait_until_any_vector(iv, NV, status, SHMEM_CMP_EQ, want) != 2,
          "wait_until_any_vector chose a masked element");
    CHECK(shmem_int_wait_until_some_vector(iv, NV, idx, status, SHMEM_CMP_EQ, want) == 3,
          "wait_until_some_vector");
    CHECK(shmem_int_test_all_vector(iv, NV, NULL, SHMEM_CMP_EQ, want) == 1, "test_all_vector");
    CHECK(shmem_int_test_any_vector(iv, NV, NULL, SHMEM_CMP_NE, want) == SIZE_MAX,
          "test_any_vector");
    CHECK(shmem_int_test_some_vector(iv, NV, idx, NULL, SHMEM_CMP_GE, want) == NV,
          "test_some_vector");
    CHECK(shmem_int_test_all_vector(iv, NV, NULL, SHMEM_CMP_EQ, ones) == 0,
          "test_all_vector against other values");
    shmem_barrier_all();
    shmem_free(iv);
}

int main(void) {
    shmem_init();
    ring_of_pes(&me, &n, &right, &left);
#define CALL(T, NAME) wait_##NAME();
    WAIT_TYPES(CALL)
    wait_multi();
    FINISH("waits");
    return 0;
}
