/* Hello from every PE, and a ring: each PE puts its number into the next PE's static
 * `from_left`, then reads what its left neighbour put. Build and run:
 *   oshcc hello.c -o hello && oshrun -np 4 ./hello
 */
#include <shmem.h>
#include <stdio.h>

static int from_left = -1;

int main(void) {
    shmem_init();
    int me = shmem_my_pe();
    int n = shmem_n_pes();
    shmem_int_p(&from_left, me, (me + 1) % n);
    shmem_barrier_all();
    printf("hello from PE %d of %d; PE %d is on my left\n", me, n, from_left);
    int ok = from_left == (me + n - 1) % n;
    shmem_finalize();
    return ok ? 0 : 1;
}
