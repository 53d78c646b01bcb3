/*
 * A solver that sizes its symmetric arrays from the problem, more than the 1 GiB many
 * implementations give by default: run it with SHMEM_SYMMETRIC_SIZE raised (the usual
 * advice), e.g. SHMEM_SYMMETRIC_SIZE=2G. It touches one word per 16 MiB, so the memory it
 * really uses stays small, and checks a put into the far end of a neighbour's block.
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>

#define BLOCK_BYTES ((size_t)3 << 29) /* 1.5 GiB */
#define STRIDE_LONGS (((size_t)16 << 20) / sizeof(long))

int main(void)
{
    long *block;
    size_t i, n = BLOCK_BYTES / sizeof(long);
    int me, npes, right;

    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;

    block = shmem_malloc(BLOCK_BYTES);
    if (block == NULL) {
        fprintf(stderr, "PE %d: cannot allocate %zu bytes of symmetric memory\n", me,
                (size_t)BLOCK_BYTES);
        shmem_global_exit(1);
    }
    for (i = 0; i < n; i += STRIDE_LONGS)
        block[i] = -1;
    shmem_barrier_all();
    /* The last word of my right neighbour's block, and one in the middle. */
    shmem_long_p(&block[n - 1], 1000 + me, right);
    shmem_long_p(&block[n / 2], 2000 + me, right);
    shmem_barrier_all();
    {
        int left = (me + npes - 1) % npes;
        if (block[n - 1] != 1000 + left || block[n / 2] != 2000 + left) {
            fprintf(stderr, "PE %d: got %ld and %ld from PE %d\n", me, block[n - 1],
                    block[n / 2], left);
            return 1;
        }
    }
    shmem_free(block);
    if (me == 0)
        printf("big_heap: %d PEs with a %zu MiB block each\n", npes, BLOCK_BYTES >> 20);
    shmem_finalize();
    return 0;
}
