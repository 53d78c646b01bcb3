/* ending: a PE that ends its run early, in each way a program can (argv[1] picks):
 * 0 a call the library refuses, 1 exit(3) while the others wait for it, 2 a crash,
 * 3 a deadlock, 4 shmem_global_exit(4), 5 abort(), 6 shmem_global_exit(0), 7 a crash on the
 * NULL of a shmem_malloc larger than the heap (OpenSHMEM 1.5 section 9.3.1: NULL on every
 * PE), 8 _exit(5) and 9 quick_exit(6), which run no atexit handler (C11 7.22.4.5, 7.22.4.7),
 * 10 exit(4) from a thread PE 1 started, which ends its process (C11 7.22.4.4), so PE 1 alone.
 * The run must name the PE every time, and end with the status processes end with. */
#include <shmem.h>
#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>
#include <pthread.h>

static int me;

static void never_at_quick_ends(void) {
    printf("atexit: PE %d\n", me);
}

static void *exit_from_thread(void *arg) {
    (void)arg;
    exit(4);
}

int main(int argc, char **argv) {
    shmem_init();
    me = shmem_my_pe();
    int mode = argc > 1 ? atoi(argv[1]) : 0;
    if (mode == 8 || mode == 9) atexit(never_at_quick_ends);
    static long x;
    if (mode == 0 && me == 1) shmem_long_p(&x, 1, 7);      /* bad PE */
    if (mode == 1 && me == 1) exit(3);                       /* exit early */
    if (mode == 2 && me == 1) { int *p = 0; *p = 1; }        /* crash */
    if (mode == 3 && me == 0) shmem_long_wait_until(&x, SHMEM_CMP_EQ, 5); /* deadlock */
    if (mode == 4 && me == 1) shmem_global_exit(4);
    if (mode == 5 && me == 1) abort();
    if (mode == 6 && me == 1) shmem_global_exit(0);
    if (mode == 7) {
        long *huge = shmem_malloc((size_t)1 << 40);                 /* 1 TiB */
        if (me == 1) huge[0] = 1;                                   /* NULL unchecked */
    }
    if (mode == 8 && me == 1) _exit(5);
    if (mode == 9 && me == 1) quick_exit(6);
    if (mode == 10 && me == 1) {
        pthread_t thread;
        pthread_create(&thread, NULL, exit_from_thread, NULL);
        pthread_join(thread, NULL);
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
