/* locks: set_lock/test_lock/clear_lock under contention.
 * Every PE enters a critical section ROUNDS times and does a non-atomic read-modify-write of a
 * counter on PE 0 with g and p: only mutual exclusion (and clear_lock's quiet) make the total
 * come out right. Half the rounds take the lock by spinning on test_lock. */
#include "check.h"

enum { ROUNDS = 50 };

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    /* Locks must start at zero: calloc. */
    long *lock = shmem_calloc(1, sizeof(long));
    long *counter = shmem_calloc(1, sizeof(long));
    int *inside = shmem_calloc(1, sizeof(int));
    shmem_barrier_all();
    for (int r = 0; r < ROUNDS; r++) {
        if (r % 2 == 0)
            shmem_set_lock(lock);
        else
            while (shmem_test_lock(lock) != 0)
                ;
        /* Nobody else may be inside. */
        int others = shmem_int_atomic_fetch_inc(inside, 0);
        CHECK(others == 0, "round %d: %d PEs inside the lock", r, others + 1);
        long c = shmem_long_g(counter, 0);
        shmem_long_p(counter, c + 1, 0);
        shmem_int_atomic_add(inside, -1, 0);
        shmem_clear_lock(lock);
    }
    shmem_barrier_all();
    if (me == 0)
        CHECK(*counter == (long)ROUNDS * n, "counter %ld, want %ld", *counter, (long)ROUNDS * n);
    /* A lock nobody holds is free for test_lock at once. */
    shmem_barrier_all();
    if (me == n - 1) {
        CHECK(shmem_test_lock(lock) == 0, "free lock reported held");
        shmem_clear_lock(lock);
    }
    shmem_barrier_all();
    shmem_free(inside);
    shmem_free(counter);
    shmem_free(lock);
    PASS("locks");
    shmem_finalize();
    return 0;
}
