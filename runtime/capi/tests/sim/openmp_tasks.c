/* openmp_tasks: an OpenMP parallel region whose threads each take a private context and draw
 * tasks from a shared counter on every PE with atomic fetch-and-increment, then a reduction of
 * the tasks done: the shape of the specification's example of contexts with OpenMP threads,
 * written anew. As processes the team has several threads; on the simulator it has one (its
 * threads would wait on futexes the simulator cannot schedule), and the totals agree. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <shmem.h>

#define TASKS_PER_PE 256

static long next_task;
static long done_here, done_everywhere;

int main(void) {
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    if (provided != SHMEM_THREAD_MULTIPLE)
        shmem_global_exit(1);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    long done = 0;

#pragma omp parallel reduction(+ : done)
    {
        shmem_ctx_t ctx;
        if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0)
            ctx = SHMEM_CTX_DEFAULT;
        for (int k = 0; k < npes; k++) {
            int pe = (me + k) % npes;
            while (shmem_ctx_long_atomic_fetch_inc(ctx, &next_task, pe) < TASKS_PER_PE)
                done++;
        }
        if (ctx != SHMEM_CTX_DEFAULT)
            shmem_ctx_destroy(ctx);
    }

    done_here = done;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &done_everywhere, &done_here, 1);
    if (done_everywhere != (long)TASKS_PER_PE * npes) {
        fprintf(stderr, "PE %d: %ld tasks done, want %ld\n", me, done_everywhere,
                (long)TASKS_PER_PE * npes);
        return 1;
    }
    if (me == 0)
        printf("openmp_tasks: %ld tasks over %d PEs\n", done_everywhere, npes);
    shmem_finalize();
    return 0;
}
