/* sim_rate: how many SHMEM calls per wall second a C program makes on the simulator.
 * Each PE makes CALLS calls of one kind to its right neighbour (argv[2]: p, g, fadd, put;
 * default p), with a quiet every 64 calls, then a barrier; PE 0 prints the count.
 *   oshcc -O2 sim_rate.c -o sim_rate
 *   oshrun -np 8 --sim hgx8 --json ./sim_rate 100000 p
 * The rate is the calls of every PE over the report's wall_s (tools/bench/c/sim-rate.sh). */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long word;
static long block[8];

int main(int argc, char **argv) {
    long calls = argc > 1 ? atol(argv[1]) : 100000;
    const char *kind = argc > 2 ? argv[2] : "p";
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n;
    long sink = 0, made = 0;
    long src[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (long i = 0; i < calls; i++) {
        if (strcmp(kind, "g") == 0)
            sink += shmem_long_g(&word, right);
        else if (strcmp(kind, "fadd") == 0)
            sink += shmem_long_atomic_fetch_add(&word, 1, right);
        else if (strcmp(kind, "put") == 0)
            shmem_long_put(block, src, 8, right);
        else
            shmem_long_p(&word, i, right);
        made++;
        if (i % 64 == 63) {
            shmem_quiet();
            made++;
        }
    }
    shmem_barrier_all();
    if (me == 0)
        printf("sim_rate: %s: %ld calls per PE, %ld in all (sink %ld)\n", kind, made, made * n,
               sink % 2);
    shmem_finalize();
    return 0;
}
