/* threads_deadlock: two threads of a PE take two mutexes in opposite orders, each holding its
 * first while the other takes its own first (a pthread barrier between the two steps makes
 * sure of it). POSIX says such a lock waits forever; on the simulator the run ends with the
 * deadlock report, which names the PE, each thread and the mutex it waits for. Expected to
 * fail: the test checks the report. */
/* pthread barriers are POSIX.1-2001, which strict C11 does not declare by default. */
#define _POSIX_C_SOURCE 200112L
#include <pthread.h>

#include "../c/check.h"

static pthread_mutex_t first = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t second = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold_one;

static void *forwards(void *arg) {
    (void)arg;
    pthread_mutex_lock(&first);
    pthread_barrier_wait(&both_hold_one);
    pthread_mutex_lock(&second);
    return NULL;
}

static void *backwards(void *arg) {
    (void)arg;
    pthread_mutex_lock(&second);
    pthread_barrier_wait(&both_hold_one);
    pthread_mutex_lock(&first);
    return NULL;
}

int main(void) {
    shmem_init();
    pthread_barrier_init(&both_hold_one, NULL, 2);
    pthread_t a, b;
    if (shmem_my_pe() == 0) {
        pthread_create(&a, NULL, forwards, NULL);
        pthread_create(&b, NULL, backwards, NULL);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
