/*
 * CUDA's 16-bit floating types for programs built by rshmem-nvcc for the simulator: `__half`
 * (IEEE binary16, cuda_fp16.h) and `__nv_bfloat16` (the high half of a float, cuda_bf16.h).
 *
 * Each is its 16 bits of storage, as on a GPU (2 bytes, 2-aligned), so that arrays of them are
 * laid out as the device's and move through RMA unchanged. Arithmetic converts to float,
 * computes there and rounds back to nearest even, which is what the GPU's half instructions
 * give for a single operation (a half sum or product is exact in float). C++ only: the
 * conversions and operators are constructors and overloads, as in CUDA's headers.
 */
#ifndef RSHMEM_CUDA_SIM_HALF_H
#define RSHMEM_CUDA_SIM_HALF_H
#ifdef __cplusplus

#include <cuda_runtime.h>
#include <string.h>

#define RSIM_HALF_FN static __host__ __device__ __forceinline__

/* float <-> binary16 bits, rounding to nearest even; NaN stays NaN, overflow is infinity. */
RSIM_HALF_FN unsigned short rsim_float_to_half_bits(float value) {
    unsigned int x;
    memcpy(&x, &value, sizeof x);
    unsigned int sign = (x >> 16) & 0x8000u, exponent = (x >> 23) & 0xffu, mantissa = x & 0x7fffffu;
    if (exponent == 0xffu) return (unsigned short)(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
    int biased = (int)exponent - 127 + 15;
    if (biased >= 0x1f) return (unsigned short)(sign | 0x7c00u);
    if (biased <= 0) {
        /* A subnormal half (or zero): the 24-bit significand shifted into 10 bits. */
        if (biased < -10) return (unsigned short)sign;
        unsigned int significand = mantissa | 0x800000u, shift = (unsigned int)(14 - biased);
        unsigned int bits = significand >> shift, rest = significand & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
        if (rest > halfway || (rest == halfway && (bits & 1u))) bits++;
        return (unsigned short)(sign | bits);
    }
    unsigned int bits = sign | ((unsigned int)biased << 10) | (mantissa >> 13), rest = mantissa & 0x1fffu;
    /* A carry out of the mantissa rounds up into the exponent, as it should (to infinity). */
    if (rest > 0x1000u || (rest == 0x1000u && (bits & 1u))) bits++;
    return (unsigned short)bits;
}
RSIM_HALF_FN float rsim_half_bits_to_float(unsigned short bits) {
    unsigned int sign = (unsigned int)(bits & 0x8000u) << 16, exponent = (bits >> 10) & 0x1fu, mantissa = bits & 0x3ffu;
    unsigned int x;
    if (exponent == 0) {
        float magnitude = (float)mantissa * 5.9604644775390625e-8f; /* mantissa * 2^-24, exact */
        memcpy(&x, &magnitude, sizeof x);
        x |= sign;
    } else if (exponent == 0x1f) {
        x = sign | 0x7f800000u | (mantissa << 13);
    } else {
        x = sign | ((exponent + 112u) << 23) | (mantissa << 13);
    }
    float value;
    memcpy(&value, &x, sizeof value);
    return value;
}
/* float <-> bfloat16 bits: the float's high 16 bits, rounded to nearest even. */
RSIM_HALF_FN unsigned short rsim_float_to_bfloat16_bits(float value) {
    unsigned int x;
    memcpy(&x, &value, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);
    return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
RSIM_HALF_FN float rsim_bfloat16_bits_to_float(unsigned short bits) {
    unsigned int x = (unsigned int)bits << 16;
    float value;
    memcpy(&value, &x, sizeof value);
    return value;
}

/* One 16-bit floating type T, its bits converted by TO_BITS and FROM_BITS, with CUDA's
 * constructors, conversions and operators, and its PREFIX-named functions (__hadd, ...). */
#define RSIM_HALF_TYPE(T, TO_BITS, FROM_BITS)                                                     \
    struct __align__(2) T {                                                                       \
        unsigned short __x;                                                                       \
        T() = default;                                                                            \
        __host__ __device__ T(float f) : __x(TO_BITS(f)) {}                                       \
        __host__ __device__ T(double f) : __x(TO_BITS((float)f)) {}                               \
        __host__ __device__ T(int i) : __x(TO_BITS((float)i)) {}                                  \
        __host__ __device__ T(unsigned int i) : __x(TO_BITS((float)i)) {}                         \
        __host__ __device__ T(long long i) : __x(TO_BITS((float)i)) {}                            \
        __host__ __device__ T(unsigned long long i) : __x(TO_BITS((float)i)) {}                   \
        __host__ __device__ operator float() const { return FROM_BITS(__x); }                     \
        __host__ __device__ T &operator=(float f) {                                               \
            __x = TO_BITS(f);                                                                     \
            return *this;                                                                         \
        }                                                                                         \
        __host__ __device__ T &operator+=(T o) { return *this = (float)*this + (float)o; }        \
        __host__ __device__ T &operator-=(T o) { return *this = (float)*this - (float)o; }        \
        __host__ __device__ T &operator*=(T o) { return *this = (float)*this * (float)o; }        \
        __host__ __device__ T &operator/=(T o) { return *this = (float)*this / (float)o; }        \
    };                                                                                            \
    RSIM_HALF_FN T operator+(T a, T b) { return T((float)a + (float)b); }                         \
    RSIM_HALF_FN T operator-(T a, T b) { return T((float)a - (float)b); }                         \
    RSIM_HALF_FN T operator*(T a, T b) { return T((float)a * (float)b); }                         \
    RSIM_HALF_FN T operator/(T a, T b) { return T((float)a / (float)b); }                         \
    RSIM_HALF_FN T operator-(T a) {                                                               \
        T r = a;                                                                                  \
        r.__x ^= 0x8000u;                                                                         \
        return r;                                                                                 \
    }                                                                                             \
    RSIM_HALF_FN bool operator==(T a, T b) { return (float)a == (float)b; }                       \
    RSIM_HALF_FN bool operator!=(T a, T b) { return (float)a != (float)b; }                       \
    RSIM_HALF_FN bool operator<(T a, T b) { return (float)a < (float)b; }                         \
    RSIM_HALF_FN bool operator<=(T a, T b) { return (float)a <= (float)b; }                       \
    RSIM_HALF_FN bool operator>(T a, T b) { return (float)a > (float)b; }                         \
    RSIM_HALF_FN bool operator>=(T a, T b) { return (float)a >= (float)b; }                       \
    RSIM_HALF_FN T __hadd(T a, T b) { return a + b; }                                             \
    RSIM_HALF_FN T __hsub(T a, T b) { return a - b; }                                             \
    RSIM_HALF_FN T __hmul(T a, T b) { return a * b; }                                             \
    RSIM_HALF_FN T __hdiv(T a, T b) { return a / b; }                                             \
    RSIM_HALF_FN T __hneg(T a) { return -a; }                                                     \
    RSIM_HALF_FN T __habs(T a) {                                                                  \
        T r = a;                                                                                  \
        r.__x &= 0x7fffu;                                                                         \
        return r;                                                                                 \
    }                                                                                             \
    RSIM_HALF_FN T __hfma(T a, T b, T c) { return T((float)((double)(float)a * (float)b + (float)c)); } \
    RSIM_HALF_FN T __hmin(T a, T b) { return b < a ? b : a; }                                     \
    RSIM_HALF_FN T __hmax(T a, T b) { return b > a ? b : a; }                                     \
    RSIM_HALF_FN bool __heq(T a, T b) { return a == b; }                                          \
    RSIM_HALF_FN bool __hne(T a, T b) { return a != b; }                                          \
    RSIM_HALF_FN bool __hlt(T a, T b) { return a < b; }                                           \
    RSIM_HALF_FN bool __hle(T a, T b) { return a <= b; }                                          \
    RSIM_HALF_FN bool __hgt(T a, T b) { return a > b; }                                           \
    RSIM_HALF_FN bool __hge(T a, T b) { return a >= b; }                                          \
    RSIM_HALF_FN bool __hisnan(T a) { return (float)a != (float)a; }

RSIM_HALF_TYPE(__half, rsim_float_to_half_bits, rsim_half_bits_to_float)
RSIM_HALF_TYPE(__nv_bfloat16, rsim_float_to_bfloat16_bits, rsim_bfloat16_bits_to_float)
#undef RSIM_HALF_TYPE

typedef __half half;
typedef __nv_bfloat16 nv_bfloat16;

/* Conversions by name (cuda_fp16.h, cuda_bf16.h) of the type T that CUDA's names call X
 * (__float2half, __bfloat162float, __ushort_as_bfloat16, ...): every rounding mode is round to
 * nearest even, which the constructors do. */
#define RSIM_HALF_CONVERSIONS(T, X)                                                               \
    RSIM_HALF_FN T __float2##X(float f) { return T(f); }                                          \
    RSIM_HALF_FN T __float2##X##_rn(float f) { return T(f); }                                     \
    RSIM_HALF_FN T __double2##X(double f) { return T(f); }                                        \
    RSIM_HALF_FN T __int2##X##_rn(int i) { return T(i); }                                         \
    RSIM_HALF_FN float __##X##2float(T h) { return (float)h; }                                    \
    RSIM_HALF_FN int __##X##2int_rn(T h) { return (int)__builtin_rintf((float)h); }               \
    RSIM_HALF_FN unsigned short __##X##_as_ushort(T h) { return h.__x; }                          \
    RSIM_HALF_FN short __##X##_as_short(T h) { return (short)h.__x; }                             \
    RSIM_HALF_FN T __ushort_as_##X(unsigned short bits) {                                         \
        T h;                                                                                      \
        h.__x = bits;                                                                             \
        return h;                                                                                 \
    }                                                                                             \
    RSIM_HALF_FN T __short_as_##X(short bits) { return __ushort_as_##X((unsigned short)bits); }
RSIM_HALF_CONVERSIONS(__half, half)
RSIM_HALF_CONVERSIONS(__nv_bfloat16, bfloat16)
#undef RSIM_HALF_CONVERSIONS

#undef RSIM_HALF_FN
#endif /* __cplusplus */
#endif
