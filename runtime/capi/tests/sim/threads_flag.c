/* threads_flag: one thread waits for a word the previous PE puts, then fills a buffer and
 * publishes it through a flag; the main thread puts that word to the next PE, spins on its
 * own flag, then reads the buffer and puts its sum to the next PE.
 *
 * As written, the flag is a C11 atomic: the store releases and the spinning load acquires
 * (C11 7.17.3), so the buffer is ordered before the reads, and the race detector must report
 * nothing. The spin has no SHMEM call and no sched_yield in it: on the simulator the atomic
 * load itself must let the other thread run, and, while that thread waits for the put, let
 * simulated time go on (a program built with oshcc -rshmem-check).
 *
 * With -DPLAIN_FLAG the flag is a plain volatile int, which orders nothing in C: the detector
 * must report the flag and the buffer as races between the two threads. That spin calls
 * sched_yield, as such programs do. */
#include <pthread.h>
#include <sched.h>
#include <shmem.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define N 64

static long buffer[N];
static long received;
static long go;
#ifdef PLAIN_FLAG
static volatile int ready;
#else
static atomic_int ready;
#endif

static void *fill(void *arg) {
    long base = (long)arg;
    shmem_long_wait_until(&go, SHMEM_CMP_EQ, 1);
    for (int i = 0; i < N; i++)
        buffer[i] = base + i;
#ifdef PLAIN_FLAG
    ready = 1;
#else
    atomic_store_explicit(&ready, 1, memory_order_release);
#endif
    return NULL;
}

int main(void) {
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    pthread_t filler;
    pthread_create(&filler, NULL, fill, (void *)(long)(me * 1000));
    shmem_long_atomic_set(&go, 1, (me + 1) % npes);
#ifdef PLAIN_FLAG
    while (!ready)
        sched_yield();
#else
    while (!atomic_load_explicit(&ready, memory_order_acquire))
        ;
#endif
    long sum = 0;
    for (int i = 0; i < N; i++)
        sum += buffer[i];
    shmem_long_p(&received, sum, (me + 1) % npes);
    pthread_join(filler, NULL);
    shmem_barrier_all();
    int left = (me + npes - 1) % npes;
    long expected = (long)left * 1000 * N + (long)N * (N - 1) / 2;
    if (received != expected) {
        fprintf(stderr, "PE %d received %ld, expected %ld\n", me, received, expected);
        exit(1);
    }
    if (me == 0)
        printf("threads_flag: ok at %d PEs\n", npes);
    shmem_finalize();
    return 0;
}
