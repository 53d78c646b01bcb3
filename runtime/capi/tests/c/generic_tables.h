/* generic_tables.h: the specification's type tables of the generic names, as X-macros, for
 * the generic_* test programs (C11 and C++).
 *
 * Each row is X(TYPE, NAME, HIGH): the C type as a program would declare it (the typedefs
 * spelled as typedefs), the TYPENAME, and a value with a high bit of the type set (0 for the
 * floating and complex types), which a routine of the wrong width would lose. The rows come
 * from OpenSHMEM 1.5's tables; the order within a table does not matter. */
#ifndef RSHMEM_TEST_GENERIC_TABLES_H
#define RSHMEM_TEST_GENERIC_TABLES_H

#include <shmem.h>
#include <stddef.h>
#include <stdint.h>

/* The value k above a type's high bit. */
#define VALUE(T, HIGH, k) ((T) ((T) (HIGH) + (T) (k)))

/* Pieces several tables share. */
#define UNSIGNED_WIDE_ROWS(X)                                                             \
    X(unsigned int, uint, 1u << 31)                                                       \
    X(unsigned long, ulong, 1UL << 63)                                                    \
    X(unsigned long long, ulonglong, 1ULL << 63)
#define EXACT_32_64_ROWS(X)                                                               \
    X(int32_t, int32, INT32_C(1) << 30)                                                   \
    X(int64_t, int64, INT64_C(1) << 62)                                                   \
    X(uint32_t, uint32, UINT32_C(1) << 31)                                                \
    X(uint64_t, uint64, UINT64_C(1) << 63)
#define EXACT_8_16_ROWS(X)                                                                \
    X(int8_t, int8, 64)                                                                   \
    X(int16_t, int16, 1 << 14)                                                            \
    X(uint8_t, uint8, 128)                                                                \
    X(uint16_t, uint16, 1u << 15)

/* Table "Standard AMO Types and Names" (12 rows). */
#define STD_AMO_TYPES(X)                                                                  \
    X(int, int, 1 << 30)                                                                  \
    X(long, long, 1L << 62)                                                               \
    X(long long, longlong, 1LL << 62)                                                     \
    UNSIGNED_WIDE_ROWS(X)                                                                 \
    EXACT_32_64_ROWS(X)                                                                   \
    X(size_t, size, (size_t) 1 << 63)                                                     \
    X(ptrdiff_t, ptrdiff, (ptrdiff_t) 1 << 62)

/* Table "Extended AMO Types and Names" (14 rows). */
#define EXT_AMO_TYPES(X)                                                                  \
    X(float, float, 0)                                                                    \
    X(double, double, 0)                                                                  \
    STD_AMO_TYPES(X)

/* Table "Bitwise AMO Types and Names" (7 rows): no int, no long. */
#define BIT_AMO_TYPES(X) UNSIGNED_WIDE_ROWS(X) EXACT_32_64_ROWS(X)

/* Table "Point-to-Point Synchronization Types and Names" (14 rows; short and unsigned
 * short are deprecated rows). */
#define P2P_TYPES(X)                                                                      \
    X(short, short, 1 << 14)                                                              \
    X(unsigned short, ushort, 1u << 15)                                                   \
    STD_AMO_TYPES(X)

/* Table "Standard RMA Types and Names" (24 rows). */
#define RMA_TYPES(X)                                                                      \
    X(float, float, 0)                                                                    \
    X(double, double, 0)                                                                  \
    X(long double, longdouble, 0)                                                         \
    X(char, char, 64)                                                                     \
    X(signed char, schar, 64)                                                             \
    X(unsigned char, uchar, 128)                                                          \
    EXACT_8_16_ROWS(X)                                                                    \
    P2P_TYPES(X)

/* Table "Reduction Types, Names, and Supporting Operations for Team-Based Reductions":
 * the 14 rows with AND, OR, XOR (no char, no signed types but the exact-width ones) ... */
#define REDUCE_BIT_TYPES(X)                                                               \
    X(unsigned char, uchar, 128)                                                          \
    X(unsigned short, ushort, 1u << 15)                                                   \
    UNSIGNED_WIDE_ROWS(X)                                                                 \
    EXACT_8_16_ROWS(X)                                                                    \
    EXACT_32_64_ROWS(X)                                                                   \
    X(size_t, size, (size_t) 1 << 63)

/* ... the 24 with MAX, MIN ... */
#define REDUCE_MINMAX_TYPES(X)                                                            \
    REDUCE_BIT_TYPES(X)                                                                   \
    X(char, char, 64)                                                                     \
    X(signed char, schar, 64)                                                             \
    X(short, short, 1 << 14)                                                              \
    X(int, int, 1 << 30)                                                                  \
    X(long, long, 1L << 62)                                                               \
    X(long long, longlong, 1LL << 62)                                                     \
    X(ptrdiff_t, ptrdiff, (ptrdiff_t) 1 << 62)                                            \
    X(float, float, 0)                                                                    \
    X(double, double, 0)                                                                  \
    X(long double, longdouble, 0)

/* ... and all 26 with SUM, PROD (and the 1.6 scans). */
#define REDUCE_ARITH_TYPES(X)                                                             \
    REDUCE_MINMAX_TYPES(X)                                                                \
    X(shmem_complexd_t, complexd, 0)                                                      \
    X(shmem_complexf_t, complexf, 0)

/* The deprecated generic names keep OpenSHMEM 1.3's tables: fetch, set, swap ... */
#define DEPRECATED_EXT_TYPES(X)                                                           \
    X(float, float, 0)                                                                    \
    X(double, double, 0)                                                                  \
    DEPRECATED_STD_TYPES(X)

/* ... cswap, finc, inc, fadd, add ... */
#define DEPRECATED_STD_TYPES(X)                                                           \
    X(int, int, 1 << 30)                                                                  \
    X(long, long, 1L << 62)                                                               \
    X(long long, longlong, 1LL << 62)

/* ... and wait. */
#define DEPRECATED_WAIT_TYPES(X)                                                          \
    X(short, short, 1 << 14)                                                              \
    DEPRECATED_STD_TYPES(X)

#endif
