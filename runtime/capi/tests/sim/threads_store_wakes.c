/* threads_store_wakes: one thread of each PE waits in shmem_wait_until on a word of its own PE
 * that another thread of the same PE sets with a plain store (and a quiet), as threaded
 * programs that use a symmetric word as a local doorbell do. A blocking call blocks only its
 * thread (OpenSHMEM 1.5 section 9.2), so the store must end the wait.
 *
 * On the simulator the store lands while the PE runs the storing thread, not while it waits
 * in the world; the PE must see it before it waits for the world again. */
#define _DEFAULT_SOURCE /* usleep */
#include <pthread.h>
#include <shmem.h>
#include <stdio.h>
#include <unistd.h>

static long doorbell;
static int rang;

static void *ringer(void *arg) {
    (void)arg;
    usleep(1000); /* let the waiter reach its wait first, most of the time */
    doorbell = 7;
    shmem_quiet();
    return NULL;
}

static void *waiter(void *arg) {
    (void)arg;
    shmem_long_wait_until(&doorbell, SHMEM_CMP_NE, 0);
    rang = 1;
    return NULL;
}

int main(void) {
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    pthread_t a, b;
    pthread_create(&a, NULL, waiter, NULL);
    pthread_create(&b, NULL, ringer, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    if (!rang || doorbell != 7) {
        fprintf(stderr, "PE %d: the wait ended with %ld\n", shmem_my_pe(), doorbell);
        return 1;
    }
    shmem_barrier_all();
    if (shmem_my_pe() == 0)
        printf("threads_store_wakes: ok at %d PEs\n", shmem_n_pes());
    shmem_finalize();
    return 0;
}
