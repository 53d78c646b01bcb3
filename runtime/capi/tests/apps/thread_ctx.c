/*
 * A thread per core, each with a private context, in the style of the OpenSHMEM contexts
 * examples: SHMEM_THREAD_MULTIPLE, every thread puts its slice of a buffer to the next PE
 * through its own context and completes it with shmem_ctx_quiet, the main thread joins
 * them, and a barrier publishes the result.
 */
#include <shmem.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 4
#define SLICE 256

static long dest[MAX_THREADS * SLICE];
static long source[MAX_THREADS * SLICE];
static int nthreads;

struct job {
    int index;
    int failed;
};

static void *worker(void *arg)
{
    struct job *job = arg;
    shmem_ctx_t ctx;
    int me = shmem_my_pe(), npes = shmem_n_pes();
    long *from = &source[job->index * SLICE];
    long *to = &dest[job->index * SLICE];
    int i;

    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        /* Contexts may run out; the default context is always there. */
        ctx = SHMEM_CTX_DEFAULT;
    }
    for (i = 0; i < SLICE; i++)
        from[i] = (long)me * 1000000 + job->index * 1000 + i;
    for (i = 0; i < SLICE; i += 64)
        shmem_ctx_long_put_nbi(ctx, &to[i], &from[i], 64, (me + 1) % npes);
    shmem_ctx_quiet(ctx);
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    job->failed = 0;
    return NULL;
}

int main(void)
{
    pthread_t threads[MAX_THREADS];
    struct job jobs[MAX_THREADS];
    int provided, i, t, me, npes, left;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);

    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    if (provided != SHMEM_THREAD_MULTIPLE) {
        fprintf(stderr, "SHMEM_THREAD_MULTIPLE not provided (%d)\n", provided);
        shmem_global_exit(1);
    }
    me = shmem_my_pe();
    npes = shmem_n_pes();
    left = (me + npes - 1) % npes;
    nthreads = cores < 2 ? 2 : cores > MAX_THREADS ? MAX_THREADS : (int)cores;

    for (t = 0; t < nthreads; t++) {
        jobs[t].index = t;
        jobs[t].failed = 1;
        if (pthread_create(&threads[t], NULL, worker, &jobs[t]) != 0) {
            fprintf(stderr, "PE %d: pthread_create failed\n", me);
            shmem_global_exit(1);
        }
    }
    for (t = 0; t < nthreads; t++)
        pthread_join(threads[t], NULL);
    shmem_barrier_all();

    for (t = 0; t < nthreads; t++) {
        if (jobs[t].failed) {
            fprintf(stderr, "PE %d: thread %d did not finish\n", me, t);
            return 1;
        }
        for (i = 0; i < SLICE; i++) {
            long want = (long)left * 1000000 + t * 1000 + i;
            if (dest[t * SLICE + i] != want) {
                fprintf(stderr, "PE %d: dest[%d] = %ld, want %ld\n", me, t * SLICE + i,
                        dest[t * SLICE + i], want);
                return 1;
            }
        }
    }
    if (me == 0)
        printf("thread_ctx: %d PEs, %d threads each\n", npes, nthreads);
    shmem_finalize();
    return 0;
}
