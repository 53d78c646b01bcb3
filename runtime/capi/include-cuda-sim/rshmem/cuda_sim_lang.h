/*
 * The CUDA language for programs built by rshmem-nvcc for the simulator: qualifiers, built-in
 * variables, barriers, warp functions, atomics, fences, clocks and the C library in device code.
 *
 * Clang's CUDA front end compiles the program twice (a host pass and an NVPTX device pass whose
 * IR rshmem-nvcc retargets to x86-64), without CUDA's own headers (-nocudainc). So every
 * built-in here is an inline function over the emulator's ABI (rshmem/cuda_sim_abi.h), never an
 * NVVM intrinsic: the device IR then holds ordinary calls that run unchanged on the CPU, and the
 * IR rewrite has little left to map. Constructs the emulator does not model are declared
 * `unavailable`, so that clang names them at the use with the reason.
 */
#ifndef RSHMEM_CUDA_SIM_LANG_H
#define RSHMEM_CUDA_SIM_LANG_H

#if !defined(__CUDA__)
/* A host-only C or C++ file of the program (rshmem-nvcc compiles .c and .cpp files with the
 * same include path, as nvcc does): the qualifiers mean nothing there, the types are shared. */
#define __host__
#define __device__
#define __global__
#define __shared__
#define __constant__
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#include <stddef.h>
#include <stdint.h>
#include <vector_types.h>
/* The runtime API's wrappers call the emulator's ABI. */
#include <rshmem/cuda_sim_abi.h>
#else

#ifndef __CUDACC__
#define __CUDACC__ 1
#endif

/* Qualifiers, as clang's CUDA mode spells them. */
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__                                                                              \
    __attribute__((unavailable("rshmem sim: __managed__ memory is not emulated; allocate with "  \
                               "cudaMalloc or nvshmem_malloc and copy with cudaMemcpy")))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__ __restrict
#define __device_builtin__
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __cudart_builtin__
#define CUDART_CB

#include <stddef.h>
#include <stdint.h>

/* clock() is the host's clock(3) in host code and the simulated time in device code (a device
 * overload below), so <time.h> declares it here, host-only, before anything is made host and
 * device. */
#include <time.h>

/* The C library in device code: its functions become host and device functions (the device
 * code runs on the CPU, so glibc's implementations are the device's). Only glibc's own headers:
 * libstdc++'s <math.h> and <stdlib.h> wrappers would pull C++ headers (<bits/c++config.h>,
 * <bits/stl_algobase.h>, ...) in, whose functions, made host and device here, would then clash
 * with their host-only redeclarations in <exception>, <algorithm> or <iostream>. */
#pragma clang force_cuda_host_device begin
#define _GLIBCXX_INCLUDE_NEXT_C_HEADERS
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#undef _GLIBCXX_INCLUDE_NEXT_C_HEADERS
#include <rshmem/device_abi.h>
/* __rsim_cur is the emulator's (a host variable); device code reads it through the device
 * declaration below, so the ABI header's host declaration is set aside under another name. */
#define __rsim_cur __rsim_cur_host_declaration
#include <rshmem/cuda_sim_abi.h>
#undef __rsim_cur
#pragma clang force_cuda_host_device end

#include <vector_types.h>

extern "C" __device__ const struct rsim_ids *__rsim_cur;

/* The launch configuration call of clang's lowering of `k<<<grid, block, shmem, stream>>>`. */
extern "C" unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem = 0, void *stream = 0);

/* threadIdx, blockIdx, blockDim, gridDim: each field a property read from the running thread. */
#define RSIM_BUILTIN_VAR(type_name, var_name, field)                                                   \
    struct type_name {                                                                                  \
        __declspec(property(get = rsim_get_x)) unsigned int x;                                          \
        __declspec(property(get = rsim_get_y)) unsigned int y;                                          \
        __declspec(property(get = rsim_get_z)) unsigned int z;                                          \
        static __device__ __forceinline__ unsigned int rsim_get_x(void) { return __rsim_cur->field[0]; } \
        static __device__ __forceinline__ unsigned int rsim_get_y(void) { return __rsim_cur->field[1]; } \
        static __device__ __forceinline__ unsigned int rsim_get_z(void) { return __rsim_cur->field[2]; } \
        __device__ operator dim3() const { return dim3(x, y, z); }                                      \
        __device__ operator uint3() const { return make_uint3(x, y, z); }                               \
    };                                                                                                  \
    extern const __device__ struct type_name var_name;
RSIM_BUILTIN_VAR(rsim_thread_idx_t, threadIdx, thread_idx)
RSIM_BUILTIN_VAR(rsim_block_idx_t, blockIdx, block_idx)
RSIM_BUILTIN_VAR(rsim_block_dim_t, blockDim, block_dim)
RSIM_BUILTIN_VAR(rsim_grid_dim_t, gridDim, grid_dim)
#undef RSIM_BUILTIN_VAR
static constexpr int warpSize = 32;

/* Barriers and fences. `__syncthreads` is a clang built-in in CUDA mode, hence the macro. */
#define __syncthreads() __rsim_syncthreads()
#define __syncthreads_count(p) __rsim_syncthreads_count(p)
#define __syncthreads_and(p) __rsim_syncthreads_and(p)
#define __syncthreads_or(p) __rsim_syncthreads_or(p)
static __device__ __forceinline__ void __syncwarp(unsigned mask = 0xffffffffu) { __rsim_syncwarp(mask); }
static __device__ __forceinline__ void __threadfence_block(void) { __rsim_threadfence(0); }
static __device__ __forceinline__ void __threadfence(void) { __rsim_threadfence(1); }
static __device__ __forceinline__ void __threadfence_system(void) { __rsim_threadfence(2); }

/* Clocks: the simulated time. */
static __device__ __forceinline__ long long clock64(void) { return __rsim_clock64(); }
static __device__ __forceinline__ clock_t clock(void) { return (clock_t)__rsim_clock64(); }
static __device__ __forceinline__ void __nanosleep(unsigned ns) { __rsim_nanosleep(ns); }
static __device__ __forceinline__ uint64_t __globaltimer(void) { return __rsim_globaltimer(); }

/* Aborting a kernel: the emulator names the PE, block and thread. */
#define __trap() __rsim_trap("__trap()", __FILE__, __LINE__)
#define __brkpt() __rsim_trap("__brkpt()", __FILE__, __LINE__)

/* Read-only cache loads are plain loads on a CPU. */
template <typename T> static __device__ __forceinline__ T __ldg(const T *p) { return *p; }

/* A value's bits in the low bytes of a uint64_t and back (floats travel as their bits). */
template <typename T> static __host__ __device__ __forceinline__ uint64_t rsim_bits(T v) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "rshmem sim: warp and atomic operands are 4 or 8 bytes");
    uint64_t bits = 0;
    __builtin_memcpy(&bits, &v, sizeof(T));
    return bits;
}
template <typename T> static __host__ __device__ __forceinline__ T rsim_from_bits(uint64_t bits) {
    T v;
    __builtin_memcpy(&v, &bits, sizeof(T));
    return v;
}

#include <rshmem/cuda_sim_math.h>

/* Warp functions. */
static __device__ __forceinline__ unsigned __activemask(void) { return __rsim_activemask(); }
static __device__ __forceinline__ unsigned __ballot_sync(unsigned mask, int predicate) {
    return __rsim_ballot(mask, predicate);
}
static __device__ __forceinline__ int __any_sync(unsigned mask, int predicate) {
    return __rsim_ballot(mask, predicate) != 0;
}
static __device__ __forceinline__ int __all_sync(unsigned mask, int predicate) {
    return __rsim_ballot(mask, !predicate) == 0;
}
#define RSIM_SHFL(name, lane_type, kind)                                                          \
    template <typename T>                                                                         \
    static __device__ __forceinline__ T name(unsigned mask, T var, lane_type lane, int width = 32) { \
        return rsim_from_bits<T>(__rsim_shfl(mask, rsim_bits(var), (int)lane, width, kind));      \
    }
RSIM_SHFL(__shfl_sync, int, 0)
RSIM_SHFL(__shfl_up_sync, unsigned, 1)
RSIM_SHFL(__shfl_down_sync, unsigned, 2)
RSIM_SHFL(__shfl_xor_sync, int, 3)
#undef RSIM_SHFL

/* Atomics on this PE's memory (global or shared). */
template <typename T> struct rsim_type_of;
#define RSIM_TYPE_OF(T, kind)                                                                     \
    template <> struct rsim_type_of<T> {                                                          \
        static constexpr int value = RSHMEMD_TYPE(kind, sizeof(T));                               \
    };
RSIM_TYPE_OF(int, RSHMEMD_KIND_SIGNED)
RSIM_TYPE_OF(unsigned, RSHMEMD_KIND_UNSIGNED)
RSIM_TYPE_OF(long long, RSHMEMD_KIND_SIGNED)
RSIM_TYPE_OF(unsigned long long, RSHMEMD_KIND_UNSIGNED)
RSIM_TYPE_OF(float, RSHMEMD_KIND_FLOAT)
RSIM_TYPE_OF(double, RSHMEMD_KIND_FLOAT)
#undef RSIM_TYPE_OF
template <typename T> static __device__ __forceinline__ T rsim_atomic(T *addr, int op, T value, T compare = T()) {
    return rsim_from_bits<T>(
        __rsim_atomic((void *)addr, op, rsim_type_of<T>::value, rsim_bits(value), rsim_bits(compare)));
}
/* Each atomic for the operand types CUDA has it for. */
#define RSIM_ATOMIC(name, T, op)                                                                  \
    static __device__ __forceinline__ T name(T *addr, T value) { return rsim_atomic(addr, op, value); } \
    static __device__ __forceinline__ T name##_block(T *addr, T value) { return rsim_atomic(addr, op, value); } \
    static __device__ __forceinline__ T name##_system(T *addr, T value) { return rsim_atomic(addr, op, value); }
#define RSIM_ATOMIC_INTEGERS(name, op)                                                            \
    RSIM_ATOMIC(name, int, op)                                                                    \
    RSIM_ATOMIC(name, unsigned, op)                                                               \
    RSIM_ATOMIC(name, unsigned long long, op)
RSIM_ATOMIC_INTEGERS(atomicAdd, RSHMEMD_AMO_FETCH_ADD)
RSIM_ATOMIC(atomicAdd, float, RSHMEMD_AMO_FETCH_ADD)
RSIM_ATOMIC(atomicAdd, double, RSHMEMD_AMO_FETCH_ADD)
RSIM_ATOMIC_INTEGERS(atomicExch, RSHMEMD_AMO_SWAP)
RSIM_ATOMIC(atomicExch, float, RSHMEMD_AMO_SWAP)
RSIM_ATOMIC_INTEGERS(atomicMin, RSIM_ATOMIC_MIN)
RSIM_ATOMIC(atomicMin, long long, RSIM_ATOMIC_MIN)
RSIM_ATOMIC_INTEGERS(atomicMax, RSIM_ATOMIC_MAX)
RSIM_ATOMIC(atomicMax, long long, RSIM_ATOMIC_MAX)
RSIM_ATOMIC_INTEGERS(atomicAnd, RSHMEMD_AMO_FETCH_AND)
RSIM_ATOMIC_INTEGERS(atomicOr, RSHMEMD_AMO_FETCH_OR)
RSIM_ATOMIC_INTEGERS(atomicXor, RSHMEMD_AMO_FETCH_XOR)
RSIM_ATOMIC(atomicInc, unsigned, RSIM_ATOMIC_INC_WRAP)
RSIM_ATOMIC(atomicDec, unsigned, RSIM_ATOMIC_DEC_WRAP)
#undef RSIM_ATOMIC_INTEGERS
#undef RSIM_ATOMIC
/* atomicSub is an add of the negation (wrapping for unsigned, as on a GPU). */
static __device__ __forceinline__ int atomicSub(int *addr, int value) {
    return rsim_atomic(addr, RSHMEMD_AMO_FETCH_ADD, (int)(0u - (unsigned)value));
}
static __device__ __forceinline__ unsigned atomicSub(unsigned *addr, unsigned value) {
    return rsim_atomic(addr, RSHMEMD_AMO_FETCH_ADD, 0u - value);
}
template <typename T> static __device__ __forceinline__ T atomicCAS(T *addr, T compare, T value) {
    return rsim_atomic(addr, RSHMEMD_AMO_COMPARE_SWAP, value, compare);
}
template <typename T> static __device__ __forceinline__ T atomicCAS_block(T *addr, T compare, T value) {
    return atomicCAS(addr, compare, value);
}
template <typename T> static __device__ __forceinline__ T atomicCAS_system(T *addr, T compare, T value) {
    return atomicCAS(addr, compare, value);
}

/* Not emulated: a use is a compile error naming the construct and what to do instead. */
#define RSIM_UNAVAILABLE(what, instead) __attribute__((unavailable("rshmem sim: " what " is not emulated; " instead)))
template <typename T, int dim = 1, int mode = 0>
struct RSIM_UNAVAILABLE("texture references", "read the array through a pointer") texture {};
typedef unsigned long long cudaTextureObject_t;
typedef unsigned long long cudaSurfaceObject_t;
template <typename T>
static __device__ T tex1Dfetch(cudaTextureObject_t, int)
    RSIM_UNAVAILABLE("textures", "read the array through a pointer");
template <typename T>
static __device__ T tex2D(cudaTextureObject_t, float, float) RSIM_UNAVAILABLE("textures", "read the array through a pointer");
template <typename T>
static __device__ void surf2Dwrite(T, cudaSurfaceObject_t, int, int)
    RSIM_UNAVAILABLE("surfaces", "write the array through a pointer");
static __device__ void __cluster_barrier_arrive(void)
    RSIM_UNAVAILABLE("thread block clusters", "synchronise the block with __syncthreads");
static __device__ void __cluster_barrier_wait(void)
    RSIM_UNAVAILABLE("thread block clusters", "synchronise the block with __syncthreads");
#undef RSIM_UNAVAILABLE

#endif /* __CUDA__ */

/* CUDA's __noinline__ is a macro, and libstdc++ (GCC 12's <memory>) spells the attribute
 * __attribute__((__noinline__)), which the macro would break; nvcc's front end knows the
 * keyword instead. So <memory> is read before the macro is defined. */
#ifdef __cplusplus
#include <memory>
#endif
#define __noinline__ __attribute__((noinline))

#endif
