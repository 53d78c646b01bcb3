/*
 * CUDA's vector types for programs built by rshmem-nvcc for the simulator: char1..4 to
 * double1..4, longlong, ulonglong, dim3 and the make_* constructors.
 *
 * Alignments follow CUDA's vector_types.h (a 2-element vector of 4-byte members is 8-byte
 * aligned, of 4 such members 16-byte aligned, ...), so structs holding them lay out as they do
 * on a GPU, and the device and host passes agree on every layout.
 */
#ifndef RSHMEM_SIM_VECTOR_TYPES_H
#define RSHMEM_SIM_VECTOR_TYPES_H

#ifdef __CUDA__
#define RSIM_HD __attribute__((host)) __attribute__((device))
#else
#define RSIM_HD
#endif
#define RSIM_HD_INLINE static __inline__ RSIM_HD

/* One family: T1..T4 with their alignments and make_T1..make_T4. */
#define RSIM_VECTOR_FAMILY(name, type, align2, align4)                                      \
    struct name##1 { type x; };                                                             \
    struct __attribute__((aligned(align2))) name##2 { type x, y; };                         \
    struct name##3 { type x, y, z; };                                                       \
    struct __attribute__((aligned(align4))) name##4 { type x, y, z, w; };                   \
    typedef struct name##1 name##1;                                                         \
    typedef struct name##2 name##2;                                                         \
    typedef struct name##3 name##3;                                                         \
    typedef struct name##4 name##4;                                                         \
    RSIM_HD_INLINE name##1 make_##name##1(type x) { name##1 v = {x}; return v; }            \
    RSIM_HD_INLINE name##2 make_##name##2(type x, type y) { name##2 v = {x, y}; return v; } \
    RSIM_HD_INLINE name##3 make_##name##3(type x, type y, type z) {                         \
        name##3 v = {x, y, z};                                                              \
        return v;                                                                           \
    }                                                                                       \
    RSIM_HD_INLINE name##4 make_##name##4(type x, type y, type z, type w) {                 \
        name##4 v = {x, y, z, w};                                                           \
        return v;                                                                           \
    }

RSIM_VECTOR_FAMILY(char, signed char, 2, 4)
RSIM_VECTOR_FAMILY(uchar, unsigned char, 2, 4)
RSIM_VECTOR_FAMILY(short, short, 4, 8)
RSIM_VECTOR_FAMILY(ushort, unsigned short, 4, 8)
RSIM_VECTOR_FAMILY(int, int, 8, 16)
RSIM_VECTOR_FAMILY(uint, unsigned int, 8, 16)
RSIM_VECTOR_FAMILY(long, long, 16, 16)
RSIM_VECTOR_FAMILY(ulong, unsigned long, 16, 16)
RSIM_VECTOR_FAMILY(longlong, long long, 16, 16)
RSIM_VECTOR_FAMILY(ulonglong, unsigned long long, 16, 16)
RSIM_VECTOR_FAMILY(float, float, 8, 16)
RSIM_VECTOR_FAMILY(double, double, 16, 16)

#undef RSIM_VECTOR_FAMILY

/* A launch's grid or block shape; unset dimensions are 1. */
struct dim3 {
    unsigned int x, y, z;
#ifdef __cplusplus
    RSIM_HD constexpr dim3(unsigned int vx = 1, unsigned int vy = 1,
                                                                 unsigned int vz = 1)
        : x(vx), y(vy), z(vz) {}
    RSIM_HD constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    RSIM_HD constexpr operator uint3() const { return uint3{x, y, z}; }
#endif
};
typedef struct dim3 dim3;

#undef RSIM_HD_INLINE
#undef RSIM_HD
#endif
