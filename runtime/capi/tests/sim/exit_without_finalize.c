/* exit_without_finalize: every PE ends with exit(0) and no shmem_finalize, as some
 * applications do. shmem_finalize is collective (OpenSHMEM 1.5 section 9.1.4); a process
 * that exits without it just ends, and on the simulator the PE's implicit finalize meets
 * the others' the same way, so the run succeeds. Each PE's atexit handler prints one line
 * naming the PE (C11 7.22.4.4). */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

static int me = -1;

static void say_done(void) {
    printf("atexit: PE %d done\n", me);
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    atexit(say_done);
    static long from_left = -1;
    int n = shmem_n_pes();
    shmem_long_p(&from_left, me, (me + 1) % n);
    shmem_barrier_all();
    if (from_left != (me + n - 1) % n) {
        fprintf(stderr, "FAIL exit_without_finalize: PE %d got %ld\n", me, from_left);
        exit(1);
    }
    if (me == 0)
        printf("exit_without_finalize: ok at %d PEs\n", n);
    exit(0);
}
