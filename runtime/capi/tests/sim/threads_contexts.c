/* threads_contexts: the specification's pattern for contexts (OpenSHMEM 1.5 section 9.5.1,
 * shmem_ctx_create, and its example of a context per thread): under SHMEM_THREAD_MULTIPLE
 * (section 9.2) each thread creates a private context (SHMEM_CTX_PRIVATE), puts through it to
 * the right neighbour, completes its puts with shmem_ctx_quiet (section 9.11.2: a quiet on a
 * context completes that context's operations), and destroys it; the main thread joins the
 * threads, then a barrier makes every put visible. On the simulator each thread is a
 * simulated thread of its PE. */
#include <pthread.h>

#include "../c/check.h"

enum { THREADS = 4, PER_THREAD = 64 };

static long dest[THREADS * PER_THREAD];
static int me, npes;

static void *worker(void *arg) {
    int t = (int)(long)arg;
    shmem_ctx_t ctx;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0)
        ctx = SHMEM_CTX_DEFAULT;
    long src[PER_THREAD];
    for (int i = 0; i < PER_THREAD; i++)
        src[i] = me * 100000L + t * 1000L + i;
    int right = (me + 1) % npes;
    /* Half as one block, half element by element, so that each thread has several
     * operations in flight when it quiets. */
    shmem_ctx_long_put(ctx, &dest[t * PER_THREAD], src, PER_THREAD / 2, right);
    for (int i = PER_THREAD / 2; i < PER_THREAD; i++)
        shmem_ctx_long_p(ctx, &dest[t * PER_THREAD + i], src[i], right);
    shmem_ctx_quiet(ctx);
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    return NULL;
}

int main(void) {
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided %d", provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();

    pthread_t threads[THREADS];
    for (long t = 0; t < THREADS; t++)
        CHECK(pthread_create(&threads[t], NULL, worker, (void *)t) == 0, "pthread_create %ld", t);
    for (int t = 0; t < THREADS; t++)
        CHECK(pthread_join(threads[t], NULL) == 0, "pthread_join %d", t);
    shmem_barrier_all();

    int left = (me + npes - 1) % npes;
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < PER_THREAD; i++)
            CHECK(dest[t * PER_THREAD + i] == left * 100000L + t * 1000L + i,
                  "thread %d element %d: %ld", t, i, dest[t * PER_THREAD + i]);
    printf("PE %d: %d threads put %d elements each\n", me, THREADS, PER_THREAD);
    PASS("threads_contexts");
    shmem_finalize();
    return 0;
}
