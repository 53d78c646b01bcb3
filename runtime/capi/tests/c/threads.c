/* threads: SHMEM_THREAD_MULTIPLE with four threads per PE communicating at once.
 * init_thread and query_thread; each thread adds to a counter on PE 0 and puts into its own
 * slots on the right neighbour, half through the default context and half through a private
 * context of its own. */
#include <pthread.h>

#include "check.h"

enum { THREADS = 4, PER_THREAD = 200 };

static long *counter;
static long *slots;
static int me, n, right;

static void *work(void *arg) {
    int t = (int)(long)arg;
    shmem_ctx_t ctx;
    int have_ctx = shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0;
    for (int i = 0; i < PER_THREAD; i++) {
        shmem_long_atomic_add(counter, 1, 0);
        long v = me * 1000000L + t * 1000L + i;
        if (have_ctx && i % 2 == 1)
            shmem_ctx_long_p(ctx, &slots[t * PER_THREAD + i], v, right);
        else
            shmem_long_p(&slots[t * PER_THREAD + i], v, right);
    }
    if (have_ctx) {
        shmem_ctx_quiet(ctx);
        shmem_ctx_destroy(ctx);
    }
    shmem_quiet();
    return NULL;
}

int main(void) {
    int provided = -1;
    int rc = shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    if (rc != 0) {
        fprintf(stderr, "FAIL threads: shmem_init_thread returned %d\n", rc);
        return 1;
    }
    CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided thread level %d", provided);
    int queried = -1;
    shmem_query_thread(&queried);
    CHECK(queried == provided, "query_thread %d, init_thread %d", queried, provided);
    me = shmem_my_pe();
    n = shmem_n_pes();
    right = (me + 1) % n;
    counter = shmem_calloc(1, sizeof(long));
    slots = shmem_calloc(THREADS * PER_THREAD, sizeof(long));
    shmem_barrier_all();

    pthread_t threads[THREADS];
    for (long t = 0; t < THREADS; t++)
        CHECK(pthread_create(&threads[t], NULL, work, (void *)t) == 0, "pthread_create");
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    shmem_barrier_all();

    int left = (me + n - 1) % n;
    if (me == 0)
        CHECK(*counter == (long)n * THREADS * PER_THREAD, "counter %ld", *counter);
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < PER_THREAD; i++)
            CHECK(slots[t * PER_THREAD + i] == left * 1000000L + t * 1000L + i,
                  "thread %d slot %d: %ld", t, i, slots[t * PER_THREAD + i]);
    shmem_barrier_all();
    shmem_free(slots);
    shmem_free(counter);
    PASS("threads");
    shmem_finalize();
    return 0;
}
