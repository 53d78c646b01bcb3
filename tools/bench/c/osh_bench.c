/*
 * osh_bench.c: latency and rate of the core OpenSHMEM operations, in plain OpenSHMEM C, so
 * that the same source builds with rshmem's oshcc and with Open MPI's (OSHMEM, OpenSHMEM 1.4)
 * and the two can be compared number for number (side-by-side.sh, docs/c-bench.md).
 *
 * Only API that OpenSHMEM 1.4 has: no teams, no nbi atomics, no signals; the typed atomics
 * are shmem_long_atomic_* (Open MPI's shmem_int_cswap is broken in Debian's build).
 *
 * Method: PE 0 times with clock_gettime(CLOCK_MONOTONIC); every measurement is a warm-up,
 * then REPS timed repetitions of enough iterations to last well over the clock's resolution,
 * and the median repetition is reported (the median, not the mean: a 2-core machine shared
 * with other work has outliers). Point-to-point operations go from PE 0 to PE 1, the other
 * PEs waiting at a barrier; rates have every PE issue to its right neighbour at once and
 * count all of their operations (8-byte puts and the atomics on the heap). Collectives involve
 * every PE.
 *
 * Output: one line per metric, "metric size value unit" (size in bytes).
 *
 * Usage: oshrun -np N ./osh_bench [reps]   (N >= 2; reps defaults to 5)
 */
#define _POSIX_C_SOURCE 199309L
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_BYTES (1 << 20)
#define MAX_REPS 31
/* Collective sizes, in 8-byte elements: 8 B to 64 KiB. */
#define MAX_COLL_ELEMS 8192
#define PUT_RATE_BATCH 256

/* Static symmetric data: a global array, remapped or registered by the library at init. */
static char static_buf[MAX_BYTES];
/* The local side of the transfers (private, not symmetric). */
static char local_buf[MAX_BYTES];

static long bcast_sync[2][SHMEM_BCAST_SYNC_SIZE];
static long reduce_sync[2][SHMEM_REDUCE_SYNC_SIZE];
static long reduce_work[2][MAX_COLL_ELEMS / 2 + 1 + SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long coll_src[MAX_COLL_ELEMS];
static long coll_dst[MAX_COLL_ELEMS];
/* On the heap (shmem_malloc), where most programs keep them. */
static char *heap;
static long *atomic_target;

static int me, npes, reps = 5;

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int n) {
    qsort(values, (size_t)n, sizeof values[0], compare_doubles);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/* Iterations per repetition: many for small messages (each is fast), fewer for large. */
static long iterations(size_t bytes) {
    long n = (long)((64L << 20) / (bytes ? bytes : 1));
    return n < 200 ? 200 : n > 50000 ? 50000 : n;
}

static void report(const char *metric, size_t bytes, double value, const char *unit) {
    if (me == 0)
        printf("%s %zu %.4f %s\n", metric, bytes, value, unit);
    fflush(stdout);
}

/* One point-to-point operation from PE 0 to PE 1. */
typedef void (*p2p_op)(char *remote, size_t bytes);

static void put_blocking(char *remote, size_t bytes) {
    shmem_putmem(remote, local_buf, bytes, 1);
    shmem_quiet();
}

static void get_blocking(char *remote, size_t bytes) {
    shmem_getmem(local_buf, remote, bytes, 1);
}

/* The median latency of `op` in microseconds (PE 0's; the others return 0). */
static double p2p_latency_us(p2p_op op, char *remote, size_t bytes) {
    double samples[MAX_REPS];
    long n = iterations(bytes);
    shmem_barrier_all();
    if (me == 0) {
        for (long i = 0; i < n / 10 + 1; i++)
            op(remote, bytes);
        for (int r = 0; r < reps; r++) {
            double start = now_us();
            for (long i = 0; i < n; i++)
                op(remote, bytes);
            samples[r] = (now_us() - start) / (double)n;
        }
    }
    shmem_barrier_all();
    return me == 0 ? median(samples, reps) : 0;
}

static void latencies(const char *heap_or_static, char *remote) {
    static const size_t sizes[] = {1, 8, 64, 512, 4096, 32768, 262144, MAX_BYTES};
    char metric[64];
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        snprintf(metric, sizeof metric, "put_lat_%s", heap_or_static);
        report(metric, sizes[s], p2p_latency_us(put_blocking, remote, sizes[s]), "us");
        snprintf(metric, sizeof metric, "get_lat_%s", heap_or_static);
        report(metric, sizes[s], p2p_latency_us(get_blocking, remote, sizes[s]), "us");
    }
}

/* Times `body` (run by every PE, `n` operations each) `reps` times; returns the median of
 * PE 0's times in microseconds, each repetition started together by a barrier. */
typedef void (*all_body)(long n, int right);

static double all_time_us(all_body body, long n) {
    double samples[MAX_REPS];
    int right = (me + 1) % npes;
    body(n / 10 + 1, right);
    for (int r = 0; r < reps; r++) {
        shmem_barrier_all();
        double start = now_us();
        body(n, right);
        shmem_barrier_all();
        samples[r] = now_us() - start;
    }
    return median(samples, reps);
}

static void put_nbi_batches(long n, int right) {
    for (long i = 0; i < n; i += PUT_RATE_BATCH) {
        for (long j = 0; j < PUT_RATE_BATCH; j++)
            shmem_putmem_nbi(heap + 8 * (j % 1024), local_buf, 8, right);
        shmem_quiet();
    }
}

static void fetch_adds(long n, int right) {
    for (long i = 0; i < n; i++)
        (void)shmem_long_atomic_fetch_add(atomic_target, 1, right);
}

static void adds(long n, int right) {
    for (long i = 0; i < n; i++)
        shmem_long_atomic_add(atomic_target, 1, right);
    shmem_quiet();
}

static void compare_swaps(long n, int right) {
    for (long i = 0; i < n; i++)
        (void)shmem_long_atomic_compare_swap(atomic_target, i, i + 1, right);
}

/* Rates: every PE issues to its right neighbour at once; millions of operations a second. */
static void rates(void) {
    const long n = 50000;
    long total = n * npes;
    report("put_rate", 8, (double)total / all_time_us(put_nbi_batches, n), "Mops/s");
    report("fetch_add_rate", 8, (double)total / all_time_us(fetch_adds, n), "Mops/s");
    report("add_rate", 8, (double)total / all_time_us(adds, n), "Mops/s");
    report("compare_swap_rate", 8, (double)total / all_time_us(compare_swaps, n), "Mops/s");
}

static void fetch_add_once(char *remote, size_t bytes) {
    (void)remote, (void)bytes;
    (void)shmem_long_atomic_fetch_add(atomic_target, 1, 1);
}

static void add_once(char *remote, size_t bytes) {
    (void)remote, (void)bytes;
    shmem_long_atomic_add(atomic_target, 1, 1);
    shmem_quiet();
}

static void compare_swap_once(char *remote, size_t bytes) {
    (void)remote, (void)bytes;
    (void)shmem_long_atomic_compare_swap(atomic_target, 0, 0, 1);
}

static void atomic_latencies(void) {
    report("fetch_add_lat", 8, p2p_latency_us(fetch_add_once, NULL, 8), "us");
    report("add_lat", 8, p2p_latency_us(add_once, NULL, 8), "us");
    report("compare_swap_lat", 8, p2p_latency_us(compare_swap_once, NULL, 8), "us");
}

static void barriers(long n, int right) {
    (void)right;
    for (long i = 0; i < n; i++)
        shmem_barrier_all();
}

static long coll_elems;

/* Each collective is followed by a barrier: a broadcast's root may otherwise run ahead and
 * overwrite a slow PE's destination or pSync (the pSync arrays alternate as well); the
 * barrier's own latency is subtracted when reporting. */
static void broadcasts(long n, int right) {
    (void)right;
    for (long i = 0; i < n; i++) {
        shmem_broadcast64(coll_dst, coll_src, (size_t)coll_elems, 0, 0, 0, npes,
                          bcast_sync[i % 2]);
        shmem_barrier_all();
    }
}

static void sum_reductions(long n, int right) {
    (void)right;
    for (long i = 0; i < n; i++) {
        shmem_long_sum_to_all(coll_dst, coll_src, (int)coll_elems, 0, 0, npes, reduce_work[i % 2],
                              reduce_sync[i % 2]);
        shmem_barrier_all();
    }
}

static void collectives(void) {
    const long n = 2000;
    double barrier_us = all_time_us(barriers, n) / (double)n;
    report("barrier_all_lat", 0, barrier_us, "us");
    static const long elems[] = {1, 64, 512, MAX_COLL_ELEMS};
    for (size_t e = 0; e < sizeof elems / sizeof elems[0]; e++) {
        coll_elems = elems[e];
        long iters = coll_elems >= 512 ? n / 4 : n;
        double us = all_time_us(broadcasts, iters) / (double)iters - barrier_us;
        report("broadcast_lat", (size_t)coll_elems * 8, us > 0 ? us : 0, "us");
        us = all_time_us(sum_reductions, iters) / (double)iters - barrier_us;
        report("sum_reduce_lat", (size_t)coll_elems * 8, us > 0 ? us : 0, "us");
    }
}

int main(int argc, char **argv) {
    if (argc > 1)
        reps = atoi(argv[1]);
    if (reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "osh_bench: reps must be 1 to %d, not %s\n", MAX_REPS, argv[1]);
        return 2;
    }
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (npes < 2) {
        if (me == 0)
            fprintf(stderr, "osh_bench: needs at least 2 PEs: oshrun -np 2 ./osh_bench\n");
        shmem_finalize();
        return 2;
    }
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < SHMEM_BCAST_SYNC_SIZE; j++)
            bcast_sync[i][j] = SHMEM_SYNC_VALUE;
        for (int j = 0; j < SHMEM_REDUCE_SYNC_SIZE; j++)
            reduce_sync[i][j] = SHMEM_SYNC_VALUE;
    }
    for (long i = 0; i < MAX_COLL_ELEMS; i++)
        coll_src[i] = me + i;
    memset(local_buf, me, sizeof local_buf);
    heap = shmem_malloc(MAX_BYTES);
    atomic_target = shmem_malloc(sizeof *atomic_target);
    if (heap == NULL || atomic_target == NULL) {
        fprintf(stderr, "osh_bench: shmem_malloc of %d bytes failed\n", MAX_BYTES);
        shmem_global_exit(1);
    }
    shmem_barrier_all();

    latencies("heap", heap);
    latencies("static", static_buf);
    atomic_latencies();
    rates();
    collectives();

    shmem_free(atomic_target);
    shmem_free(heap);
    shmem_finalize();
    return 0;
}
