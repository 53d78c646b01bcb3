/* memory: the symmetric heap.
 * malloc/calloc/align/realloc/free (zeroing, alignment, content kept across realloc, size 0
 * gives NULL, freed space reused), malloc_with_hints, the deprecated shmalloc/shfree/
 * shrealloc/shmemalign, shmem_ptr (self gives the same address; a peer's, when not NULL,
 * reads the peer's data), and addr_accessible for heap and non-symmetric addresses. */
#include <stdint.h>
#include <string.h>

#include "check.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n;

    CHECK(shmem_malloc(0) == NULL, "shmem_malloc(0) is not NULL");

    long *a = shmem_malloc(64 * sizeof(long));
    CHECK(a != NULL, "shmem_malloc(512)");
    /* As C's malloc: aligned for any type, whatever the size asked for. */
    char *odd[3] = {shmem_malloc(1), shmem_malloc(3), shmem_calloc(5, 1)};
    for (int i = 0; i < 3; i++)
        CHECK(odd[i] != NULL && (uintptr_t)odd[i] % 16 == 0, "allocation %d aligned to 16", i);
    for (int i = 2; i >= 0; i--)
        shmem_free(odd[i]);
    for (int i = 0; i < 64; i++)
        a[i] = me * 100 + i;
    int *z = shmem_calloc(1000, sizeof(int));
    CHECK(z != NULL, "shmem_calloc");
    for (int i = 0; i < 1000; i++)
        CHECK(z[i] == 0, "shmem_calloc element %d is %d", i, z[i]);
    double *al = shmem_align(4096, 10 * sizeof(double));
    CHECK(al != NULL && (uintptr_t)al % 4096 == 0, "shmem_align(4096) gave %p", (void *)al);
    shmem_barrier_all();

    /* The allocations are symmetric: a put to the same address lands on the peer's object. */
    shmem_long_put(a + 32, a, 32, right);
    shmem_double_p(al, 1.5 * me, right);
    shmem_barrier_all();
    int left = (me + n - 1) % n;
    for (int i = 0; i < 32; i++)
        CHECK(a[32 + i] == left * 100 + i, "put into malloc'd block, element %d", i);
    CHECK(al[0] == 1.5 * left, "put into aligned block");

    /* realloc keeps the content up to the smaller size. */
    a = shmem_realloc(a, 4096 * sizeof(long));
    CHECK(a != NULL, "shmem_realloc to 32 KiB");
    for (int i = 0; i < 32; i++)
        CHECK(a[i] == me * 100 + i, "shmem_realloc lost element %d", i);
    a[4095] = me;
    shmem_barrier_all();
    CHECK(shmem_long_g(&a[4095], right) == right, "g from the grown block");
    shmem_barrier_all();

    /* A block large enough to need more than a small heap's first chunk. */
    char *big = shmem_malloc(4 << 20);
    CHECK(big != NULL, "shmem_malloc(4 MiB)");
    memset(big, me, 4 << 20);
    shmem_barrier_all();
    CHECK(shmem_char_g(big + (4 << 20) - 1, right) == (char)right, "last byte of 4 MiB block");
    shmem_barrier_all();

    /* Freed space is reused: many rounds of allocate and free must not run out. */
    for (int r = 0; r < 200; r++) {
        void *p = shmem_malloc(1 << 16);
        CHECK(p != NULL, "round %d of malloc/free ran out", r);
        shmem_free(p);
    }
    shmem_free(NULL); /* a no-op by the spec */

    /* Hints: the memory works like any other, atomics included. */
    long *h = shmem_malloc_with_hints(8 * sizeof(long), SHMEM_MALLOC_ATOMICS_REMOTE);
    CHECK(h != NULL, "shmem_malloc_with_hints(ATOMICS_REMOTE)");
    long *h0 = shmem_malloc_with_hints(8 * sizeof(long), 0);
    CHECK(h0 != NULL, "shmem_malloc_with_hints(0)");
    long *hs = shmem_malloc_with_hints(8 * sizeof(long), SHMEM_MALLOC_SIGNAL_REMOTE);
    CHECK(hs != NULL, "shmem_malloc_with_hints(SIGNAL_REMOTE)");
    h[0] = 0;
    shmem_barrier_all();
    shmem_long_atomic_add(&h[0], 1, 0);
    shmem_barrier_all();
    if (me == 0)
        CHECK(h[0] == n, "atomics on hinted memory gave %ld", h[0]);
    shmem_barrier_all();

    /* shmem_ptr: the same address for oneself; a peer's data where it gives one. */
    a[0] = me + 1000;
    shmem_barrier_all();
    CHECK(shmem_ptr(a, me) == (void *)a, "shmem_ptr to oneself");
    long *peer = shmem_ptr(a, right);
    if (peer != NULL)
        CHECK(*peer == right + 1000, "shmem_ptr to PE %d reads %ld", right, *peer);

    /* addr_accessible: heap addresses are, a stack address is not. */
    long on_stack = 0;
    for (int pe = 0; pe < n; pe++) {
        CHECK(shmem_addr_accessible(a, pe) == 1, "heap address not accessible on PE %d", pe);
        CHECK(shmem_addr_accessible(&on_stack, pe) == 0, "stack address accessible on %d", pe);
    }
    shmem_barrier_all();

    /* The deprecated names of 1.0. */
    long *old = shmalloc(16 * sizeof(long));
    CHECK(old != NULL, "shmalloc");
    old = shrealloc(old, 32 * sizeof(long));
    CHECK(old != NULL, "shrealloc");
    void *oal = shmemalign(256, 100);
    CHECK(oal != NULL && (uintptr_t)oal % 256 == 0, "shmemalign");
    shmem_barrier_all();
    shfree(oal);
    shfree(old);

    shmem_free(hs);
    shmem_free(h0);
    shmem_free(h);
    shmem_free(big);
    shmem_free(al);
    shmem_free(z);
    shmem_free(a);
    PASS("memory");
    shmem_finalize();
    return 0;
}
