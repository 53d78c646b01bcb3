/*
 * The device primitives of rshmem/device_abi.h for GPUs, as inline __device__ functions over
 * the CUDA backend's device API (rshmem_device.cuh, the same file the runtime compiles with
 * NVRTC: one implementation of every device operation), for programs that nvcc compiles.
 *
 * State binding: every translation unit that includes this header has its own
 * `static __constant__ rshmem_state` (RSHMEM_STATE_STORAGE), and a static constructor that
 * registers a binder with libshmem; libshmem calls the binders once the heaps exist
 * (nvshmem_init) and again when they change (runtime/capi/src/device_state.rs).
 *
 * Teams on the GPU: NVSHMEM_TEAM_WORLD, NVSHMEM_TEAM_SHARED and NVSHMEMX_TEAM_NODE are all the
 * run's PEs here; PEs of other nodes are reached through the channel (rshmem_device.cuh). Split teams
 * are in a `static __constant__` table per translation unit (start, stride, size, this PE's
 * number and the team's slot per handle), which libshmem binds like the state whenever a
 * handle is made or freed (runtime/capi/src/device_teams.rs): team_my_pe, team_n_pes and
 * team_translate_pe answer for them. Barriers and collectives on a team that holds every PE
 * are the world's; on a team of some of the PEs they loop over its members, and its barrier is
 * a dissemination barrier over the words of its slot (rshmem_detail_team_barrier_thread).
 *
 * Scopes: a plain call is the calling thread's; _warp calls are made by every thread of a full
 * warp and _block calls by every thread of the block, each copying a strided part between
 * __syncwarp or __syncthreads (the group barrier). Collectives run between two group barriers
 * of which the group's first thread makes the PE's arrival (rshmem_detail_barrier_thread).
 */
#ifndef RSHMEM_DEVICE_GPU_CUH
#define RSHMEM_DEVICE_GPU_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rshmem/device_abi.h>

#define RSHMEM_STATE_STORAGE static
#include <rshmem/rshmem_device.cuh>

/* ---- State binding ------------------------------------------------------------------------ */

extern "C" void rshmemx_register_device_binder(int (*binder)(const void *state, size_t bytes));

/* Copies libshmem's state into this unit's rshmem_state; a size mismatch means a header and a
 * library of different versions. */
/* Whether libshmem bound this unit's state (only the CUDA backend does): the on-stream
 * collectives run as kernels only then. */
static bool rshmemd_gpu_state_bound = false;
static int rshmemd_gpu_bind(const void *state, size_t bytes) {
    if (bytes != sizeof(rshmem_state_t)) return (int)cudaErrorInvalidValue;
    cudaError_t status = cudaMemcpyToSymbol(rshmem_state, state, bytes);
    rshmemd_gpu_state_bound = status == cudaSuccess;
    return (int)status;
}
/* The split teams, by NVSHMEM handle (device_teams.rs writes the same layout). */
#define RSHMEMD_GPU_MAX_TEAMS 64
typedef struct {
    int32_t start, stride, size, my_index; /* size 0: no live team has the handle */
    int32_t slot;                          /* the same on every member, below RSHMEM_TEAM_SLOTS */
} rshmemd_gpu_team_t;
typedef struct {
    int32_t count; /* handles, the predefined three included */
    int32_t reserved;
    rshmemd_gpu_team_t team[RSHMEMD_GPU_MAX_TEAMS];
} rshmemd_gpu_teams_t;
static __constant__ rshmemd_gpu_teams_t rshmemd_gpu_teams;

extern "C" void rshmemx_register_device_team_binder(int (*binder)(const void *table, size_t bytes));

static int rshmemd_gpu_bind_teams(const void *table, size_t bytes) {
    if (bytes != sizeof(rshmemd_gpu_teams_t)) return (int)cudaErrorInvalidValue;
    return (int)cudaMemcpyToSymbol(rshmemd_gpu_teams, table, bytes);
}
namespace {
struct rshmemd_gpu_registration {
    rshmemd_gpu_registration() {
        /* Eager module loading, unless the user chose: under CUDA's lazy loading the first launch
         * of a kernel loads it, holding the context's loader until the kernels running on the GPU
         * end. A kernel that waits for a PE of another node waits for its proxy thread, whose
         * copies and atomics kernel need that loader: a launch meanwhile (an on-stream barrier
         * after a collectively launched kernel) would deadlock. Set before main, so before the
         * driver's initialisation reads it. */
        setenv("CUDA_MODULE_LOADING", "EAGER", 0);
        rshmemx_register_device_binder(&rshmemd_gpu_bind);
        rshmemx_register_device_team_binder(&rshmemd_gpu_bind_teams);
    }
};
rshmemd_gpu_registration rshmemd_gpu_registered;
} // namespace

/* ---- Helpers ------------------------------------------------------------------------------- */

/* Ends the kernel (and the run's GPU context) with a message: a call the GPU cannot run. */
#define RSHMEMD_GPU_FAIL(what)                                                                     \
    do {                                                                                           \
        printf("rshmem: PE %d: %s\n", rshmem_state.my_pe, what);                                   \
        __trap();                                                                                  \
    } while (0)

/* Whether `team` is one of the teams that are the world on the GPU. */
__device__ __forceinline__ bool rshmemd_gpu_world_like(int32_t team) {
    return team == RSHMEMD_TEAM_WORLD || team == RSHMEMD_TEAM_SHARED || team == RSHMEMD_TEAM_NODE;
}
/* The split team `team`, or null for a predefined handle or one no live team has. */
__device__ __forceinline__ const rshmemd_gpu_team_t *rshmemd_gpu_split(int32_t team) {
    if (rshmemd_gpu_world_like(team) || team < 0 || team >= rshmemd_gpu_teams.count || team >= RSHMEMD_GPU_MAX_TEAMS)
        return nullptr;
    const rshmemd_gpu_team_t *split = &rshmemd_gpu_teams.team[team];
    return split->size > 0 ? split : nullptr;
}
/* A team as its barriers and collectives see it: member i is world PE start + i * stride, this
 * PE is member `index`, and `slot` names the team's barrier words (-1: the team holds every PE
 * and its barrier is the world's, which is faster: one flight of stores instead of log2(size)
 * rounds). */
struct rshmemd_gpu_team_view {
    int start, stride, size, index, slot;
    __device__ int world_pe(int member) const { return start + member * stride; }
};
__device__ __forceinline__ rshmemd_gpu_team_view rshmemd_gpu_team_view_of(int32_t team) {
    rshmemd_gpu_team_view view = {0, 1, rshmem_n_pes(), rshmem_my_pe(), -1};
    if (rshmemd_gpu_world_like(team)) return view;
    const rshmemd_gpu_team_t *split = rshmemd_gpu_split(team);
    if (split == nullptr) {
        RSHMEMD_GPU_FAIL("a device barrier or collective on a team handle no live team has; pass a team this PE "
                         "belongs to (a split gives NVSHMEM_TEAM_INVALID to the PEs it leaves out)");
    }
    if (split->start == 0 && split->stride == 1 && split->size == rshmem_n_pes()) return view;
    if (split->slot < 0 || split->slot >= RSHMEM_TEAM_SLOTS) {
        RSHMEMD_GPU_FAIL("a team slot the device's synchronisation memory does not have: nvshmem.h and libshmem "
                         "are of different versions; build with the headers of the libshmem the program runs on");
    }
    view.start = split->start;
    view.stride = split->stride;
    view.size = split->size;
    view.index = split->my_index;
    view.slot = split->slot;
    return view;
}

/* NVSHMEM's comparison (device_abi.h) as rshmem_device.cuh's. */
__device__ __forceinline__ int rshmemd_gpu_cmp(int cmp) {
    switch (cmp) {
    case RSHMEMD_CMP_EQ: return RSHMEM_CMP_EQ;
    case RSHMEMD_CMP_NE: return RSHMEM_CMP_NE;
    case RSHMEMD_CMP_GT: return RSHMEM_CMP_GT;
    case RSHMEMD_CMP_LE: return RSHMEM_CMP_LE;
    case RSHMEMD_CMP_LT: return RSHMEM_CMP_LT;
    case RSHMEMD_CMP_GE: return RSHMEM_CMP_GE;
    default: RSHMEMD_GPU_FAIL("unknown comparison; pass an NVSHMEM_CMP_* constant"); return RSHMEM_CMP_EQ;
    }
}
__device__ __forceinline__ int rshmemd_gpu_signal_op(int sig_op) {
    return sig_op == RSHMEMD_SIGNAL_ADD ? RSHMEM_SIGNAL_ADD : RSHMEM_SIGNAL_SET;
}

/* A value of T from the low bytes of `bits`. */
template <typename T> __device__ __forceinline__ T rshmemd_gpu_from_bits(uint64_t bits) {
    T value;
    memcpy(&value, &bits, sizeof(T));
    return value;
}

/* Runs CALL with T the element type `type` names. */
#define RSHMEMD_GPU_DISPATCH(type, CALL)                                                           \
    switch (type) {                                                                                \
    case RSHMEMD_TYPE(RSHMEMD_KIND_SIGNED, 1): { typedef int8_t T; CALL; } break;                  \
    case RSHMEMD_TYPE(RSHMEMD_KIND_SIGNED, 2): { typedef int16_t T; CALL; } break;                 \
    case RSHMEMD_TYPE(RSHMEMD_KIND_SIGNED, 4): { typedef int32_t T; CALL; } break;                 \
    case RSHMEMD_TYPE(RSHMEMD_KIND_SIGNED, 8): { typedef long long T; CALL; } break;               \
    case RSHMEMD_TYPE(RSHMEMD_KIND_UNSIGNED, 1): { typedef uint8_t T; CALL; } break;               \
    case RSHMEMD_TYPE(RSHMEMD_KIND_UNSIGNED, 2): { typedef uint16_t T; CALL; } break;              \
    case RSHMEMD_TYPE(RSHMEMD_KIND_UNSIGNED, 4): { typedef uint32_t T; CALL; } break;              \
    case RSHMEMD_TYPE(RSHMEMD_KIND_UNSIGNED, 8): { typedef unsigned long long T; CALL; } break;    \
    case RSHMEMD_TYPE(RSHMEMD_KIND_FLOAT, 4): { typedef float T; CALL; } break;                    \
    case RSHMEMD_TYPE(RSHMEMD_KIND_FLOAT, 8): { typedef double T; CALL; } break;                   \
    default: RSHMEMD_GPU_FAIL("an element type the device API does not know");                      \
    }

/* RSHMEMD_GPU_DISPATCH, and the 16-bit floating types, which only the reductions take. */
#define RSHMEMD_GPU_DISPATCH_REDUCE(type, CALL)                                                    \
    if ((type) == RSHMEMD_TYPE(RSHMEMD_KIND_FLOAT, 2)) {                                           \
        typedef __half T;                                                                          \
        CALL;                                                                                      \
    } else if ((type) == RSHMEMD_TYPE(RSHMEMD_KIND_BFLOAT, 2)) {                                   \
        typedef __nv_bfloat16 T;                                                                   \
        CALL;                                                                                      \
    } else                                                                                         \
        RSHMEMD_GPU_DISPATCH(type, CALL)

/* A scope of the on-stream collectives' kernels only (rshmem/stream_gpu.cuh): every thread of
 * a one-dimensional grid whose blocks all run at once (a cooperative launch). */
#define RSHMEMD_SCOPE_GRID 3

/* The calling thread's part of a group: its rank and the group's size. */
struct rshmemd_gpu_group {
    unsigned rank, size;
};
__device__ __forceinline__ rshmemd_gpu_group rshmemd_gpu_group_of(int scope) {
    rshmemd_gpu_group group = {0, 1};
    if (scope == RSHMEMD_SCOPE_WARP) {
        group.rank = rshmem_detail_block_rank() % 32;
        group.size = 32;
    } else if (scope == RSHMEMD_SCOPE_BLOCK) {
        group.rank = rshmem_detail_block_rank();
        group.size = rshmem_detail_block_size();
    } else if (scope == RSHMEMD_SCOPE_GRID) {
        group.rank = blockIdx.x * rshmem_detail_block_size() + rshmem_detail_block_rank();
        group.size = gridDim.x * rshmem_detail_block_size();
    }
    return group;
}
/* Every block of the grid arrives: the last one to arrive bumps the generation that the others
 * wait for. The fences make each block's writes before the barrier visible to every block
 * after it (gpu scope: the grid is on one GPU). */
__device__ __forceinline__ void rshmemd_gpu_grid_sync() {
    __syncthreads();
    if (gridDim.x > 1 && rshmem_detail_block_rank() == 0) {
        rshmem_sync_t *mine = rshmem_detail_sync(rshmem_state.my_pe);
        volatile unsigned *generation = &mine->grid_generation;
        unsigned seen = *generation;
        __threadfence();
        if (atomicAdd(&mine->grid_arrived, 1u) == gridDim.x - 1) {
            mine->grid_arrived = 0;
            __threadfence();
            *generation = seen + 1;
        } else {
            while (*generation == seen) {
            }
        }
        __threadfence();
    }
    __syncthreads();
}
__device__ __forceinline__ void rshmemd_gpu_group_sync(int scope) {
    if (scope == RSHMEMD_SCOPE_WARP) {
        __syncwarp();
    } else if (scope == RSHMEMD_SCOPE_BLOCK) {
        __syncthreads();
    } else if (scope == RSHMEMD_SCOPE_GRID) {
        rshmemd_gpu_grid_sync();
    }
}
/* The group synchronises, its first thread arrives for the PE and waits for every member of
 * `team` (with the fence that makes it a quiet, cumulative over the group through the group
 * barrier), and the group synchronises again. `what` and `caller` name the call and the
 * program's function in a hang report. */
__device__ __forceinline__ void rshmemd_gpu_group_barrier(int scope, const rshmemd_gpu_team_view &team,
                                                          const char *what, const char *caller) {
    rshmemd_gpu_group_sync(scope);
    if (rshmemd_gpu_group_of(scope).rank == 0) {
        if (team.slot < 0) {
            rshmem_detail_barrier_thread(caller, what);
        } else {
            rshmem_detail_team_barrier_thread(team.slot, team.start, team.stride, team.size, team.index, what,
                                              caller);
        }
    }
    rshmemd_gpu_group_sync(scope);
}

/* ---- Setup and addressing --------------------------------------------------------------------- */

RSHMEMD_DECL int rshmemd_my_pe(void) { return rshmem_my_pe(); }
RSHMEMD_DECL int rshmemd_n_pes(void) { return rshmem_n_pes(); }
RSHMEMD_DECL int rshmemd_team_my_pe(int32_t team) {
    if (rshmemd_gpu_world_like(team)) return rshmem_my_pe();
    const rshmemd_gpu_team_t *split = rshmemd_gpu_split(team);
    return split ? split->my_index : -1;
}
RSHMEMD_DECL int rshmemd_team_n_pes(int32_t team) {
    if (rshmemd_gpu_world_like(team)) return rshmem_n_pes();
    const rshmemd_gpu_team_t *split = rshmemd_gpu_split(team);
    return split ? split->size : -1;
}
RSHMEMD_DECL int rshmemd_team_translate_to_world(int32_t team, int pe) {
    if (rshmemd_gpu_world_like(team)) return pe >= 0 && pe < rshmem_n_pes() ? pe : -1;
    const rshmemd_gpu_team_t *split = rshmemd_gpu_split(team);
    return split && pe >= 0 && pe < split->size ? split->start + pe * split->stride : -1;
}
RSHMEMD_DECL void *rshmemd_ptr(const void *ptr, int pe) { return rshmem_ptr(ptr, pe); }

/* ---- Copies ----------------------------------------------------------------------------------- */

/* Loads and stores are issued at once, so nbi is the blocking copy (rshmem_device.cuh). */
RSHMEMD_DECL void rshmemd_putmem(void *dst, const void *src, size_t bytes, int pe, int scope, int nbi) {
    (void)nbi;
    if (scope == RSHMEMD_SCOPE_WARP) {
        rshmem_putmem_warp(dst, src, bytes, pe);
    } else if (scope == RSHMEMD_SCOPE_BLOCK) {
        rshmem_putmem_block(dst, src, bytes, pe);
    } else {
        rshmem_putmem(dst, src, bytes, pe);
    }
}
RSHMEMD_DECL void rshmemd_getmem(void *dst, const void *src, size_t bytes, int pe, int scope, int nbi) {
    (void)nbi;
    if (scope == RSHMEMD_SCOPE_WARP) {
        rshmem_getmem_warp(dst, src, bytes, pe);
    } else if (scope == RSHMEMD_SCOPE_BLOCK) {
        rshmem_getmem_block(dst, src, bytes, pe);
    } else {
        rshmem_getmem(dst, src, bytes, pe);
    }
}
RSHMEMD_DECL void rshmemd_p(void *dst, const void *value, int type, int pe) {
    RSHMEMD_GPU_DISPATCH(type, rshmem_p((T *)dst, *(const T *)value, pe))
}
RSHMEMD_DECL void rshmemd_g(void *out, const void *src, int type, int pe) {
    RSHMEMD_GPU_DISPATCH(type, *(T *)out = rshmem_g((const T *)src, pe))
}

/* ---- Atomics ---------------------------------------------------------------------------------- */

/* Every operation on the word's bits as unsigned U (4 or 8 bytes): two's complement makes
 * add and the bitwise operations the same for signed types, and floats only fetch, set and
 * swap (NVSHMEM's extended AMO types), which move bits. */
template <typename U>
__device__ __forceinline__ uint64_t rshmemd_gpu_amo(U *dst, int op, U value, U compare, int pe) {
    switch (op) {
    case RSHMEMD_AMO_FETCH: return rshmem_atomic_fetch(dst, pe);
    case RSHMEMD_AMO_SET: rshmem_atomic_set(dst, value, pe); return 0;
    case RSHMEMD_AMO_SWAP: return rshmem_atomic_swap(dst, value, pe);
    case RSHMEMD_AMO_COMPARE_SWAP: return rshmem_atomic_compare_swap(dst, compare, value, pe);
    case RSHMEMD_AMO_FETCH_INC:
    case RSHMEMD_AMO_INC: return rshmem_atomic_fetch_add(dst, (U)1, pe);
    case RSHMEMD_AMO_FETCH_ADD:
    case RSHMEMD_AMO_ADD: return rshmem_atomic_fetch_add(dst, value, pe);
    case RSHMEMD_AMO_FETCH_AND:
    case RSHMEMD_AMO_AND: return rshmem_atomic_fetch_and(dst, value, pe);
    case RSHMEMD_AMO_FETCH_OR:
    case RSHMEMD_AMO_OR: return rshmem_atomic_fetch_or(dst, value, pe);
    case RSHMEMD_AMO_FETCH_XOR:
    case RSHMEMD_AMO_XOR: return rshmem_atomic_fetch_xor(dst, value, pe);
    default: RSHMEMD_GPU_FAIL("unknown atomic operation"); return 0;
    }
}
RSHMEMD_DECL uint64_t rshmemd_amo(void *dst, int op, int type, uint64_t value, uint64_t compare, int pe) {
    if ((type & 0xff) == 4) {
        return rshmemd_gpu_amo((unsigned int *)dst, op, (unsigned int)value, (unsigned int)compare, pe);
    }
    if ((type & 0xff) == 8) {
        return rshmemd_gpu_amo((unsigned long long *)dst, op, (unsigned long long)value,
                               (unsigned long long)compare, pe);
    }
    RSHMEMD_GPU_FAIL("atomics take elements of 4 or 8 bytes");
    return 0;
}

/* ---- Signals ---------------------------------------------------------------------------------- */

/* Thread scope: the copy, then the signal with release. Warp and block: the group copies, then
 * its first thread signals (release is cumulative over the group's stores through the group
 * barrier that ended the copy), then the group synchronises so the call completes for all. */
RSHMEMD_DECL void rshmemd_put_signal(void *dst, const void *src, size_t bytes, uint64_t *sig, uint64_t signal,
                                     int sig_op, int pe, int scope, int nbi) {
    int op = rshmemd_gpu_signal_op(sig_op);
    if (scope == RSHMEMD_SCOPE_THREAD) {
        rshmem_put_signal(dst, src, bytes, (rshmem_u64 *)sig, signal, op, pe);
        return;
    }
    rshmemd_putmem(dst, src, bytes, pe, scope, nbi);
    if (rshmemd_gpu_group_of(scope).rank == 0) {
        rshmem_put_signal(dst, src, 0, (rshmem_u64 *)sig, signal, op, pe);
    }
    rshmemd_gpu_group_sync(scope);
}
/* A put of no bytes: the signal alone, with the same release. */
RSHMEMD_DECL void rshmemd_signal_op(uint64_t *sig, uint64_t signal, int sig_op, int pe) {
    rshmem_put_signal(sig, sig, 0, (rshmem_u64 *)sig, signal, rshmemd_gpu_signal_op(sig_op), pe);
}
RSHMEMD_DECL uint64_t rshmemd_signal_fetch(const uint64_t *sig) {
    return rshmem_signal_fetch((const rshmem_u64 *)sig);
}
/* The waits with the name of the program's function that called them (`caller`, from
 * __builtin_FUNCTION() at the call of NVSHMEM's wrapper, or null), for the watchdog's report;
 * the device ABI's forms pass none. */
__device__ __forceinline__ uint64_t rshmemd_gpu_signal_wait_until(uint64_t *sig, int cmp, uint64_t value,
                                                                  const char *caller) {
    return rshmem_signal_wait_until((rshmem_u64 *)sig, rshmemd_gpu_cmp(cmp), value, caller);
}
RSHMEMD_DECL uint64_t rshmemd_signal_wait_until(uint64_t *sig, int cmp, uint64_t value) {
    return rshmemd_gpu_signal_wait_until(sig, cmp, value, nullptr);
}

/* ---- Waits and tests -------------------------------------------------------------------------- */

__device__ __forceinline__ void rshmemd_gpu_wait_until(void *ivar, int type, int cmp, uint64_t value,
                                                       const char *caller) {
    int gpu_cmp = rshmemd_gpu_cmp(cmp);
    RSHMEMD_GPU_DISPATCH(type, rshmem_wait_until((T *)ivar, gpu_cmp, rshmemd_gpu_from_bits<T>(value), caller))
}
RSHMEMD_DECL void rshmemd_wait_until(void *ivar, int type, int cmp, uint64_t value) {
    rshmemd_gpu_wait_until(ivar, type, cmp, value, nullptr);
}
/* One load of the wait's kind; a satisfied test of a narrow word takes the acquire fence a
 * wait would, so what the writer ordered before the word is visible after it. */
template <typename T> __device__ __forceinline__ int rshmemd_gpu_test(const T *ivar, int cmp, T value) {
    bool holds = rshmem_detail_holds(rshmem_detail_poller<T>::load(ivar), cmp, value);
    if (holds && !rshmem_detail_poller<T>::ACQUIRES) rshmem_detail_fence_acq_rel();
    return holds ? 1 : 0;
}
RSHMEMD_DECL int rshmemd_test(void *ivar, int type, int cmp, uint64_t value) {
    int gpu_cmp = rshmemd_gpu_cmp(cmp);
    RSHMEMD_GPU_DISPATCH(type, return rshmemd_gpu_test((const T *)ivar, gpu_cmp, rshmemd_gpu_from_bits<T>(value)))
    return 0;
}

/* The deadline of the waits for several words (nvshmemi_wait_group in nvshmem_sync.h): past
 * the wait timeout, the first word's wait is reported through the hang record, as a single
 * wait's (rshmem_detail_wait_timed_out). */
RSHMEMD_DECL uint64_t rshmemd_wait_start(void) { return rshmem_detail_now_ns(); }
/* The deadline check of the waits for several words, with the name of the program's function
 * that called the wait (`caller`, or null) for the watchdog's report. */
__device__ __forceinline__ void rshmemd_gpu_wait_check(uint64_t started, const void *ivar, int type, int cmp,
                                                       uint64_t value, const char *call, const char *caller) {
    rshmem_u64 timeout_ns =
        RSHMEM_WAIT_TIMEOUT_NS ? (rshmem_u64)RSHMEM_WAIT_TIMEOUT_NS : rshmem_state.wait_timeout_ns;
    rshmem_u64 waited_ns = rshmem_detail_now_ns() - started;
    if (timeout_ns == 0 || waited_ns <= timeout_ns) return;
    rshmem_u64 seen = 0;
    for (int i = 0; i < (type & 0xff) && i < 8; ++i) {
        ((unsigned char *)&seen)[i] = ((const volatile unsigned char *)ivar)[i];
    }
    rshmem_detail_wait_timed_out(ivar, rshmemd_gpu_cmp(cmp), value, seen, waited_ns, call, caller);
}
RSHMEMD_DECL void rshmemd_wait_check(uint64_t started, const void *ivar, int type, int cmp, uint64_t value,
                                     const char *call) {
    rshmemd_gpu_wait_check(started, ivar, type, cmp, value, call, nullptr);
}

/* ---- Ordering and barriers -------------------------------------------------------------------- */

/* Each thread orders its own operations; the group's operations are ordered by every thread's
 * fence after the group barrier. */
RSHMEMD_DECL void rshmemd_fence(int scope) {
    rshmemd_gpu_group_sync(scope);
    rshmem_fence();
}
RSHMEMD_DECL void rshmemd_quiet(int scope) {
    rshmemd_gpu_group_sync(scope);
    rshmem_quiet();
    rshmemd_gpu_group_sync(scope);
}
/* A sync is the barrier: its fence is more than a sync needs, never less. NVSHMEM's wrappers
 * (nvshmem_coll.h) call it with their name and the caller's; the device ABI's forms with
 * theirs. */
__device__ __forceinline__ void rshmemd_gpu_barrier(int32_t team, int scope, const char *what, const char *caller) {
    rshmemd_gpu_group_barrier(scope, rshmemd_gpu_team_view_of(team), what, caller);
}
RSHMEMD_DECL void rshmemd_barrier(int32_t team, int scope) {
    rshmemd_gpu_barrier(team, scope, "nvshmem_barrier", nullptr);
}
RSHMEMD_DECL void rshmemd_sync(int32_t team, int scope) { rshmemd_gpu_barrier(team, scope, "nvshmem_team_sync", nullptr); }

/* ---- Collectives ------------------------------------------------------------------------------ */

template <typename T> __device__ __forceinline__ T rshmemd_gpu_bitwise(T a, T b, int op) {
    return op == RSHMEMD_OP_AND ? (T)(a & b) : op == RSHMEMD_OP_OR ? (T)(a | b) : (T)(a ^ b);
}
/* Floating types have no bitwise reductions (nvshmem.h generates none). */
template <> __device__ __forceinline__ float rshmemd_gpu_bitwise(float a, float, int) { return a; }
template <> __device__ __forceinline__ double rshmemd_gpu_bitwise(double a, double, int) { return a; }

template <typename T> __device__ __forceinline__ T rshmemd_gpu_combine(T a, T b, int op) {
    switch (op) {
    case RSHMEMD_OP_SUM: return (T)(a + b);
    case RSHMEMD_OP_PROD: return (T)(a * b);
    case RSHMEMD_OP_MIN: return b < a ? b : a;
    case RSHMEMD_OP_MAX: return b > a ? b : a;
    default: return rshmemd_gpu_bitwise(a, b, op);
    }
}
/* half and bfloat16 combine in float and round to nearest even, one step at a time, as the
 * simulator does (runtime/capi/src/cuda_sim/reduce.rs). */
template <> __device__ __forceinline__ __half rshmemd_gpu_combine(__half a, __half b, int op) {
    return __float2half_rn(rshmemd_gpu_combine(__half2float(a), __half2float(b), op));
}
template <> __device__ __forceinline__ __nv_bfloat16 rshmemd_gpu_combine(__nv_bfloat16 a, __nv_bfloat16 b, int op) {
    return __float2bfloat16_rn(rshmemd_gpu_combine(__bfloat162float(a), __bfloat162float(b), op));
}

/* The combination in member order, each member's chunk at `count` elements of its scratch read
 * by loads where it is on this node, else got through the channel into the second half of this
 * PE's scratch (which no peer reads) by the group's first thread, member by member. */
template <typename T>
__device__ void rshmemd_gpu_reduce_proxied(T *dest, size_t count, int op, int scope,
                                           const rshmemd_gpu_team_view &team) {
    rshmemd_gpu_group group = rshmemd_gpu_group_of(scope);
    T *landed = (T *)(rshmem_detail_scratch(rshmem_state.my_pe) + RSHMEM_SCRATCH_BYTES / 2);
    for (int member = 0; member < team.size; ++member) {
        int pe = team.world_pe(member);
        const T *theirs = (const T *)rshmem_detail_scratch(pe);
        if (rshmem_detail_proxied(pe)) {
            if (group.rank == 0) {
                rshmem_detail_proxy_get(landed, RSHMEM_SYNC_HEADER_BYTES, RSHMEM_REGION_SYNC, count * sizeof(T), pe);
            }
            rshmemd_gpu_group_sync(scope);
            theirs = landed;
        }
        for (size_t i = group.rank; i < count; i += group.size) {
            dest[i] = member == 0 ? theirs[i] : rshmemd_gpu_combine(dest[i], theirs[i], op);
        }
        rshmemd_gpu_group_sync(scope);
    }
}
/* dest[i] = op over every member of `team` of its source[i]. Each PE copies its source into its
 * own scratch (so dest may be source), a barrier, each pulls every member's scratch and
 * combines in member order, a barrier (no PE refills its scratch while a peer reads it); in
 * chunks of the scratch's size, or of half of it where PEs of other nodes are got through the
 * channel. */
template <typename T>
__device__ void rshmemd_gpu_reduce(T *dest, const T *source, size_t nelems, int op, int scope,
                                   const rshmemd_gpu_team_view &team, const char *caller) {
    rshmemd_gpu_group group = rshmemd_gpu_group_of(scope);
    bool proxied = rshmem_state.channel != 0;
    const size_t chunk = (proxied ? RSHMEM_SCRATCH_BYTES / 2 : RSHMEM_SCRATCH_BYTES) / sizeof(T);
    for (size_t start = 0; start < nelems; start += chunk) {
        size_t count = nelems - start < chunk ? nelems - start : chunk;
        rshmemd_gpu_group_sync(scope);
        rshmem_detail_copy(rshmem_detail_scratch(rshmem_state.my_pe), source + start, count * sizeof(T), group.rank,
                           group.size);
        rshmemd_gpu_group_barrier(scope, team, "nvshmem_reduce", caller);
        if (proxied) {
            rshmemd_gpu_reduce_proxied(dest + start, count, op, scope, team);
        } else {
            for (size_t i = group.rank; i < count; i += group.size) {
                T acc = ((const T *)rshmem_detail_scratch(team.world_pe(0)))[i];
                for (int member = 1; member < team.size; ++member) {
                    acc = rshmemd_gpu_combine(acc, ((const T *)rshmem_detail_scratch(team.world_pe(member)))[i], op);
                }
                dest[start + i] = acc;
            }
        }
        rshmemd_gpu_group_barrier(scope, team, "nvshmem_reduce", caller);
    }
}

/* NVSHMEM's name of a collective kind, for messages. */
__device__ __forceinline__ const char *rshmemd_gpu_collective_name(int kind) {
    switch (kind) {
    case RSHMEMD_COLL_FCOLLECT: return "nvshmem_fcollect";
    case RSHMEMD_COLL_ALLTOALL: return "nvshmem_alltoall";
    case RSHMEMD_COLL_BROADCAST: return "nvshmem_broadcast";
    default: return "nvshmem_reduce";
    }
}

/* Ends a collective whose arguments are wrong on every PE: the group's first thread prints the
 * problem, then the team's barrier (a trap ends the kernel at once, before the message of a
 * thread that has not printed yet, and every member reaches the same check), then the trap. */
__device__ __forceinline__ void rshmemd_gpu_collective_refused(int kind, const char *problem, int scope,
                                                               const rshmemd_gpu_team_view &team, const char *caller) {
    if (rshmemd_gpu_group_of(scope).rank == 0) {
        printf("rshmem: PE %d: %s: %s\n", rshmem_state.my_pe, rshmemd_gpu_collective_name(kind), problem);
    }
    rshmemd_gpu_group_barrier(scope, team, rshmemd_gpu_collective_name(kind), caller);
    __trap();
}

/* The collectives on `team` at `scope`, with the program's function that called them
 * (`caller`, or null) for a hang report; rshmemd_collective is the device ABI's form. */
__device__ __forceinline__ int rshmemd_gpu_collective(int kind, int32_t team, void *dest, const void *src,
                                                      size_t nelems, int type, int op, int root, int scope,
                                                      const char *caller) {
    rshmemd_gpu_team_view members = rshmemd_gpu_team_view_of(team);
    if (kind == RSHMEMD_COLL_REDUCE) {
        RSHMEMD_GPU_DISPATCH_REDUCE(type, rshmemd_gpu_reduce((T *)dest, (const T *)src, nelems, op, scope, members, caller))
        return 0;
    }
    const char *what = rshmemd_gpu_collective_name(kind);
    rshmemd_gpu_group group = rshmemd_gpu_group_of(scope);
    size_t bytes = nelems * (size_t)(type & 0xff);
    /* A peer's pull can read this PE's source after this PE wrote its dest over it: refused, as
     * the simulator refuses it (a broadcast in place is fine: the root's dest is its source). */
    size_t dest_bytes = kind == RSHMEMD_COLL_BROADCAST ? bytes : bytes * (size_t)members.size;
    size_t src_bytes = kind == RSHMEMD_COLL_ALLTOALL ? dest_bytes : bytes;
    const char *d = (const char *)dest, *s = (const char *)src;
    int overlap = d < s + src_bytes && s < d + dest_bytes;
    if (overlap && !(kind == RSHMEMD_COLL_BROADCAST && d == s)) {
        rshmemd_gpu_collective_refused(kind, "source and dest overlap; pass separate arrays", scope, members, caller);
    }
    if (kind == RSHMEMD_COLL_BROADCAST && (root < 0 || root >= members.size)) {
        rshmemd_gpu_collective_refused(kind, "PE_root is not a PE of the team; pass a number below nvshmem_team_n_pes",
                                       scope, members, caller);
    }
    /* The sources are ready everywhere, each thread pulls its strided part, and no PE changes a
     * source that another still reads. */
    rshmemd_gpu_group_barrier(scope, members, what, caller);
    if (kind == RSHMEMD_COLL_BROADCAST) {
        rshmem_detail_get_group(dest, src, bytes, members.world_pe(root), group.rank, group.size);
    } else {
        for (int member = 0; member < members.size; ++member) {
            /* fcollect: the member's source; alltoall: the member's block for this PE. */
            const char *theirs = (const char *)src + (kind == RSHMEMD_COLL_ALLTOALL ? (size_t)members.index * bytes : 0);
            rshmem_detail_get_group((char *)dest + (size_t)member * bytes, theirs, bytes, members.world_pe(member),
                                    group.rank, group.size);
        }
    }
    rshmemd_gpu_group_barrier(scope, members, what, caller);
    return 0;
}
RSHMEMD_DECL int rshmemd_collective(int kind, int32_t team, void *dest, const void *src, size_t nelems, int type,
                                    int op, int root, int scope) {
    return rshmemd_gpu_collective(kind, team, dest, src, nelems, type, op, root, scope, nullptr);
}

#endif
