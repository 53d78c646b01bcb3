/* threads_counter: a thread per core adds to two tallies its PE shares, one in the program's
 * static data and one malloc'ed, then the main thread joins them and sums the tallies with a
 * SHMEM reduction, as a threaded OpenSHMEM program often does.
 *
 * Built as it is, the threads add with no lock: POSIX (and C11, 5.1.2.4) makes that a data
 * race, which the race detector must report between two threads of one PE (`rshmem check`,
 * built with `oshcc -rshmem-check`). Built with -DLOCKED they add under a pthread mutex, which
 * orders them, and the detector must stay quiet; the sum is then exact, and the program says
 * so. The simulator switches threads only where they synchronise, so the unlocked sum is
 * also exact there; as processes it need not be, and is not checked. */
#include <pthread.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 3
#define ROUNDS 50

static long tally; /* static data: symmetric */
static long total; /* the reduction's target */
static long *scratch; /* malloc'ed: the PE's alone */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *add(void *arg) {
    long step = (long)arg;
    for (int i = 0; i < ROUNDS; i++) {
#ifdef LOCKED
        pthread_mutex_lock(&lock);
#endif
        tally += step;
        *scratch += step;
#ifdef LOCKED
        pthread_mutex_unlock(&lock);
#endif
        sched_yield();
    }
    return NULL;
}

int main(void) {
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    if (provided != SHMEM_THREAD_MULTIPLE) {
        fprintf(stderr, "no SHMEM_THREAD_MULTIPLE\n");
        shmem_global_exit(1);
    }
    scratch = calloc(1, sizeof *scratch);
    pthread_t threads[NTHREADS];
    for (long t = 0; t < NTHREADS; t++)
        pthread_create(&threads[t], NULL, add, (void *)(t + 1));
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(threads[t], NULL);

    shmem_barrier_all();
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &total, &tally, 1);
    long expected = (long)ROUNDS * NTHREADS * (NTHREADS + 1) / 2;
#ifdef LOCKED
    if (tally != expected || *scratch != expected || total != expected * shmem_n_pes()) {
        fprintf(stderr, "PE %d: tally %ld, scratch %ld, total %ld; expected %ld\n",
                shmem_my_pe(), tally, *scratch, total, expected);
        exit(1);
    }
#endif
    if (shmem_my_pe() == 0)
        printf("threads_counter: ok at %d PEs (total %ld, %ld a PE without races)\n",
               shmem_n_pes(), total, expected);
    free(scratch);
    shmem_finalize();
    exit(0);
}
