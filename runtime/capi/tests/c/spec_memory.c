/* spec_memory: the memory management routines checked against the words of OpenSHMEM 1.5,
 * section 9.3 (shmem_malloc, shmem_free, shmem_realloc, shmem_align, shmem_malloc_with_hints,
 * shmem_calloc) and section 9.1 (shmem_ptr, shmem_addr_accessible, shmem_pe_accessible):
 * sizes of 0, null pointers, alignments, hints, and what each returns. */
#include <stdint.h>
#include <string.h>

#include "check.h"

int main(void) {
    shmem_init();
    int me, n, right, left;
    ring_of_pes(&me, &n, &right, &left);

    /* 9.3, shmem_malloc: "When size is zero, ... returns a null pointer". */
    CHECK(shmem_malloc(0) == NULL, "shmem_malloc(0)");
    /* 9.3, shmem_calloc: "either count or size is 0, the return value is a null pointer". */
    CHECK(shmem_calloc(0, 8) == NULL, "shmem_calloc(0, 8)");
    CHECK(shmem_calloc(8, 0) == NULL, "shmem_calloc(8, 0)");
    /* 9.3, shmem_align and shmem_malloc_with_hints: size zero gives a null pointer. */
    CHECK(shmem_align(64, 0) == NULL, "shmem_align(64, 0)");
    CHECK(shmem_malloc_with_hints(0, SHMEM_MALLOC_ATOMICS_REMOTE) == NULL,
          "shmem_malloc_with_hints(0, ...)");
    /* 9.3, shmem_free: "If ptr is a null pointer, no action is performed". */
    shmem_free(NULL);

    /* 9.3, shmem_align: "returns an aligned symmetric address whose value is a multiple of
     * alignment", for every power of two that is a multiple of sizeof(void *). */
    for (size_t alignment = sizeof(void *); alignment <= ((size_t)1 << 20); alignment <<= 1) {
        char *p = shmem_align(alignment, 3 * alignment + 1);
        CHECK(p != NULL, "shmem_align(%#zx) gave NULL", alignment);
        CHECK((uintptr_t)p % alignment == 0, "shmem_align(%#zx) gave %p", alignment, (void *)p);
        /* Symmetric: a put to the same address reaches the neighbour's block. */
        p[3 * alignment] = 0;
        shmem_barrier_all();
        shmem_char_p(&p[3 * alignment], (char)(me + 1), right);
        shmem_barrier_all();
        CHECK(p[3 * alignment] == (char)(left + 1), "aligned block %#zx got %d", alignment,
              p[3 * alignment]);
        shmem_free(p);
    }

    /* 9.3, shmem_malloc_with_hints: "If the implementation cannot optimize, the behavior is
     * same as shmem_malloc": hints it does not know are no error. */
    long hint_sets[] = {0, SHMEM_MALLOC_ATOMICS_REMOTE, SHMEM_MALLOC_SIGNAL_REMOTE,
                        SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE, 1L << 20,
                        (1L << 30) | SHMEM_MALLOC_ATOMICS_REMOTE};
    for (size_t h = 0; h < sizeof hint_sets / sizeof hint_sets[0]; h++) {
        long *p = shmem_malloc_with_hints(4 * sizeof(long), hint_sets[h]);
        CHECK(p != NULL, "shmem_malloc_with_hints(32, %#lx) gave NULL", hint_sets[h]);
        CHECK((uintptr_t)p % 16 == 0, "hinted block %p is not aligned for any type", (void *)p);
        shmem_long_atomic_set(p, me, right);
        shmem_barrier_all();
        CHECK(*p == left, "hinted block %#lx holds %ld", hint_sets[h], *p);
        shmem_free(p);
    }

    /* 9.3, shmem_realloc: "If ptr is a null pointer, ... behaves like shmem_malloc". */
    int *r = shmem_realloc(NULL, 4 * sizeof(int));
    CHECK(r != NULL, "shmem_realloc(NULL, 16)");
    for (int i = 0; i < 4; i++)
        r[i] = me * 10 + i;
    /* "The contents of the block are unchanged up to the lesser of the new and old sizes." */
    r = shmem_realloc(r, 4096 * sizeof(int));
    CHECK(r != NULL, "shmem_realloc to 16 KiB");
    for (int i = 0; i < 4; i++)
        CHECK(r[i] == me * 10 + i, "realloc kept element %d as %d", i, r[i]);
    r = shmem_realloc(r, 2 * sizeof(int));
    CHECK(r != NULL && r[1] == me * 10 + 1, "realloc to a smaller size");
    /* "If size is 0 and ptr is not a null pointer, the block ... is freed" (and the call
     * returns a null pointer, as nothing is allocated). */
    CHECK(shmem_realloc(r, 0) == NULL, "shmem_realloc(p, 0)");
    CHECK(shmem_realloc(NULL, 0) == NULL, "shmem_realloc(NULL, 0)");

    /* 9.1, shmem_ptr: on the calling PE it is the object's own address. */
    long *obj = shmem_malloc(sizeof(long));
    CHECK(shmem_ptr(obj, me) == (void *)obj, "shmem_ptr to myself");
    /* A non-null answer for a peer is a usable load/store address of its object. */
    *obj = 1000 + me;
    shmem_barrier_all();
    long *peer = shmem_ptr(obj, right);
    if (peer != NULL)
        CHECK(*peer == 1000 + right, "shmem_ptr load gave %ld", *peer);
    /* "Otherwise, a NULL address is returned": a PE that does not exist cannot be reached. */
    CHECK(shmem_ptr(obj, n) == NULL && shmem_ptr(obj, -1) == NULL, "shmem_ptr to no PE");
    shmem_barrier_all();

    /* 9.1, shmem_addr_accessible: 1 for a symmetric object on every PE, 0 for a private one. */
    long local = 0;
    for (int pe = 0; pe < n; pe++) {
        CHECK(shmem_addr_accessible(obj, pe) == 1, "heap object on PE %d", pe);
        CHECK(shmem_addr_accessible(&local, pe) == 0, "stack object on PE %d", pe);
        /* 9.1, shmem_pe_accessible: every PE of the program is reachable. */
        CHECK(shmem_pe_accessible(pe) == 1, "shmem_pe_accessible(%d)", pe);
    }
    /* A PE that does not exist is not accessible: both queries answer 0. */
    CHECK(shmem_addr_accessible(obj, n) == 0, "shmem_addr_accessible to PE n");
    CHECK(shmem_pe_accessible(n) == 0 && shmem_pe_accessible(-1) == 0,
          "shmem_pe_accessible of no PE");
    shmem_free(obj);

    FINISH("spec_memory");
    return 0;
}
