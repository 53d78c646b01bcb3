/* threads_handoff: threads of one PE hand work to each other through a mutex and a condition
 * variable, and one thread waits in shmem_wait_until for a put that another thread of the
 * same PE makes. OpenSHMEM 1.5 section 9.2: under SHMEM_THREAD_MULTIPLE any thread may call,
 * and an operation a thread starts is an action of its whole PE; a blocking call blocks only
 * its calling thread, so the PE's other threads go on and may satisfy the wait.
 *
 * A producer thread queues ITEMS numbers; a consumer thread takes each one under the mutex,
 * waiting on the condition while the queue is empty, and puts it to the right neighbour; the
 * main thread waits on its own PE's `done` word, which the consumer of the left neighbour
 * sets last, with a fence before it (section 9.11.1) so the items land first. */
#include <pthread.h>

#include "../c/check.h"

enum { ITEMS = 32, SLOTS = 4 };

static long received[ITEMS];
static long done;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static long queue[SLOTS];
static int head, count;

static int me, npes;

static void *producer(void *arg) {
    (void)arg;
    for (long i = 0; i < ITEMS; i++) {
        pthread_mutex_lock(&lock);
        while (count == SLOTS)
            pthread_cond_wait(&changed, &lock);
        queue[(head + count) % SLOTS] = me * 1000L + i;
        count++;
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void *consumer(void *arg) {
    (void)arg;
    int right = (me + 1) % npes;
    for (int i = 0; i < ITEMS; i++) {
        pthread_mutex_lock(&lock);
        while (count == 0)
            pthread_cond_wait(&changed, &lock);
        long item = queue[head];
        head = (head + 1) % SLOTS;
        count--;
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&lock);
        shmem_long_p(&received[i], item, right);
    }
    shmem_fence();
    shmem_long_atomic_set(&done, 1, right);
    return (void *)(long)ITEMS;
}

int main(void) {
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    shmem_barrier_all();

    pthread_t threads[2];
    CHECK(pthread_create(&threads[0], NULL, consumer, NULL) == 0, "pthread_create consumer");
    CHECK(pthread_create(&threads[1], NULL, producer, NULL) == 0, "pthread_create producer");
    /* Blocks this thread only: both of this PE's threads keep running. */
    shmem_long_wait_until(&done, SHMEM_CMP_EQ, 1);
    void *consumed = NULL;
    CHECK(pthread_join(threads[0], &consumed) == 0, "pthread_join consumer");
    CHECK(pthread_join(threads[1], NULL) == 0, "pthread_join producer");
    CHECK((long)consumed == ITEMS, "the consumer returned %ld", (long)consumed);

    int left = (me + npes - 1) % npes;
    for (int i = 0; i < ITEMS; i++)
        CHECK(received[i] == left * 1000L + i, "item %d: %ld", i, received[i]);
    printf("PE %d: %d items handed over\n", me, ITEMS);
    FINISH("threads_handoff");
    return 0;
}
