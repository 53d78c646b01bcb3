/*
 * CUDA's math API for programs built by rshmem-nvcc for the simulator (included by
 * rshmem/cuda_sim_lang.h): min and max with CUDA's overloads, and the functions and intrinsics
 * of the CUDA Math API that the C library lacks, host and device.
 *
 * Device code runs on the CPU, so the C library's math functions are the device's (made host
 * and device by cuda_sim_lang.h), and every intrinsic is computed exactly: the fast
 * approximations (__expf, __fdividef, ...) are their exact counterparts, and the
 * round-to-nearest variants (_rn) are the plain operations.
 */
#ifndef RSHMEM_CUDA_SIM_MATH_H
#define RSHMEM_CUDA_SIM_MATH_H

#define RSIM_HD_FN static __host__ __device__ __forceinline__

/* min and max of one operand type: CUDA's overloads for int, long, long long, their unsigned
 * types, float and double. */
#define RSIM_MIN_MAX(T)                                                                           \
    RSIM_HD_FN T min(T a, T b) { return a < b ? a : b; }                                          \
    RSIM_HD_FN T max(T a, T b) { return a > b ? a : b; }
RSIM_MIN_MAX(int)
RSIM_MIN_MAX(unsigned)
RSIM_MIN_MAX(long)
RSIM_MIN_MAX(unsigned long)
RSIM_MIN_MAX(long long)
RSIM_MIN_MAX(unsigned long long)
RSIM_MIN_MAX(float)
RSIM_MIN_MAX(double)
#undef RSIM_MIN_MAX

/* Mixed operand types (int with unsigned, int with long, float with double, ...): both
 * operands are converted to their common type first, as CUDA's mixed overloads do
 * (`unsigned int min(int, unsigned int)`, `double max(float, double)`). A template, so that it
 * only takes calls no overload above matches exactly: `min(i, n)` with an int and an unsigned
 * is no longer ambiguous, and `std::min` keeps its own calls. */
template <bool enable, typename T> struct rsim_enable_if {};
template <typename T> struct rsim_enable_if<true, T> { typedef T type; };
template <typename A, typename B>
struct rsim_mixed
    : rsim_enable_if<__is_arithmetic(A) && __is_arithmetic(B) && !__is_same(A, B), decltype(true ? A() : B())> {};
template <typename A, typename B>
RSIM_HD_FN typename rsim_mixed<A, B>::type min(A a, B b) {
    typedef typename rsim_mixed<A, B>::type T;
    return min((T)a, (T)b);
}
template <typename A, typename B>
RSIM_HD_FN typename rsim_mixed<A, B>::type max(A a, B b) {
    typedef typename rsim_mixed<A, B>::type T;
    return max((T)a, (T)b);
}
RSIM_HD_FN unsigned umin(unsigned a, unsigned b) { return min(a, b); }
RSIM_HD_FN unsigned umax(unsigned a, unsigned b) { return max(a, b); }
RSIM_HD_FN long long llmin(long long a, long long b) { return min(a, b); }
RSIM_HD_FN long long llmax(long long a, long long b) { return max(a, b); }
RSIM_HD_FN unsigned long long ullmin(unsigned long long a, unsigned long long b) { return min(a, b); }
RSIM_HD_FN unsigned long long ullmax(unsigned long long a, unsigned long long b) { return max(a, b); }

/* std::abs of long and long long: libstdc++'s are host functions (not constexpr, so not made
 * host and device as its others are), and device code would find only abs(int) and the floating
 * ones, an ambiguous call. Device overloads of their own, beside them, as CUDA has. */
namespace std {
static __device__ __forceinline__ long abs(long x) { return labs(x); }
static __device__ __forceinline__ long long abs(long long x) { return llabs(x); }
} // namespace std

/* Bits. */
RSIM_HD_FN int __popc(unsigned x) { return __builtin_popcount(x); }
RSIM_HD_FN int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
RSIM_HD_FN int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
RSIM_HD_FN int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
RSIM_HD_FN int __ffs(int x) { return __builtin_ffs(x); }
RSIM_HD_FN int __ffsll(long long x) { return __builtin_ffsll(x); }
RSIM_HD_FN unsigned __brev(unsigned x) { return __builtin_bitreverse32(x); }
RSIM_HD_FN unsigned long long __brevll(unsigned long long x) { return __builtin_bitreverse64(x); }
RSIM_HD_FN unsigned __byte_perm(unsigned x, unsigned y, unsigned selector) {
    uint64_t bytes = ((uint64_t)y << 32) | x;
    unsigned result = 0;
    for (int i = 0; i < 4; i++) result |= (unsigned)((bytes >> (8 * ((selector >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return result;
}
/* The funnel shifts: the high word of `hi:lo` shifted by `shift` mod 32 (_l, _r) or clamped to
 * 32 (_lc, _rc). */
RSIM_HD_FN unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
    return (unsigned)(((((uint64_t)hi << 32) | lo) << (shift & 31)) >> 32);
}
RSIM_HD_FN unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned shift) {
    return (unsigned)(((((uint64_t)hi << 32) | lo) << min(shift, 32u)) >> 32);
}
RSIM_HD_FN unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
    return (unsigned)((((uint64_t)hi << 32) | lo) >> (shift & 31));
}
RSIM_HD_FN unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned shift) {
    return (unsigned)((((uint64_t)hi << 32) | lo) >> min(shift, 32u));
}

/* Integer arithmetic: high halves of products, 24-bit products, averages, sums of absolute
 * differences. */
RSIM_HD_FN int __mulhi(int a, int b) { return (int)(((int64_t)a * b) >> 32); }
RSIM_HD_FN unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((uint64_t)a * b) >> 32); }
RSIM_HD_FN long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
RSIM_HD_FN unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
RSIM_HD_FN int __mul24(int a, int b) { return (int)((unsigned)(a << 8 >> 8) * (unsigned)(b << 8 >> 8)); }
RSIM_HD_FN unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
RSIM_HD_FN int __hadd(int a, int b) { return (int)(((int64_t)a + b) >> 1); }
RSIM_HD_FN int __rhadd(int a, int b) { return (int)(((int64_t)a + b + 1) >> 1); }
RSIM_HD_FN unsigned __uhadd(unsigned a, unsigned b) { return (unsigned)(((uint64_t)a + b) >> 1); }
RSIM_HD_FN unsigned __urhadd(unsigned a, unsigned b) { return (unsigned)(((uint64_t)a + b + 1) >> 1); }
RSIM_HD_FN unsigned __sad(int a, int b, unsigned c) { return c + (unsigned)(a > b ? (int64_t)a - b : (int64_t)b - a); }
RSIM_HD_FN unsigned __usad(unsigned a, unsigned b, unsigned c) { return c + (a > b ? a - b : b - a); }

/* Reinterpretations. */
RSIM_HD_FN float __int_as_float(int x) { return rsim_from_bits<float>((uint64_t)(uint32_t)x); }
RSIM_HD_FN int __float_as_int(float x) { return (int)(uint32_t)rsim_bits(x); }
RSIM_HD_FN float __uint_as_float(unsigned x) { return rsim_from_bits<float>(x); }
RSIM_HD_FN unsigned __float_as_uint(float x) { return (unsigned)rsim_bits(x); }
RSIM_HD_FN double __longlong_as_double(long long x) { return rsim_from_bits<double>((uint64_t)x); }
RSIM_HD_FN long long __double_as_longlong(double x) { return (long long)rsim_bits(x); }
RSIM_HD_FN double __hiloint2double(int hi, int lo) {
    return __longlong_as_double((long long)(((uint64_t)(uint32_t)hi << 32) | (uint32_t)lo));
}
RSIM_HD_FN int __double2hiint(double x) { return (int)(__double_as_longlong(x) >> 32); }
RSIM_HD_FN int __double2loint(double x) { return (int)__double_as_longlong(x); }

/* Conversions, by rounding mode: to nearest even (rn), toward zero (rz), up (ru), down (rd). */
#define RSIM_TO_INTEGER(from, to_name, T, round_nearest, round_up, round_down)                    \
    RSIM_HD_FN T __##from##2##to_name##_rn(from x) { return (T)round_nearest(x); }                \
    RSIM_HD_FN T __##from##2##to_name##_rz(from x) { return (T)x; }                               \
    RSIM_HD_FN T __##from##2##to_name##_ru(from x) { return (T)round_up(x); }                     \
    RSIM_HD_FN T __##from##2##to_name##_rd(from x) { return (T)round_down(x); }
RSIM_TO_INTEGER(float, int, int, nearbyintf, ceilf, floorf)
RSIM_TO_INTEGER(float, uint, unsigned, nearbyintf, ceilf, floorf)
RSIM_TO_INTEGER(float, ll, long long, nearbyintf, ceilf, floorf)
RSIM_TO_INTEGER(float, ull, unsigned long long, nearbyintf, ceilf, floorf)
RSIM_TO_INTEGER(double, int, int, nearbyint, ceil, floor)
RSIM_TO_INTEGER(double, uint, unsigned, nearbyint, ceil, floor)
RSIM_TO_INTEGER(double, ll, long long, nearbyint, ceil, floor)
RSIM_TO_INTEGER(double, ull, unsigned long long, nearbyint, ceil, floor)
#undef RSIM_TO_INTEGER
RSIM_HD_FN float __double2float_rn(double x) { return (float)x; }
RSIM_HD_FN float __int2float_rn(int x) { return (float)x; }
RSIM_HD_FN float __uint2float_rn(unsigned x) { return (float)x; }
RSIM_HD_FN float __ll2float_rn(long long x) { return (float)x; }
RSIM_HD_FN float __ull2float_rn(unsigned long long x) { return (float)x; }
RSIM_HD_FN double __int2double_rn(int x) { return (double)x; }
RSIM_HD_FN double __uint2double_rn(unsigned x) { return (double)x; }
RSIM_HD_FN double __ll2double_rn(long long x) { return (double)x; }
RSIM_HD_FN double __ull2double_rn(unsigned long long x) { return (double)x; }

/* Floating-point arithmetic intrinsics, rounded to nearest. */
RSIM_HD_FN float __fadd_rn(float a, float b) { return a + b; }
RSIM_HD_FN float __fsub_rn(float a, float b) { return a - b; }
RSIM_HD_FN float __fmul_rn(float a, float b) { return a * b; }
RSIM_HD_FN float __fdiv_rn(float a, float b) { return a / b; }
RSIM_HD_FN float __fdividef(float a, float b) { return a / b; }
RSIM_HD_FN float __frcp_rn(float x) { return 1.0f / x; }
RSIM_HD_FN float __fsqrt_rn(float x) { return sqrtf(x); }
RSIM_HD_FN float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
RSIM_HD_FN float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
RSIM_HD_FN double __dadd_rn(double a, double b) { return a + b; }
RSIM_HD_FN double __dsub_rn(double a, double b) { return a - b; }
RSIM_HD_FN double __dmul_rn(double a, double b) { return a * b; }
RSIM_HD_FN double __ddiv_rn(double a, double b) { return a / b; }
RSIM_HD_FN double __drcp_rn(double x) { return 1.0 / x; }
RSIM_HD_FN double __dsqrt_rn(double x) { return sqrt(x); }
RSIM_HD_FN double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
RSIM_HD_FN float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }

/* Fast-math intrinsics. glibc declares these names for its own (unexported) functions, hence
 * macros; math.h is read before them, so no declaration of glibc's meets them. */
#define __expf(x) expf(x)
#define __exp10f(x) exp10f(x)
#define __logf(x) logf(x)
#define __log2f(x) log2f(x)
#define __log10f(x) log10f(x)
#define __sinf(x) sinf(x)
#define __cosf(x) cosf(x)
#define __tanf(x) tanf(x)
#define __sincosf(x, s, c) sincosf(x, s, c)
#define __powf(a, b) powf(a, b)

/* Functions of CUDA's math API beyond the C library's. */
RSIM_HD_FN float rsqrtf(float x) { return 1.0f / sqrtf(x); }
RSIM_HD_FN double rsqrt(double x) { return 1.0 / sqrt(x); }
RSIM_HD_FN float rcbrtf(float x) { return 1.0f / cbrtf(x); }
RSIM_HD_FN double rcbrt(double x) { return 1.0 / cbrt(x); }
RSIM_HD_FN float sinpif(float x) { return sinf((float)M_PI * x); }
RSIM_HD_FN double sinpi(double x) { return sin(M_PI * x); }
RSIM_HD_FN float cospif(float x) { return cosf((float)M_PI * x); }
RSIM_HD_FN double cospi(double x) { return cos(M_PI * x); }
RSIM_HD_FN void sincospif(float x, float *s, float *c) { sincosf((float)M_PI * x, s, c); }
RSIM_HD_FN void sincospi(double x, double *s, double *c) { sincos(M_PI * x, s, c); }
RSIM_HD_FN float normcdff(float x) { return 0.5f * erfcf(-x * (float)M_SQRT1_2); }
RSIM_HD_FN double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
RSIM_HD_FN float fdividef(float a, float b) { return a / b; }

#undef RSIM_HD_FN
#endif
