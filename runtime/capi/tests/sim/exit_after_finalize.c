/* exit_after_finalize: the way many applications end, shmem_finalize and then exit(0) (C11
 * 7.22.4.4: exit runs the atexit handlers, newest first, then ends the program with the
 * status). Each PE registers two handlers after shmem_init; each prints one line naming
 * its PE, so the output shows every PE's handlers ran once, on that PE, in reverse order.
 * The PE number is kept in a global: after shmem_finalize no OpenSHMEM call may be made
 * (OpenSHMEM 1.5 section 9.1.4). */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

static int me = -1;
static int handlers_run = 0;

static void registered_first(void) {
    handlers_run++;
    printf("atexit: PE %d registered_first (after %d)\n", me, handlers_run - 1);
}

static void registered_second(void) {
    handlers_run++;
    printf("atexit: PE %d registered_second (after %d)\n", me, handlers_run - 1);
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    atexit(registered_first);
    atexit(registered_second);
    static long total;
    shmem_long_atomic_add(&total, me + 1, 0);
    shmem_barrier_all();
    if (me == 0) {
        long n = shmem_n_pes();
        if (total != n * (n + 1) / 2) {
            fprintf(stderr, "FAIL exit_after_finalize: total %ld\n", total);
            exit(1);
        }
        printf("exit_after_finalize: ok at %ld PEs\n", n);
    }
    shmem_finalize();
    exit(0);
}
