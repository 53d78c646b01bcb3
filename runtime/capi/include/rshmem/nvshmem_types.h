/*
 * NVSHMEM's type tables as X-macros, for nvshmem.h: each family is one list, and every typed
 * function of the family is generated from it by the preprocessor, so that a type is added in
 * one place and gets the same body as the others.
 *
 * An entry is X(NAME, TYPE, KIND): NVSHMEM's name of the type (nvshmem_NAME_put), the C type,
 * and its RSHMEMD_KIND_* (the device primitives take RSHMEMD_TYPE(kind, size)). The lists are
 * NVSHMEM's standard RMA, AMO, point-to-point synchronisation and reduction types, which are
 * OpenSHMEM's, so each name has its shmem_NAME_* host counterpart in shmem.h.
 */
#ifndef RSHMEM_NVSHMEM_TYPES_H
#define RSHMEM_NVSHMEM_TYPES_H

/* Plain char's signedness is the target's. */
#define NVSHMEMI_CHAR_KIND ((char)-1 < 0 ? RSHMEMD_KIND_SIGNED : RSHMEMD_KIND_UNSIGNED)
#define NVSHMEMI_TYPE_CODE(TYPE, KIND) RSHMEMD_TYPE(KIND, (int)sizeof(TYPE))

#define NVSHMEMI_S RSHMEMD_KIND_SIGNED
#define NVSHMEMI_U RSHMEMD_KIND_UNSIGNED
#define NVSHMEMI_F RSHMEMD_KIND_FLOAT

/* Every RMA, broadcast, fcollect and alltoall type. */
#define NVSHMEMI_RMA_TYPES(X)                                                                      \
    X(float, float, NVSHMEMI_F)                                                                    \
    X(double, double, NVSHMEMI_F)                                                                  \
    X(char, char, NVSHMEMI_CHAR_KIND)                                                              \
    X(schar, signed char, NVSHMEMI_S)                                                              \
    X(short, short, NVSHMEMI_S)                                                                    \
    X(int, int, NVSHMEMI_S)                                                                        \
    X(long, long, NVSHMEMI_S)                                                                      \
    X(longlong, long long, NVSHMEMI_S)                                                             \
    X(uchar, unsigned char, NVSHMEMI_U)                                                            \
    X(ushort, unsigned short, NVSHMEMI_U)                                                          \
    X(uint, unsigned int, NVSHMEMI_U)                                                              \
    X(ulong, unsigned long, NVSHMEMI_U)                                                            \
    X(ulonglong, unsigned long long, NVSHMEMI_U)                                                   \
    X(int8, int8_t, NVSHMEMI_S)                                                                    \
    X(int16, int16_t, NVSHMEMI_S)                                                                  \
    X(int32, int32_t, NVSHMEMI_S)                                                                  \
    X(int64, int64_t, NVSHMEMI_S)                                                                  \
    X(uint8, uint8_t, NVSHMEMI_U)                                                                  \
    X(uint16, uint16_t, NVSHMEMI_U)                                                                \
    X(uint32, uint32_t, NVSHMEMI_U)                                                                \
    X(uint64, uint64_t, NVSHMEMI_U)                                                                \
    X(size, size_t, NVSHMEMI_U)                                                                    \
    X(ptrdiff, ptrdiff_t, NVSHMEMI_S)

/* NVSHMEM 3.x's 16-bit floating types, in its RMA, put-with-signal, broadcast, fcollect and
 * alltoall families and its min, max, sum and prod reductions; C++ only, where nvshmem.h found
 * cuda_fp16.h and cuda_bf16.h. Their p and g move the 16 bits (the device primitives take them
 * as 16-bit words); reductions compute in float and round to nearest even (bfloat16 is kind
 * RSHMEMD_KIND_BFLOAT, half is a 2-byte RSHMEMD_KIND_FLOAT). */
#ifdef NVSHMEMI_HAVE_HALF
#define NVSHMEMI_HALF_TYPES(X)                                                                     \
    X(half, half, NVSHMEMI_F)                                                                      \
    X(bfloat16, __nv_bfloat16, RSHMEMD_KIND_BFLOAT)
#else
#define NVSHMEMI_HALF_TYPES(X)
#endif

/* Sized RMA: X(BITS, unused, unused); the element is BITS / 8 bytes. */
#define NVSHMEMI_SIZES(X) X(8, _, _) X(16, _, _) X(32, _, _) X(64, _, _) X(128, _, _)

/* Atomics: inc, add, compare_swap and their fetching forms. */
#define NVSHMEMI_AMO_STANDARD_TYPES(X)                                                             \
    X(int, int, NVSHMEMI_S)                                                                        \
    X(long, long, NVSHMEMI_S)                                                                      \
    X(longlong, long long, NVSHMEMI_S)                                                             \
    X(uint, unsigned int, NVSHMEMI_U)                                                              \
    X(ulong, unsigned long, NVSHMEMI_U)                                                            \
    X(ulonglong, unsigned long long, NVSHMEMI_U)                                                   \
    X(int32, int32_t, NVSHMEMI_S)                                                                  \
    X(int64, int64_t, NVSHMEMI_S)                                                                  \
    X(uint32, uint32_t, NVSHMEMI_U)                                                                \
    X(uint64, uint64_t, NVSHMEMI_U)                                                                \
    X(size, size_t, NVSHMEMI_U)                                                                    \
    X(ptrdiff, ptrdiff_t, NVSHMEMI_S)

/* Atomics: fetch, set and swap (the standard types and the floating ones). */
#define NVSHMEMI_AMO_EXTENDED_TYPES(X)                                                             \
    NVSHMEMI_AMO_STANDARD_TYPES(X)                                                                 \
    X(float, float, NVSHMEMI_F)                                                                    \
    X(double, double, NVSHMEMI_F)

/* Atomics: and, or, xor and their fetching forms. */
#define NVSHMEMI_AMO_BITWISE_TYPES(X)                                                              \
    X(uint, unsigned int, NVSHMEMI_U)                                                              \
    X(ulong, unsigned long, NVSHMEMI_U)                                                            \
    X(ulonglong, unsigned long long, NVSHMEMI_U)                                                   \
    X(int32, int32_t, NVSHMEMI_S)                                                                  \
    X(int64, int64_t, NVSHMEMI_S)                                                                  \
    X(uint32, uint32_t, NVSHMEMI_U)                                                                \
    X(uint64, uint64_t, NVSHMEMI_U)

/* wait_until, test and their _all/_any/_some/_vector forms. */
#define NVSHMEMI_WAIT_TYPES(X)                                                                     \
    X(short, short, NVSHMEMI_S)                                                                    \
    X(int, int, NVSHMEMI_S)                                                                        \
    X(long, long, NVSHMEMI_S)                                                                      \
    X(longlong, long long, NVSHMEMI_S)                                                             \
    X(ushort, unsigned short, NVSHMEMI_U)                                                          \
    X(uint, unsigned int, NVSHMEMI_U)                                                              \
    X(ulong, unsigned long, NVSHMEMI_U)                                                            \
    X(ulonglong, unsigned long long, NVSHMEMI_U)                                                   \
    X(int32, int32_t, NVSHMEMI_S)                                                                  \
    X(int64, int64_t, NVSHMEMI_S)                                                                  \
    X(uint32, uint32_t, NVSHMEMI_U)                                                                \
    X(uint64, uint64_t, NVSHMEMI_U)                                                                \
    X(size, size_t, NVSHMEMI_U)                                                                    \
    X(ptrdiff, ptrdiff_t, NVSHMEMI_S)

/* Reductions and, or, xor. */
#define NVSHMEMI_REDUCE_BITWISE_TYPES(X)                                                           \
    X(uchar, unsigned char, NVSHMEMI_U)                                                            \
    X(ushort, unsigned short, NVSHMEMI_U)                                                          \
    X(uint, unsigned int, NVSHMEMI_U)                                                              \
    X(ulong, unsigned long, NVSHMEMI_U)                                                            \
    X(ulonglong, unsigned long long, NVSHMEMI_U)                                                   \
    X(int8, int8_t, NVSHMEMI_S)                                                                    \
    X(int16, int16_t, NVSHMEMI_S)                                                                  \
    X(int32, int32_t, NVSHMEMI_S)                                                                  \
    X(int64, int64_t, NVSHMEMI_S)                                                                  \
    X(uint8, uint8_t, NVSHMEMI_U)                                                                  \
    X(uint16, uint16_t, NVSHMEMI_U)                                                                \
    X(uint32, uint32_t, NVSHMEMI_U)                                                                \
    X(uint64, uint64_t, NVSHMEMI_U)                                                                \
    X(size, size_t, NVSHMEMI_U)

/* Reductions min, max, sum and prod. */
#define NVSHMEMI_REDUCE_ARITH_TYPES(X)                                                             \
    X(char, char, NVSHMEMI_CHAR_KIND)                                                              \
    X(schar, signed char, NVSHMEMI_S)                                                              \
    X(short, short, NVSHMEMI_S)                                                                    \
    X(int, int, NVSHMEMI_S)                                                                        \
    X(long, long, NVSHMEMI_S)                                                                      \
    X(longlong, long long, NVSHMEMI_S)                                                             \
    X(ptrdiff, ptrdiff_t, NVSHMEMI_S)                                                              \
    X(uchar, unsigned char, NVSHMEMI_U)                                                            \
    X(ushort, unsigned short, NVSHMEMI_U)                                                          \
    X(uint, unsigned int, NVSHMEMI_U)                                                              \
    X(ulong, unsigned long, NVSHMEMI_U)                                                            \
    X(ulonglong, unsigned long long, NVSHMEMI_U)                                                   \
    X(int8, int8_t, NVSHMEMI_S)                                                                    \
    X(int16, int16_t, NVSHMEMI_S)                                                                  \
    X(int32, int32_t, NVSHMEMI_S)                                                                  \
    X(int64, int64_t, NVSHMEMI_S)                                                                  \
    X(uint8, uint8_t, NVSHMEMI_U)                                                                  \
    X(uint16, uint16_t, NVSHMEMI_U)                                                                \
    X(uint32, uint32_t, NVSHMEMI_U)                                                                \
    X(uint64, uint64_t, NVSHMEMI_U)                                                                \
    X(size, size_t, NVSHMEMI_U)                                                                    \
    X(float, float, NVSHMEMI_F)                                                                    \
    X(double, double, NVSHMEMI_F)

#endif
