/*
 * The device-side primitives that nvshmem.h's device functions are written over.
 *
 * One set of names, two implementations:
 * - built by nvcc for GPUs, rshmem/device_gpu.cuh defines each as an inline __device__
 *   function over the CUDA backend's device API;
 * - built by rshmem-nvcc for the simulator, each is an extern "C" function of libshmem, which
 *   runs the call at the calling GPU thread's scope in the runtime's kernel model.
 *
 * Every call is made by one GPU thread; `scope` says whether the thread calls alone or with
 * every thread of its warp or block (NVSHMEM's plain, _warp and _block functions), in which
 * case every thread of the group makes the same call with the same arguments.
 * Pointers are the caller's addresses of symmetric objects (or of local memory for sources
 * and destinations, where NVSHMEM allows it).
 */
#ifndef RSHMEM_DEVICE_ABI_H
#define RSHMEM_DEVICE_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Who makes a call. */
#define RSHMEMD_SCOPE_THREAD 0
#define RSHMEMD_SCOPE_WARP 1
#define RSHMEMD_SCOPE_BLOCK 2

/* Element types: kind in the high byte, size in bytes in the low byte. */
#define RSHMEMD_KIND_SIGNED 0
#define RSHMEMD_KIND_UNSIGNED 1
#define RSHMEMD_KIND_FLOAT 2 /* IEEE: half (2 bytes), float, double */
#define RSHMEMD_KIND_BFLOAT 3 /* bfloat16: a float's high 2 bytes */
#define RSHMEMD_TYPE(kind, size) (((kind) << 8) | (size))

/* Atomic operations (rshmemd_amo). */
#define RSHMEMD_AMO_FETCH 0
#define RSHMEMD_AMO_SET 1
#define RSHMEMD_AMO_SWAP 2
#define RSHMEMD_AMO_COMPARE_SWAP 3
#define RSHMEMD_AMO_FETCH_INC 4
#define RSHMEMD_AMO_INC 5
#define RSHMEMD_AMO_FETCH_ADD 6
#define RSHMEMD_AMO_ADD 7
#define RSHMEMD_AMO_FETCH_AND 8
#define RSHMEMD_AMO_AND 9
#define RSHMEMD_AMO_FETCH_OR 10
#define RSHMEMD_AMO_OR 11
#define RSHMEMD_AMO_FETCH_XOR 12
#define RSHMEMD_AMO_XOR 13

/* Comparisons, as NVSHMEM_CMP_*. */
#define RSHMEMD_CMP_EQ 0
#define RSHMEMD_CMP_NE 1
#define RSHMEMD_CMP_GT 2
#define RSHMEMD_CMP_LE 3
#define RSHMEMD_CMP_LT 4
#define RSHMEMD_CMP_GE 5

/* Signal operators, as NVSHMEM_SIGNAL_*. */
#define RSHMEMD_SIGNAL_SET 0
#define RSHMEMD_SIGNAL_ADD 5

/* Collectives (rshmemd_collective) and reduction operators. */
#define RSHMEMD_COLL_BROADCAST 0
#define RSHMEMD_COLL_FCOLLECT 1
#define RSHMEMD_COLL_ALLTOALL 2
#define RSHMEMD_COLL_REDUCE 3
#define RSHMEMD_OP_SUM 0
#define RSHMEMD_OP_PROD 1
#define RSHMEMD_OP_MIN 2
#define RSHMEMD_OP_MAX 3
#define RSHMEMD_OP_AND 4
#define RSHMEMD_OP_OR 5
#define RSHMEMD_OP_XOR 6

/* Teams on the device are NVSHMEM's int32 handles. */
#define RSHMEMD_TEAM_WORLD 0
#define RSHMEMD_TEAM_SHARED 1
#define RSHMEMD_TEAM_NODE 2

#if defined(__CUDACC__) && !defined(RSHMEM_CUDA_SIM)
/* nvcc: the primitives are inline device functions (rshmem/device_gpu.cuh). */
#define RSHMEMD_DECL static __device__ __forceinline__
#else
#ifdef __cplusplus
#define RSHMEMD_DECL extern "C" __device__
#else
#define RSHMEMD_DECL extern
#endif
#endif

#ifndef RSHMEMD_NO_DECLARATIONS
RSHMEMD_DECL int rshmemd_my_pe(void);
RSHMEMD_DECL int rshmemd_n_pes(void);
RSHMEMD_DECL int rshmemd_team_my_pe(int32_t team);
RSHMEMD_DECL int rshmemd_team_n_pes(int32_t team);
/* The PE number in the world of `team`'s member `pe`, or -1. */
RSHMEMD_DECL int rshmemd_team_translate_to_world(int32_t team, int pe);
RSHMEMD_DECL void *rshmemd_ptr(const void *ptr, int pe);

RSHMEMD_DECL void rshmemd_putmem(void *dst, const void *src, size_t bytes, int pe, int scope, int nbi);
RSHMEMD_DECL void rshmemd_getmem(void *dst, const void *src, size_t bytes, int pe, int scope, int nbi);
/* One element of `type` at `*value` to `dst` on `pe`; one element from `src` on `pe` into `*out`. */
RSHMEMD_DECL void rshmemd_p(void *dst, const void *value, int type, int pe);
#ifndef RSHMEM_CUDA_SIM
RSHMEMD_DECL void rshmemd_g(void *out, const void *src, int type, int pe);
#endif

/* `value` and `compare` hold the operands in their low bytes (floats as their bits); returns
 * the old value for fetching operations. */
RSHMEMD_DECL uint64_t rshmemd_amo(void *dst, int op, int type, uint64_t value, uint64_t compare, int pe);

RSHMEMD_DECL void rshmemd_put_signal(void *dst, const void *src, size_t bytes, uint64_t *sig, uint64_t signal,
                                     int sig_op, int pe, int scope, int nbi);
RSHMEMD_DECL void rshmemd_signal_op(uint64_t *sig, uint64_t signal, int sig_op, int pe);
RSHMEMD_DECL uint64_t rshmemd_signal_fetch(const uint64_t *sig);
RSHMEMD_DECL uint64_t rshmemd_signal_wait_until(uint64_t *sig, int cmp, uint64_t value);
RSHMEMD_DECL void rshmemd_wait_until(void *ivar, int type, int cmp, uint64_t value);
RSHMEMD_DECL int rshmemd_test(void *ivar, int type, int cmp, uint64_t value);
/* The deadline of the waits for several words (nvshmem_TYPE_wait_until_any, _some and their
 * _vector forms), which poll with rshmemd_test: the device's clock when the wait starts, then
 * a check after each round in which no word held, which past RSHMEM_WAIT_TIMEOUT_MS reports
 * the wait `call` on `ivar` (its first word) as rshmemd_wait_until's deadline does. */
RSHMEMD_DECL uint64_t rshmemd_wait_start(void);
RSHMEMD_DECL void rshmemd_wait_check(uint64_t started, const void *ivar, int type, int cmp, uint64_t value,
                                     const char *call);

RSHMEMD_DECL void rshmemd_fence(int scope);
RSHMEMD_DECL void rshmemd_quiet(int scope);
/* barrier: quiet then synchronise `team`; sync: synchronise only. */
RSHMEMD_DECL void rshmemd_barrier(int32_t team, int scope);
RSHMEMD_DECL void rshmemd_sync(int32_t team, int scope);
/* Returns 0, as NVSHMEM's collectives. `op` is used by RSHMEMD_COLL_REDUCE, `root` by broadcast. */
RSHMEMD_DECL int rshmemd_collective(int kind, int32_t team, void *dest, const void *src, size_t nelems, int type,
                                    int op, int root, int scope);
#endif

#if defined(RSHMEM_CUDA_SIM) && defined(__cplusplus)
/* The simulator's g: mapped loads inline, the rest a call (rshmem/device_sim.h). */
#include "rshmem/device_sim.h"
#endif

#endif
