/* ending: a PE that ends a simulated run, in each way a program can (argv[1] picks):
 * 0 a call the library refuses, 1 exit, 2 a crash, 3 a deadlock, 4 shmem_global_exit.
 * The run must name the PE every time. */
#include <shmem.h>
#include <stdlib.h>
#include <stdio.h>
int main(int argc, char **argv) {
    shmem_init();
    int me = shmem_my_pe();
    int mode = argc > 1 ? atoi(argv[1]) : 0;
    static long x;
    if (mode == 0 && me == 1) shmem_long_p(&x, 1, 7);      /* bad PE */
    if (mode == 1 && me == 1) exit(3);                       /* exit early */
    if (mode == 2 && me == 1) { int *p = 0; *p = 1; }        /* crash */
    if (mode == 3 && me == 0) shmem_long_wait_until(&x, SHMEM_CMP_EQ, 5); /* deadlock */
    if (mode == 4 && me == 1) shmem_global_exit(4);
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
