/* spec_waits: point-to-point synchronization and locks checked against the words of
 * OpenSHMEM 1.5, section 9.10 (wait_until, test and their _all, _any, _some and _vector
 * forms; the deprecated shmem_wait) and section 9.12 (locks): every call returns in every
 * case the text allows (no elements, every element excluded, null ivars with no elements,
 * null status, _some with nothing ready), and the _any forms eventually return every index
 * that satisfies the condition. */
#include <stdint.h>
#include <string.h>

#include "check.h"

#define NV 5

static int flags[NV];
static short shorts[NV];
static long lock;

/* Every form on an empty test set: "If all elements in status are set to 1 or nelems is 0,
 * the wait set is empty": _any returns SIZE_MAX, _some returns 0, _all returns at once and
 * test_all answers 1 (every element of the empty set holds). */
static void empty_sets(void) {
    int excluded[NV] = {1, 1, 1, 1, 1};
    int values[NV] = {1, 1, 1, 1, 1};
    size_t idx[NV];
    for (int pass = 0; pass < 2; pass++) {
        int *ivars = pass ? flags : NULL;
        const int *status = pass ? excluded : NULL;
        size_t nelems = pass ? NV : 0;
        size_t *indices = pass ? idx : NULL;
        shmem_int_wait_until_all(ivars, nelems, status, SHMEM_CMP_EQ, 1);
        shmem_int_wait_until_all_vector(ivars, nelems, status, SHMEM_CMP_EQ, values);
        CHECK(shmem_int_wait_until_any(ivars, nelems, status, SHMEM_CMP_EQ, 1) == SIZE_MAX,
              "wait_until_any, pass %d", pass);
        CHECK(shmem_int_wait_until_any_vector(ivars, nelems, status, SHMEM_CMP_EQ, values) ==
                  SIZE_MAX,
              "wait_until_any_vector, pass %d", pass);
        CHECK(shmem_int_wait_until_some(ivars, nelems, indices, status, SHMEM_CMP_EQ, 1) == 0,
              "wait_until_some, pass %d", pass);
        CHECK(shmem_int_wait_until_some_vector(ivars, nelems, indices, status, SHMEM_CMP_EQ,
                                               values) == 0,
              "wait_until_some_vector, pass %d", pass);
        CHECK(shmem_int_test_all(ivars, nelems, status, SHMEM_CMP_EQ, 1) == 1,
              "test_all, pass %d", pass);
        CHECK(shmem_int_test_all_vector(ivars, nelems, status, SHMEM_CMP_EQ, values) == 1,
              "test_all_vector, pass %d", pass);
        CHECK(shmem_int_test_any(ivars, nelems, status, SHMEM_CMP_EQ, 1) == SIZE_MAX,
              "test_any, pass %d", pass);
        CHECK(shmem_int_test_any_vector(ivars, nelems, status, SHMEM_CMP_EQ, values) == SIZE_MAX,
              "test_any_vector, pass %d", pass);
        CHECK(shmem_int_test_some(ivars, nelems, indices, status, SHMEM_CMP_EQ, 1) == 0,
              "test_some, pass %d", pass);
        CHECK(shmem_int_test_some_vector(ivars, nelems, indices, status, SHMEM_CMP_EQ,
                                         values) == 0,
              "test_some_vector, pass %d", pass);
        CHECK(shmem_short_test_any(pass ? shorts : NULL, nelems, status, SHMEM_CMP_EQ, 1) ==
                  SIZE_MAX,
              "short test_any, pass %d", pass);
        CHECK(shmem_short_wait_until_some(pass ? shorts : NULL, nelems, indices, status,
                                          SHMEM_CMP_EQ, 1) == 0,
              "short wait_until_some, pass %d", pass);
    }
}

/* "If an entry i in ivars within the test set satisfies the test condition, a series of calls
 * to shmem_test_any must eventually return i" (and the same of shmem_wait_until_any): with
 * every entry set and no status array, polling must reach each index. The bound is generous:
 * a fair implementation needs NV calls. */
static void any_takes_turns(void) {
    for (int i = 0; i < NV; i++) {
        flags[i] = 1;
        shorts[i] = 1;
    }
    int seen_test[NV] = {0}, seen_wait[NV] = {0}, seen_short[NV] = {0};
    for (int call = 0; call < 100 * NV; call++) {
        size_t t = shmem_int_test_any(flags, NV, NULL, SHMEM_CMP_EQ, 1);
        size_t w = shmem_int_wait_until_any(flags, NV, NULL, SHMEM_CMP_EQ, 1);
        size_t s = shmem_short_test_any(shorts, NV, NULL, SHMEM_CMP_EQ, 1);
        CHECK(t < NV && w < NV && s < NV, "an _any call gave %zu %zu %zu", t, w, s);
        seen_test[t] = seen_wait[w] = seen_short[s] = 1;
    }
    for (int i = 0; i < NV; i++)
        CHECK(seen_test[i] && seen_wait[i] && seen_short[i],
              "index %d never returned (test_any %d, wait_until_any %d, short test_any %d)", i,
              seen_test[i], seen_wait[i], seen_short[i]);
    for (int i = 0; i < NV; i++) {
        flags[i] = 0;
        shorts[i] = 0;
    }
}

/* The specification's own example for shmem_test_any: a linear barrier in which each PE sets
 * its flag on every PE and polls until each flag was seen once, excluding those seen. */
static void test_any_barrier(int me, int n) {
    int *marks = shmem_calloc(n, sizeof(int));
    int *status = calloc(n, sizeof(int));
    for (int pe = 0; pe < n; pe++)
        shmem_int_atomic_set(&marks[me], 1, pe);
    int done = 0;
    while (done < n) {
        size_t i = shmem_int_test_any(marks, n, status, SHMEM_CMP_EQ, 1);
        if (i != SIZE_MAX) {
            CHECK(i < (size_t)n && status[i] == 0, "test_any gave %zu", i);
            status[i] = 1;
            done++;
        }
    }
    /* Every flag is set now: with no status array each is eventually returned. */
    int *found = calloc(n, sizeof(int));
    for (int seen = 0, calls = 0; seen < n; calls++) {
        CHECK(calls < 100 * n, "test_any kept missing an index after %d calls", calls);
        size_t i = shmem_int_test_any(marks, n, NULL, SHMEM_CMP_EQ, 1);
        CHECK(i < (size_t)n, "test_any with every flag set gave %zu", i);
        if (!found[i]) {
            found[i] = 1;
            seen++;
        }
    }
    free(found);
    free(status);
    shmem_barrier_all();
    shmem_free(marks);
}

int main(void) {
    shmem_init();
    int me, n, right, left;
    ring_of_pes(&me, &n, &right, &left);

    empty_sets();
    any_takes_turns();
    test_any_barrier(me, n);

    /* _some with nothing ready: the test returns 0 and writes no index. */
    size_t idx[NV] = {99, 99, 99, 99, 99};
    CHECK(shmem_int_test_some(flags, NV, idx, NULL, SHMEM_CMP_NE, 0) == 0, "test_some");
    CHECK(idx[0] == 99, "test_some wrote an index with nothing ready");
    shmem_barrier_all();

    /* 9.10, shmem_wait_until: returns at once when the condition already holds; the
     * deprecated shmem_wait waits until ivar differs from cmp_value. */
    shmem_int_wait_until(&flags[0], SHMEM_CMP_EQ, 0);
    shmem_int_p(&flags[1], 3, right);
    shmem_int_wait(&flags[1], 0);
    CHECK(flags[1] == 3, "shmem_int_wait returned with %d", flags[1]);
    shmem_barrier_all();

    /* 9.12: shmem_test_lock returns 0 when it took the lock and 1 when another PE holds it. */
    shmem_barrier_all();
    if (me == 0) {
        CHECK(shmem_test_lock(&lock) == 0, "test_lock of a free lock");
    }
    shmem_barrier_all();
    if (me != 0)
        CHECK(shmem_test_lock(&lock) == 1, "test_lock of a held lock");
    shmem_barrier_all();
    if (me == 0)
        shmem_clear_lock(&lock);
    shmem_set_lock(&lock);
    shmem_clear_lock(&lock);

    FINISH("spec_waits");
    return 0;
}
