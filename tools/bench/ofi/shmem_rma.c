/* The measurements of raw_rma.c, made through OpenSHMEM by PE 0 against PE 1 (built with
 * oshcc; tools/bench/ofi.sh starts it on two nodes or with every peer on libfabric):
 *   - put: shmem_putmem then shmem_quiet, each time;
 *   - get: shmem_getmem;
 *   - put bandwidth: 64 shmem_putmem_nbi, then shmem_quiet;
 *   - fetch-add: shmem_long_atomic_fetch_add;
 *   - add rate: 1000 shmem_long_atomic_add, then shmem_quiet;
 *   - barrier: shmem_barrier_all, on both PEs.
 * PE 1 waits in a barrier meanwhile. Prints lines `rshmem: ...` that ofi.sh reads.
 */
#include <shmem.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MAX_BYTES (16 << 20)
#define WINDOW 64

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static long word;

int main(void) {
    shmem_init();
    char *target = shmem_malloc(MAX_BYTES);
    static char source[MAX_BYTES];
    memset(source, 7, sizeof source);
    if (target == NULL || shmem_n_pes() != 2) {
        fprintf(stderr, "shmem_rma: needs 2 PEs and a heap of 16 MiB (SHMEM_SYMMETRIC_SIZE)\n");
        shmem_global_exit(1);
    }
    shmem_barrier_all();
    if (shmem_my_pe() == 0) {
        for (size_t size = 8; size <= MAX_BYTES; size *= 8) {
            int ops = (int)(20000000 / (size + 8000));
            ops = ops < 20 ? 20 : ops > 2000 ? 2000 : ops;
            double started = now_us();
            for (int i = 0; i < ops; i++) {
                shmem_putmem(target, source, size, 1);
                shmem_quiet();
            }
            double put_us = (now_us() - started) / ops;
            started = now_us();
            for (int i = 0; i < ops; i++) shmem_getmem(source, target, size, 1);
            double get_us = (now_us() - started) / ops;
            started = now_us();
            for (int i = 0; i < ops; i++) {
                shmem_putmem_nbi(target, source, size, 1);
                if ((i + 1) % WINDOW == 0) shmem_quiet();
            }
            shmem_quiet();
            double stream_us = (now_us() - started) / ops;
            printf("rshmem: %zu B: put %.2f us, get %.2f us, streamed put %.1f MB/s\n", size,
                   put_us, get_us, size / stream_us);
        }
        double started = now_us();
        for (int i = 0; i < 2000; i++) shmem_long_atomic_fetch_add(&word, 1, 1);
        printf("rshmem: fetch_add %.2f us\n", (now_us() - started) / 2000);
        started = now_us();
        for (int i = 0; i < 1000; i++) shmem_long_atomic_add(&word, 1, 1);
        shmem_quiet();
        printf("rshmem: add rate %.3f M/s\n", 1000 / (now_us() - started));
    }
    shmem_barrier_all();
    double started = now_us();
    for (int i = 0; i < 1000; i++) shmem_barrier_all();
    if (shmem_my_pe() == 0) printf("rshmem: barrier %.2f us\n", (now_us() - started) / 1000);
    shmem_free(target);
    shmem_finalize();
    return 0;
}
