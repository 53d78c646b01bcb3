/* rma: remote memory access on the symmetric heap, in a ring (PE me writes to me+1, which at
 * one PE is itself).
 * Every standard RMA type (long double and the fixed-width ones included) through put, get,
 * p and g; putmem/getmem and the sized put/get 8..128; iput/iget; ibput/ibget (1.6, blocks of
 * bsize elements whose starts are dst/sst elements apart); put_nbi/get_nbi completed by
 * quiet; fence ordering a data put before its flag; pe_quiet (1.6). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

enum { N = 16 };

static int me, n, right, left;

/* Value i of PE pe's source, small enough for every type, char included. */
#define VAL(T, pe, i) ((T)((pe) * 10 + (i)))

#define RMA_TYPE(T, NAME)                                                                   \
    static void rma_##NAME(void) {                                                          \
        T *dst = (T *)shmem_malloc(N * sizeof(T));                                          \
        CHECK(dst != NULL, "shmem_malloc for " #NAME);                                      \
        T src[N], got[N];                                                                   \
        for (int i = 0; i < N; i++) {                                                       \
            src[i] = VAL(T, me, i);                                                         \
            dst[i] = (T)0;                                                                  \
        }                                                                                   \
        shmem_barrier_all();                                                                \
        shmem_##NAME##_put(dst, src, N, right);                                             \
        shmem_barrier_all();                                                                \
        for (int i = 0; i < N; i++)                                                         \
            CHECK(dst[i] == VAL(T, left, i), "shmem_" #NAME "_put element %d", i);          \
        shmem_##NAME##_get(got, dst, N, right);                                             \
        for (int i = 0; i < N; i++)                                                         \
            CHECK(got[i] == VAL(T, me, i), "shmem_" #NAME "_get element %d", i);            \
        shmem_barrier_all();                                                                \
        shmem_##NAME##_p(&dst[3], VAL(T, me, 7), right);                                    \
        shmem_barrier_all();                                                                \
        CHECK(dst[3] == VAL(T, left, 7), "shmem_" #NAME "_p");                              \
        CHECK(shmem_##NAME##_g(&dst[3], right) == VAL(T, me, 7), "shmem_" #NAME "_g");      \
        shmem_barrier_all();                                                                \
        shmem_free(dst);                                                                    \
    }

#define RMA_TYPES(X)                                                                        \
    X(char, char) X(signed char, schar) X(short, short) X(int, int) X(long, long)          \
    X(long long, longlong) X(unsigned char, uchar) X(unsigned short, ushort)                \
    X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong)          \
    X(int8_t, int8) X(int16_t, int16) X(int32_t, int32) X(int64_t, int64)                   \
    X(uint8_t, uint8) X(uint16_t, uint16) X(uint32_t, uint32) X(uint64_t, uint64)           \
    X(size_t, size) X(ptrdiff_t, ptrdiff) X(float, float) X(double, double)                 \
    X(long double, longdouble)

RMA_TYPES(RMA_TYPE)

/* putmem/getmem and the sized forms, on bytes that name their writer. */
static void rma_mem(void) {
    enum { BYTES = 256 };
    unsigned char *dst = shmem_malloc(BYTES);
    unsigned char src[BYTES], got[BYTES];
    for (int i = 0; i < BYTES; i++)
        src[i] = (unsigned char)(me * 31 + i);
    memset(dst, 0, BYTES);
    shmem_barrier_all();
    shmem_putmem(dst, src, 100, right);
    shmem_put8(dst + 100, src + 100, 4, right);
    shmem_put16(dst + 104, src + 104, 4, right);
    shmem_put32(dst + 112, src + 112, 4, right);
    shmem_put64(dst + 128, src + 128, 4, right);
    shmem_put128(dst + 160, src + 160, 4, right);
    shmem_barrier_all();
    for (int i = 0; i < 224; i++)
        CHECK(dst[i] == (unsigned char)(left * 31 + i), "putmem/putSIZE byte %d", i);
    memset(got, 0, BYTES);
    shmem_getmem(got, dst, 100, right);
    shmem_get8(got + 100, dst + 100, 4, right);
    shmem_get16(got + 104, dst + 104, 4, right);
    shmem_get32(got + 112, dst + 112, 4, right);
    shmem_get64(got + 128, dst + 128, 4, right);
    shmem_get128(got + 160, dst + 160, 4, right);
    for (int i = 0; i < 224; i++)
        CHECK(got[i] == (unsigned char)(me * 31 + i), "getmem/getSIZE byte %d", i);
    shmem_barrier_all();
    shmem_free(dst);
}

/* Strided: iput/iget element strides, ibput/ibget block strides. */
static void rma_strided(void) {
    long *dst = shmem_malloc(4 * N * sizeof(long));
    long src[4 * N], got[4 * N];
    for (int i = 0; i < 4 * N; i++) {
        src[i] = me * 1000 + i;
        dst[i] = -1;
    }
    shmem_barrier_all();
    /* Elements 0..7 of src, every other one of dst. */
    shmem_long_iput(dst, src, 2, 1, 8, right);
    shmem_barrier_all();
    for (int i = 0; i < 16; i++)
        CHECK(dst[i] == (i % 2 == 0 ? left * 1000 + i / 2 : -1), "iput element %d", i);
    shmem_long_iget(got, dst, 1, 2, 8, right);
    for (int i = 0; i < 8; i++)
        CHECK(got[i] == me * 1000 + i, "iget element %d", i);
    shmem_barrier_all();

    for (int i = 0; i < 4 * N; i++)
        dst[i] = -1;
    shmem_barrier_all();
    /* 3 blocks of 2: source blocks start 3 apart (0,1 3,4 6,7), dest blocks 4 apart. */
    shmem_long_ibput(dst, src, 4, 3, 2, 3, right);
    shmem_barrier_all();
    for (int b = 0; b < 3; b++)
        for (int k = 0; k < 2; k++)
            CHECK(dst[4 * b + k] == left * 1000 + 3 * b + k, "ibput block %d element %d", b, k);
    CHECK(dst[2] == -1 && dst[3] == -1 && dst[6] == -1, "ibput wrote between blocks");
    for (int i = 0; i < 4 * N; i++)
        got[i] = -2;
    /* Back again: blocks of right's dest 4 apart into got blocks 2 apart (contiguous). */
    shmem_long_ibget(got, dst, 2, 4, 2, 3, right);
    for (int b = 0; b < 3; b++)
        for (int k = 0; k < 2; k++)
            CHECK(got[2 * b + k] == me * 1000 + 3 * b + k, "ibget block %d element %d", b, k);
    CHECK(got[6] == -2, "ibget wrote past its blocks");
    shmem_barrier_all();
    shmem_free(dst);
}

/* Non-blocking puts and gets, completed by quiet; a fenced flag; pe_quiet. */
static void rma_nbi(void) {
    enum { BIG = 4096 };
    int *dst = shmem_malloc(BIG * sizeof(int));
    long *flag = shmem_malloc(sizeof(long));
    int *src = malloc(BIG * sizeof(int)), *got = malloc(BIG * sizeof(int));
    for (int i = 0; i < BIG; i++) {
        src[i] = me * BIG + i;
        dst[i] = -1;
    }
    *flag = 0;
    shmem_barrier_all();
    shmem_int_put_nbi(dst, src, BIG / 2, right);
    shmem_putmem_nbi(dst + BIG / 2, src + BIG / 2, BIG / 2 * sizeof(int), right);
    shmem_fence();
    shmem_long_p(flag, 1, right);
    shmem_quiet();
    shmem_long_wait_until(flag, SHMEM_CMP_EQ, 1);
    /* The fence orders the data before the flag at the target. */
    for (int i = 0; i < BIG; i++)
        CHECK(dst[i] == left * BIG + i, "put_nbi + fence element %d", i);
    shmem_barrier_all();
    shmem_int_get_nbi(got, dst, BIG / 2, right);
    shmem_getmem_nbi(got + BIG / 2, dst + BIG / 2, BIG / 2 * sizeof(int), right);
    shmem_quiet();
    for (int i = 0; i < BIG; i++)
        CHECK(got[i] == me * BIG + i, "get_nbi + quiet element %d", i);
    shmem_barrier_all();
    shmem_int_p(dst, 77, right);
    int target = right;
    shmem_pe_quiet(&target, 1);
    shmem_pe_quiet(NULL, 0);
    shmem_barrier_all();
    CHECK(dst[0] == 77, "p then pe_quiet");
    free(src);
    free(got);
    shmem_free(flag);
    shmem_free(dst);
}

int main(void) {
    shmem_init();
    ring_of_pes(&me, &n, &right, &left);
#define CALL(T, NAME) rma_##NAME();
    RMA_TYPES(CALL)
    rma_mem();
    rma_strided();
    rma_nbi();
    FINISH("rma");
    return 0;
}
