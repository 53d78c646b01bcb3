/* threads_lock: a distributed lock contended by threads of every PE (OpenSHMEM 1.5 section
 * 9.12.1, shmem_set_lock: a lock is held by one caller at a time, and a caller blocks until
 * it holds it; section 9.2: under SHMEM_THREAD_MULTIPLE, threads of one PE call at once).
 * Each thread increments a counter on PE 0 with a plain get and put while it holds the lock,
 * so an increment lost to two holders at once shows in the total. shmem_clear_lock completes
 * the holder's puts before it releases the lock (section 9.12.1). */
#include <pthread.h>
#include <sched.h>

#include "../c/check.h"

enum { THREADS = 3, ROUNDS = 5 };

static long lock;
static long counter;

static void *contend(void *arg) {
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        shmem_set_lock(&lock);
        long seen = shmem_long_g(&counter, 0);
        shmem_long_p(&counter, seen + 1, 0);
        shmem_clear_lock(&lock);
        sched_yield();
    }
    return NULL;
}

int main(void) {
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    shmem_barrier_all();
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++)
        CHECK(pthread_create(&threads[t], NULL, contend, NULL) == 0, "pthread_create %d", t);
    for (int t = 0; t < THREADS; t++)
        CHECK(pthread_join(threads[t], NULL) == 0, "pthread_join %d", t);
    shmem_barrier_all();
    long total = shmem_long_g(&counter, 0);
    CHECK(total == (long)shmem_n_pes() * THREADS * ROUNDS, "counter %ld", total);
    if (shmem_my_pe() == 0)
        printf("counter %ld\n", total);
    FINISH("threads_lock");
    return 0;
}
