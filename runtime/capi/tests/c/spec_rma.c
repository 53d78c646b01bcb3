/* spec_rma: remote memory access and signals checked against the words of OpenSHMEM 1.5,
 * section 9.6 (put, get, iput, iget, put_nbi, get_nbi; ibput and ibget of 1.6) and section
 * 9.8 (put_signal): transfers of no elements, with null buffers, move nothing and return;
 * strides follow the text (at least 1, blocks may overlap); a put whose source and
 * destination are the same object keeps it. */
#include <stdint.h>
#include <string.h>

#include "check.h"

#define N 8

static long target[N];
static uint64_t sig;

int main(void) {
    shmem_init();
    int me, n, right, left;
    ring_of_pes(&me, &n, &right, &left);

    for (int i = 0; i < N; i++)
        target[i] = 100 * me + i;
    shmem_barrier_all();

    /* 9.6: nelems is "the number of elements in the dest and source arrays"; with none there
     * is nothing to read or write, so the arrays may be null. */
    shmem_putmem(NULL, NULL, 0, right);
    shmem_getmem(NULL, NULL, 0, right);
    shmem_putmem_nbi(NULL, NULL, 0, right);
    shmem_getmem_nbi(NULL, NULL, 0, right);
    shmem_long_put(NULL, NULL, 0, right);
    shmem_long_get(NULL, NULL, 0, right);
    shmem_long_put_nbi(NULL, NULL, 0, right);
    shmem_long_get_nbi(NULL, NULL, 0, right);
    shmem_put64(NULL, NULL, 0, right);
    shmem_get32(NULL, NULL, 0, right);
    shmem_put128_nbi(NULL, NULL, 0, right);
    shmem_ctx_long_put(SHMEM_CTX_DEFAULT, NULL, NULL, 0, right);
    shmem_ctx_getmem(SHMEM_CTX_DEFAULT, NULL, NULL, 0, right);
    shmem_int_iput(NULL, NULL, 1, 1, 0, right);
    shmem_int_iget(NULL, NULL, 1, 1, 0, right);
    shmem_iput64(NULL, NULL, 2, 3, 0, right);
    shmem_iget16(NULL, NULL, 2, 3, 0, right);
    shmem_long_ibput(NULL, NULL, 4, 4, 2, 0, right);
    shmem_long_ibget(NULL, NULL, 4, 4, 0, 2, right);
    /* 1.6, shmem_pe_quiet: an empty set of PEs is nothing to wait for. */
    shmem_pe_quiet(NULL, 0);
    shmem_quiet();
    shmem_barrier_all();
    for (int i = 0; i < N; i++)
        CHECK(target[i] == 100 * me + i, "a zero-length call changed element %d to %ld", i,
              target[i]);

    /* 9.8, shmem_put_signal: with no data the signal is still delivered. */
    sig = 0;
    shmem_barrier_all();
    shmem_putmem_signal(NULL, NULL, 0, &sig, 5, SHMEM_SIGNAL_SET, right);
    shmem_fence(); /* the set reaches the signal before the add */
    shmem_long_put_signal_nbi(NULL, NULL, 0, &sig, 2, SHMEM_SIGNAL_ADD, right);
    shmem_quiet();
    shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, 7);
    CHECK(shmem_signal_fetch(&sig) == 7, "signal after zero-length puts");
    shmem_barrier_all();

    /* 9.6, shmem_iput: "Both strides, dst and sst, must be greater than or equal to 1", and
     * element i goes from source[i * sst] to dest[i * dst]. */
    long src[2 * N];
    for (int i = 0; i < 2 * N; i++)
        src[i] = 1000 * me + i;
    shmem_long_iput(target, src, 2, 3, N / 2, right);
    shmem_barrier_all();
    for (int i = 0; i < N / 2; i++) {
        CHECK(target[2 * i] == 1000 * left + 3 * i, "iput element %d is %ld", i, target[2 * i]);
        CHECK(target[2 * i + 1] == 100 * me + 2 * i + 1, "iput wrote between the strides");
    }
    /* 9.6, shmem_iget: the same with the roles swapped; a single element needs no stride. */
    long got[N] = {0};
    shmem_long_iget(got, target, 1, 2, N / 2, right);
    for (int i = 0; i < N / 2; i++)
        CHECK(got[i] == 1000 * me + 3 * i, "iget element %d is %ld", i, got[i]);
    long one = 0;
    shmem_long_iget(&one, &target[2], 1, 1, 1, right);
    CHECK(one == 1000 * me + 3, "iget of one element gave %ld", one);
    shmem_barrier_all();

    /* 1.6, shmem_ibget: nblocks blocks of bsize elements, one every sst of source and one
     * every dst of dest. */
    long blocks[N] = {0};
    shmem_long_ibget(blocks, target, 3, 4, 2, 2, right);
    CHECK(blocks[0] == 1000 * me && blocks[1] == 100 * right + 1,
          "ibget block 0 is %ld %ld", blocks[0], blocks[1]);
    CHECK(blocks[3] == 1000 * me + 6 && blocks[4] == 100 * right + 5, "ibget block 1 is %ld %ld",
          blocks[3], blocks[4]);
    CHECK(blocks[2] == 0 && blocks[5] == 0, "ibget wrote between the blocks");
    /* The strides need only be at least 1: source blocks that overlap read elements twice. */
    long twice[4] = {0};
    shmem_long_ibget(twice, target, 2, 1, 2, 2, right);
    CHECK(twice[0] == 1000 * me && twice[1] == 100 * right + 1 && twice[2] == 100 * right + 1 &&
              twice[3] == 1000 * me + 3,
          "ibget of overlapping blocks gave %ld %ld %ld %ld", twice[0], twice[1], twice[2],
          twice[3]);
    shmem_barrier_all();

    /* 9.6, shmem_put: to the calling PE with source and dest the same object, the data the
     * object holds is the data copied, so it is unchanged. */
    for (int i = 0; i < N; i++)
        target[i] = 7 * i + me;
    shmem_long_put(target, target, N, me);
    shmem_getmem(target, target, N * sizeof(long), me);
    for (int i = 0; i < N; i++)
        CHECK(target[i] == 7 * i + me, "in-place put changed element %d to %ld", i, target[i]);

    FINISH("spec_rma");
    return 0;
}
