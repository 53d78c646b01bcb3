/*
 * NVSHMEM's atomics, signals, point-to-point waits and tests, fence and quiet, for nvshmem.h.
 *
 * Device side: one primitive per family (rshmemd_amo, rshmemd_put_signal, rshmemd_wait_until,
 * rshmemd_test) with the operation, the element type and the operands as bits, so the typed
 * names are generated from the type tables without a body each. The _all/_any/_some forms
 * are one loop over the primitives (nvshmemi_wait_group). Host side: the shmem.h function of
 * the same name, with NVSHMEM's comparison and signal constants translated.
 */
#ifndef RSHMEM_NVSHMEM_SYNC_H
#define RSHMEM_NVSHMEM_SYNC_H

/* On the GPU (nvcc, C++), a wait takes the name of the function that calls it as a defaulted
 * argument, which a wait past RSHMEM_WAIT_TIMEOUT_MS reports (docs/device-api.md); elsewhere
 * the device ABI's forms run. NVSHMEMI_CALLER_ALONE is the parameter of a function that has no
 * other; the barriers and collectives of nvshmem_coll.h take it too (NVSHMEMI_HAVE_CALLER). */
#if defined(__cplusplus) && defined(__CUDACC__) && !defined(RSHMEM_CUDA_SIM) && defined(__has_builtin)
#if __has_builtin(__builtin_FUNCTION)
#define NVSHMEMI_HAVE_CALLER 1
#define NVSHMEMI_CALLER_ALONE const char *nvshmemi_caller = __builtin_FUNCTION()
#define NVSHMEMI_CALLER , NVSHMEMI_CALLER_ALONE
#define NVSHMEMI_SIGNAL_WAIT(sig, cmp, value) rshmemd_gpu_signal_wait_until(sig, cmp, value, nvshmemi_caller)
#define NVSHMEMI_WAIT_UNTIL(ivar, type, cmp, value) rshmemd_gpu_wait_until(ivar, type, cmp, value, nvshmemi_caller)
#define NVSHMEMI_CALLER_NAME nvshmemi_caller
#define NVSHMEMI_WAIT_CHECK(started, ivar, type, cmp, value, call)                                 \
    rshmemd_gpu_wait_check(started, ivar, type, cmp, value, call, nvshmemi_caller)
#endif
#endif
#ifndef NVSHMEMI_CALLER
#define NVSHMEMI_CALLER_ALONE void
#define NVSHMEMI_CALLER
#define NVSHMEMI_SIGNAL_WAIT(sig, cmp, value) rshmemd_signal_wait_until(sig, cmp, value)
#define NVSHMEMI_WAIT_UNTIL(ivar, type, cmp, value) rshmemd_wait_until(ivar, type, cmp, value)
#define NVSHMEMI_CALLER_NAME ((const char *)0)
#define NVSHMEMI_WAIT_CHECK(started, ivar, type, cmp, value, call)                                 \
    rshmemd_wait_check(started, ivar, type, cmp, value, call)
#endif

/* ---- Helpers ------------------------------------------------------------------------------- */

/* `bytes` bytes at `value` in the low bytes of a uint64_t and back: byte copies, so floats
 * keep their bits and no aliasing rule is broken (the device primitives take operands so). */
NVSHMEMI_HD uint64_t nvshmemi_bits(const void *value, size_t bytes) {
    uint64_t bits = 0;
    for (size_t i = 0; i < bytes; ++i) ((unsigned char *)&bits)[i] = ((const unsigned char *)value)[i];
    return bits;
}
NVSHMEMI_HD void nvshmemi_from_bits(void *out, uint64_t bits, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i) ((unsigned char *)out)[i] = ((const unsigned char *)&bits)[i];
}

#ifdef __CUDACC__
/* One atomic on the device; the old value goes to `fetched` if it is not NULL. */
NVSHMEMI_D void nvshmemi_amo(void *dest, int op, int type, const void *value, const void *compare, size_t bytes,
                             int pe, void *fetched) {
    uint64_t old = rshmemd_amo(dest, op, type, value ? nvshmemi_bits(value, bytes) : 0,
                               compare ? nvshmemi_bits(compare, bytes) : 0, pe);
    if (fetched) nvshmemi_from_bits(fetched, old, bytes);
}

/* The _all (mode 0: returns 1 once every selected word holds), _any (1: the index of one that
 * holds, or SIZE_MAX) and _some (2: how many hold, their indices in `indices`) forms of
 * wait_until (`wait` 1: until the answer is positive) and test (`wait` 0: once). `values`
 * holds a comparison value per element (the _vector forms), or is NULL for `value`. The _all
 * wait is one wait_until per word, with its deadline; the _any and _some waits poll and, past
 * RSHMEM_WAIT_TIMEOUT_MS with no word holding, report their first word (rshmemd_wait_check). */
NVSHMEMI_D size_t nvshmemi_wait_group(void *ivars, size_t elem_bytes, int type, size_t nelems, size_t *indices,
                                      const int *status, int cmp, uint64_t value, const void *values, int mode,
                                      int wait, const char *nvshmemi_caller) {
    (void)nvshmemi_caller;
    const char *call = mode == 1 ? (values ? "nvshmem_wait_until_any_vector" : "nvshmem_wait_until_any")
                                 : (values ? "nvshmem_wait_until_some_vector" : "nvshmem_wait_until_some");
    uint64_t started = wait && mode != 0 ? rshmemd_wait_start() : 0;
    for (;;) {
        size_t holding = 0, selected = 0, first = 0;
        for (size_t i = 0; i < nelems; ++i) {
            if (status && status[i]) continue;
            if (selected++ == 0) first = i;
            void *word = (char *)ivars + i * elem_bytes;
            uint64_t against = values ? nvshmemi_bits((const char *)values + i * elem_bytes, elem_bytes) : value;
            if (mode == 0 && wait) {
                NVSHMEMI_WAIT_UNTIL(word, type, cmp, against);
                ++holding;
            } else if (rshmemd_test(word, type, cmp, against)) {
                if (mode == 1) return i;
                if (mode == 2) indices[holding] = i;
                ++holding;
            }
        }
        if (mode == 0 && (wait || holding == selected)) return 1;
        if (mode == 0 || selected == 0) return mode == 1 ? SIZE_MAX : 0;
        if (mode == 2 && holding > 0) return holding;
        if (!wait) return mode == 1 ? SIZE_MAX : 0;
        NVSHMEMI_WAIT_CHECK(started, (char *)ivars + first * elem_bytes, type, cmp,
                            values ? nvshmemi_bits((const char *)values + first * elem_bytes, elem_bytes) : value,
                            call);
    }
}
#endif

/* ---- Atomics --------------------------------------------------------------------------------- */

#define NVSHMEMI_AMO_FETCHING(NAME, TYPE, KIND, OP, CODE)                                          \
    NVSHMEMI_HD TYPE nvshmem_##NAME##_atomic_##OP(TYPE *dest, TYPE value, int pe) {                \
        NVSHMEMI_PICK({                                                                            \
            TYPE old;                                                                              \
            nvshmemi_amo(dest, CODE, NVSHMEMI_TYPE_CODE(TYPE, KIND), &value, NULL, sizeof(TYPE), pe, &old); \
            return old;                                                                            \
        },                                                                                         \
                      return shmem_##NAME##_atomic_##OP(dest, value, pe););                        \
    }
#define NVSHMEMI_AMO_UPDATING(NAME, TYPE, KIND, OP, CODE)                                          \
    NVSHMEMI_HD void nvshmem_##NAME##_atomic_##OP(TYPE *dest, TYPE value, int pe) {                \
        NVSHMEMI_PICK(nvshmemi_amo(dest, CODE, NVSHMEMI_TYPE_CODE(TYPE, KIND), &value, NULL, sizeof(TYPE), pe, NULL), \
                      shmem_##NAME##_atomic_##OP(dest, value, pe));                                \
    }

#define NVSHMEMI_AMO_EXTENDED(NAME, TYPE, KIND)                                                    \
    NVSHMEMI_HD TYPE nvshmem_##NAME##_atomic_fetch(const TYPE *source, int pe) {                   \
        NVSHMEMI_PICK({                                                                            \
            TYPE old;                                                                              \
            nvshmemi_amo((void *)source, RSHMEMD_AMO_FETCH, NVSHMEMI_TYPE_CODE(TYPE, KIND), NULL, NULL, sizeof(TYPE), \
                         pe, &old);                                                                \
            return old;                                                                            \
        },                                                                                         \
                      return shmem_##NAME##_atomic_fetch(source, pe););                            \
    }                                                                                              \
    NVSHMEMI_AMO_UPDATING(NAME, TYPE, KIND, set, RSHMEMD_AMO_SET)                                  \
    NVSHMEMI_AMO_FETCHING(NAME, TYPE, KIND, swap, RSHMEMD_AMO_SWAP)
NVSHMEMI_AMO_EXTENDED_TYPES(NVSHMEMI_AMO_EXTENDED)
#undef NVSHMEMI_AMO_EXTENDED

#define NVSHMEMI_AMO_STANDARD(NAME, TYPE, KIND)                                                    \
    NVSHMEMI_HD TYPE nvshmem_##NAME##_atomic_compare_swap(TYPE *dest, TYPE cond, TYPE value, int pe) { \
        NVSHMEMI_PICK({                                                                            \
            TYPE old;                                                                              \
            nvshmemi_amo(dest, RSHMEMD_AMO_COMPARE_SWAP, NVSHMEMI_TYPE_CODE(TYPE, KIND), &value, &cond, \
                         sizeof(TYPE), pe, &old);                                                  \
            return old;                                                                            \
        },                                                                                         \
                      return shmem_##NAME##_atomic_compare_swap(dest, cond, value, pe););          \
    }                                                                                              \
    NVSHMEMI_HD TYPE nvshmem_##NAME##_atomic_fetch_inc(TYPE *dest, int pe) {                       \
        NVSHMEMI_PICK({                                                                            \
            TYPE old;                                                                              \
            nvshmemi_amo(dest, RSHMEMD_AMO_FETCH_INC, NVSHMEMI_TYPE_CODE(TYPE, KIND), NULL, NULL, sizeof(TYPE), pe, \
                         &old);                                                                    \
            return old;                                                                            \
        },                                                                                         \
                      return shmem_##NAME##_atomic_fetch_inc(dest, pe););                          \
    }                                                                                              \
    NVSHMEMI_HD void nvshmem_##NAME##_atomic_inc(TYPE *dest, int pe) {                             \
        NVSHMEMI_PICK(nvshmemi_amo(dest, RSHMEMD_AMO_INC, NVSHMEMI_TYPE_CODE(TYPE, KIND), NULL, NULL, sizeof(TYPE), \
                                   pe, NULL),                                                      \
                      shmem_##NAME##_atomic_inc(dest, pe));                                        \
    }                                                                                              \
    NVSHMEMI_AMO_FETCHING(NAME, TYPE, KIND, fetch_add, RSHMEMD_AMO_FETCH_ADD)                      \
    NVSHMEMI_AMO_UPDATING(NAME, TYPE, KIND, add, RSHMEMD_AMO_ADD)
NVSHMEMI_AMO_STANDARD_TYPES(NVSHMEMI_AMO_STANDARD)
#undef NVSHMEMI_AMO_STANDARD

#define NVSHMEMI_AMO_BITWISE(NAME, TYPE, KIND)                                                     \
    NVSHMEMI_AMO_FETCHING(NAME, TYPE, KIND, fetch_and, RSHMEMD_AMO_FETCH_AND)                      \
    NVSHMEMI_AMO_UPDATING(NAME, TYPE, KIND, and, RSHMEMD_AMO_AND)                                  \
    NVSHMEMI_AMO_FETCHING(NAME, TYPE, KIND, fetch_or, RSHMEMD_AMO_FETCH_OR)                        \
    NVSHMEMI_AMO_UPDATING(NAME, TYPE, KIND, or, RSHMEMD_AMO_OR)                                    \
    NVSHMEMI_AMO_FETCHING(NAME, TYPE, KIND, fetch_xor, RSHMEMD_AMO_FETCH_XOR)                      \
    NVSHMEMI_AMO_UPDATING(NAME, TYPE, KIND, xor, RSHMEMD_AMO_XOR)
NVSHMEMI_AMO_BITWISE_TYPES(NVSHMEMI_AMO_BITWISE)
#undef NVSHMEMI_AMO_BITWISE
#undef NVSHMEMI_AMO_FETCHING
#undef NVSHMEMI_AMO_UPDATING

/* ---- Signals --------------------------------------------------------------------------------- */

NVSHMEMI_HD void nvshmemi_put_signal(void *dest, const void *source, size_t bytes, uint64_t *sig_addr,
                                     uint64_t signal, int sig_op, int pe, int nbi) {
#ifdef __CUDA_ARCH__
    rshmemd_put_signal(dest, source, bytes, sig_addr, signal, nvshmemi_device_signal_op(sig_op), pe,
                       RSHMEMD_SCOPE_THREAD, nbi);
#else
    if (nbi) {
        shmem_putmem_signal_nbi(dest, source, bytes, sig_addr, signal, nvshmemi_host_signal_op(sig_op), pe);
    } else {
        shmem_putmem_signal(dest, source, bytes, sig_addr, signal, nvshmemi_host_signal_op(sig_op), pe);
    }
#endif
}
NVSHMEMI_HD void nvshmem_putmem_signal(void *dest, const void *source, size_t bytes, uint64_t *sig_addr,
                                       uint64_t signal, int sig_op, int pe) {
    nvshmemi_put_signal(dest, source, bytes, sig_addr, signal, sig_op, pe, 0);
}
NVSHMEMI_HD void nvshmem_putmem_signal_nbi(void *dest, const void *source, size_t bytes, uint64_t *sig_addr,
                                           uint64_t signal, int sig_op, int pe) {
    nvshmemi_put_signal(dest, source, bytes, sig_addr, signal, sig_op, pe, 1);
}
static inline void nvshmemx_putmem_signal_on_stream(void *dest, const void *source, size_t bytes,
                                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                                    cudaStream_t stream) {
    shmemx_putmem_signal_on_stream(dest, source, bytes, sig_addr, signal, nvshmemi_host_signal_op(sig_op), pe,
                                   stream);
}
static inline void nvshmemx_putmem_signal_nbi_on_stream(void *dest, const void *source, size_t bytes,
                                                        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                                        cudaStream_t stream) {
    nvshmemx_putmem_signal_on_stream(dest, source, bytes, sig_addr, signal, sig_op, pe, stream);
}

/* Typed and sized put_signal: PREFIX names it, BYTES is an element's size. */
#define NVSHMEMI_PUT_SIGNAL(PREFIX, TYPE, BYTES)                                                   \
    NVSHMEMI_HD void nvshmem_##PREFIX##_signal(TYPE *dest, const TYPE *source, size_t nelems, uint64_t *sig_addr, \
                                               uint64_t signal, int sig_op, int pe) {             \
        nvshmemi_put_signal(dest, source, nelems * (BYTES), sig_addr, signal, sig_op, pe, 0);      \
    }                                                                                              \
    NVSHMEMI_HD void nvshmem_##PREFIX##_signal_nbi(TYPE *dest, const TYPE *source, size_t nelems,  \
                                                   uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) { \
        nvshmemi_put_signal(dest, source, nelems * (BYTES), sig_addr, signal, sig_op, pe, 1);      \
    }                                                                                              \
    static inline void nvshmemx_##PREFIX##_signal_on_stream(TYPE *dest, const TYPE *source, size_t nelems, \
                                                            uint64_t *sig_addr, uint64_t signal, int sig_op, \
                                                            int pe, cudaStream_t stream) {         \
        nvshmemx_putmem_signal_on_stream(dest, source, nelems * (BYTES), sig_addr, signal, sig_op, pe, stream); \
    }                                                                                              \
    static inline void nvshmemx_##PREFIX##_signal_nbi_on_stream(TYPE *dest, const TYPE *source, size_t nelems, \
                                                                uint64_t *sig_addr, uint64_t signal, int sig_op, \
                                                                int pe, cudaStream_t stream) {     \
        nvshmemx_putmem_signal_on_stream(dest, source, nelems * (BYTES), sig_addr, signal, sig_op, pe, stream); \
    }
#define NVSHMEMI_PUT_SIGNAL_TYPED(NAME, TYPE, KIND) NVSHMEMI_PUT_SIGNAL(NAME##_put, TYPE, sizeof(TYPE))
#define NVSHMEMI_PUT_SIGNAL_SIZED(BITS, _a, _b) NVSHMEMI_PUT_SIGNAL(put##BITS, void, BITS / 8)
NVSHMEMI_RMA_TYPES(NVSHMEMI_PUT_SIGNAL_TYPED)
NVSHMEMI_HALF_TYPES(NVSHMEMI_PUT_SIGNAL_TYPED)
NVSHMEMI_SIZES(NVSHMEMI_PUT_SIGNAL_SIZED)
#undef NVSHMEMI_PUT_SIGNAL_TYPED
#undef NVSHMEMI_PUT_SIGNAL_SIZED
#undef NVSHMEMI_PUT_SIGNAL

#ifdef __CUDACC__
#define NVSHMEMI_PUT_SIGNAL_SCOPED_IN(PREFIX, TYPE, BYTES, SCOPE, SCOPE_CODE)                      \
    NVSHMEMI_D void nvshmemx_##PREFIX##_signal_##SCOPE(TYPE *dest, const TYPE *source, size_t nelems, \
                                                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) { \
        rshmemd_put_signal(dest, source, nelems * (BYTES), sig_addr, signal, nvshmemi_device_signal_op(sig_op), pe, SCOPE_CODE, 0); \
    }                                                                                              \
    NVSHMEMI_D void nvshmemx_##PREFIX##_signal_nbi_##SCOPE(TYPE *dest, const TYPE *source, size_t nelems, \
                                                           uint64_t *sig_addr, uint64_t signal, int sig_op, \
                                                           int pe) {                               \
        rshmemd_put_signal(dest, source, nelems * (BYTES), sig_addr, signal, nvshmemi_device_signal_op(sig_op), pe, SCOPE_CODE, 1); \
    }
#define NVSHMEMI_PUT_SIGNAL_SCOPED(PREFIX, TYPE, BYTES)                                            \
    NVSHMEMI_PUT_SIGNAL_SCOPED_IN(PREFIX, TYPE, BYTES, warp, RSHMEMD_SCOPE_WARP)                   \
    NVSHMEMI_PUT_SIGNAL_SCOPED_IN(PREFIX, TYPE, BYTES, block, RSHMEMD_SCOPE_BLOCK)
#define NVSHMEMI_PUT_SIGNAL_SCOPED_TYPED(NAME, TYPE, KIND) NVSHMEMI_PUT_SIGNAL_SCOPED(NAME##_put, TYPE, sizeof(TYPE))
#define NVSHMEMI_PUT_SIGNAL_SCOPED_SIZED(BITS, _a, _b) NVSHMEMI_PUT_SIGNAL_SCOPED(put##BITS, void, BITS / 8)
NVSHMEMI_PUT_SIGNAL_SCOPED(putmem, void, 1)
NVSHMEMI_RMA_TYPES(NVSHMEMI_PUT_SIGNAL_SCOPED_TYPED)
NVSHMEMI_HALF_TYPES(NVSHMEMI_PUT_SIGNAL_SCOPED_TYPED)
NVSHMEMI_SIZES(NVSHMEMI_PUT_SIGNAL_SCOPED_SIZED)
#undef NVSHMEMI_PUT_SIGNAL_SCOPED_TYPED
#undef NVSHMEMI_PUT_SIGNAL_SCOPED_SIZED
#undef NVSHMEMI_PUT_SIGNAL_SCOPED
#undef NVSHMEMI_PUT_SIGNAL_SCOPED_IN
#endif

NVSHMEMI_HD void nvshmemx_signal_op(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe) {
#ifdef __CUDA_ARCH__
    rshmemd_signal_op(sig_addr, signal, nvshmemi_device_signal_op(sig_op), pe);
#else
    if (sig_op == NVSHMEM_SIGNAL_ADD) {
        shmem_signal_add(sig_addr, signal, pe);
    } else if (sig_op == NVSHMEM_SIGNAL_SET) {
        shmem_signal_set(sig_addr, signal, pe);
    } else {
        /* libshmem names the bad operator and ends the run */
        shmem_putmem_signal(sig_addr, sig_addr, 0, sig_addr, signal, -1, pe);
    }
#endif
}
NVSHMEMI_HD uint64_t nvshmem_signal_fetch(const uint64_t *sig_addr) {
    return NVSHMEMI_PICK(rshmemd_signal_fetch(sig_addr), shmem_signal_fetch(sig_addr));
}
NVSHMEMI_HD uint64_t nvshmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value NVSHMEMI_CALLER) {
    return NVSHMEMI_PICK(NVSHMEMI_SIGNAL_WAIT(sig_addr, cmp, cmp_value),
                         shmem_signal_wait_until(sig_addr, nvshmemi_host_cmp(cmp), cmp_value));
}
static inline void nvshmemx_signal_op_on_stream(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                                cudaStream_t stream) {
    shmemx_signal_op_on_stream(sig_addr, signal, nvshmemi_host_signal_op(sig_op), pe, stream);
}
static inline void nvshmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp, uint64_t cmp_value,
                                                        cudaStream_t stream) {
    shmemx_signal_wait_until_on_stream(sig_addr, nvshmemi_host_cmp(cmp), cmp_value, stream);
}

/* ---- Waits and tests ------------------------------------------------------------------------- */

/* A wait passes the name of its caller (NVSHMEMI_CALLER_NAME); a test, which cannot hang, none. */
#define NVSHMEMI_WAIT_GROUP(TYPE, KIND, mode, wait, indices, values, caller)                       \
    nvshmemi_wait_group(ivars, sizeof(TYPE), NVSHMEMI_TYPE_CODE(TYPE, KIND), nelems, indices, status, cmp,  \
                        values ? 0 : nvshmemi_bits(&cmp_value, sizeof(TYPE)), values, mode, wait, caller)
#define NVSHMEMI_WAIT(NAME, TYPE, KIND)                                                            \
    NVSHMEMI_HD void nvshmem_##NAME##_wait_until(TYPE *ivar, int cmp, TYPE cmp_value NVSHMEMI_CALLER) { \
        NVSHMEMI_PICK(NVSHMEMI_WAIT_UNTIL(ivar, NVSHMEMI_TYPE_CODE(TYPE, KIND), cmp,               \
                                         nvshmemi_bits(&cmp_value, sizeof(TYPE))),                 \
                      shmem_##NAME##_wait_until(ivar, nvshmemi_host_cmp(cmp), cmp_value));         \
    }                                                                                              \
    NVSHMEMI_HD int nvshmem_##NAME##_test(TYPE *ivar, int cmp, TYPE cmp_value) {                   \
        return NVSHMEMI_PICK(rshmemd_test(ivar, NVSHMEMI_TYPE_CODE(TYPE, KIND), cmp,               \
                                          nvshmemi_bits(&cmp_value, sizeof(TYPE))),                \
                             shmem_##NAME##_test(ivar, nvshmemi_host_cmp(cmp), cmp_value));        \
    }                                                                                              \
    NVSHMEMI_HD void nvshmem_##NAME##_wait_until_all(TYPE *ivars, size_t nelems, const int *status, int cmp, \
                                                     TYPE cmp_value NVSHMEMI_CALLER) {                             \
        NVSHMEMI_PICK(NVSHMEMI_WAIT_GROUP(TYPE, KIND, 0, 1, NULL, (const TYPE *)NULL, NVSHMEMI_CALLER_NAME),             \
                      shmem_##NAME##_wait_until_all(ivars, nelems, status, nvshmemi_host_cmp(cmp), cmp_value)); \
    }                                                                                              \
    NVSHMEMI_HD size_t nvshmem_##NAME##_wait_until_any(TYPE *ivars, size_t nelems, const int *status, int cmp, \
                                                       TYPE cmp_value NVSHMEMI_CALLER) {                           \
        return NVSHMEMI_PICK(NVSHMEMI_WAIT_GROUP(TYPE, KIND, 1, 1, NULL, (const TYPE *)NULL, NVSHMEMI_CALLER_NAME),      \
                             shmem_##NAME##_wait_until_any(ivars, nelems, status, nvshmemi_host_cmp(cmp), \
                                                           cmp_value));                            \
    }                                                                                              \
    NVSHMEMI_HD size_t nvshmem_##NAME##_wait_until_some(TYPE *ivars, size_t nelems, size_t *indices,  \
                                                        const int *status, int cmp, TYPE cmp_value NVSHMEMI_CALLER) { \
        return NVSHMEMI_PICK(NVSHMEMI_WAIT_GROUP(TYPE, KIND, 2, 1, indices, (const TYPE *)NULL, NVSHMEMI_CALLER_NAME),   \
                             shmem_##NAME##_wait_until_some(ivars, nelems, indices, status,        \
                                                            nvshmemi_host_cmp(cmp), cmp_value));   \
    }                                                                                              \
    NVSHMEMI_HD int nvshmem_##NAME##_test_all(TYPE *ivars, size_t nelems, const int *status, int cmp, \
                                              TYPE cmp_value) {                                    \
        return NVSHMEMI_PICK((int)NVSHMEMI_WAIT_GROUP(TYPE, KIND, 0, 0, NULL, (const TYPE *)NULL, (const char *)0), \
                             shmem_##NAME##_test_all(ivars, nelems, status, nvshmemi_host_cmp(cmp), cmp_value)); \
    }                                                                                              \
    NVSHMEMI_HD size_t nvshmem_##NAME##_test_any(TYPE *ivars, size_t nelems, const int *status, int cmp, \
                                                 TYPE cmp_value) {                                 \
        return NVSHMEMI_PICK(NVSHMEMI_WAIT_GROUP(TYPE, KIND, 1, 0, NULL, (const TYPE *)NULL, (const char *)0),      \
                             shmem_##NAME##_test_any(ivars, nelems, status, nvshmemi_host_cmp(cmp), cmp_value)); \
    }                                                                                              \
    NVSHMEMI_HD size_t nvshmem_##NAME##_test_some(TYPE *ivars, size_t nelems, size_t *indices, const int *status, \
                                                  int cmp, TYPE cmp_value) {                       \
        return NVSHMEMI_PICK(NVSHMEMI_WAIT_GROUP(TYPE, KIND, 2, 0, indices, (const TYPE *)NULL, (const char *)0),   \
                             shmem_##NAME##_test_some(ivars, nelems, indices, status, nvshmemi_host_cmp(cmp), \
                                                      cmp_value));                                 \
    }                                                                                              \
    NVSHMEMI_WAIT_VECTOR(NAME, TYPE, KIND)
#define NVSHMEMI_WAIT_VECTOR(NAME, TYPE, KIND)                                                     \
    NVSHMEMI_HD void nvshmem_##NAME##_wait_until_all_vector(TYPE *ivars, size_t nelems, const int *status, \
                                                            int cmp, TYPE *cmp_values NVSHMEMI_CALLER) {           \
        TYPE cmp_value = 0;                                                                        \
        (void)cmp_value;                                                                           \
        NVSHMEMI_PICK(NVSHMEMI_WAIT_GROUP(TYPE, KIND, 0, 1, NULL, cmp_values, NVSHMEMI_CALLER_NAME),                     \
                      shmem_##NAME##_wait_until_all_vector(ivars, nelems, status, nvshmemi_host_cmp(cmp), \
                                                           cmp_values));                           \
    }                                                                                              \
    NVSHMEMI_HD size_t nvshmem_##NAME##_wait_until_any_vector(TYPE *ivars, size_t nelems, const int *status, \
                                                              int cmp, TYPE *cmp_values NVSHMEMI_CALLER) {         \
        TYPE cmp_value = 0;                                                                        \
        (void)cmp_value;                                                                           \
        return NVSHMEMI_PICK(NVSHMEMI_WAIT_GROUP(TYPE, KIND, 1, 1, NULL, cmp_values, NVSHMEMI_CALLER_NAME),              \
                             shmem_##NAME##_wait_until_any_vector(ivars, nelems, status, nvshmemi_host_cmp(cmp), \
                                                                  cmp_values));                    \
    }                                                                                              \
    NVSHMEMI_HD size_t nvshmem_##NAME##_wait_until_some_vector(TYPE *ivars, size_t nelems, size_t *indices, \
                                                               const int *status, int cmp, TYPE *cmp_values NVSHMEMI_CALLER) { \
        TYPE cmp_value = 0;                                                                        \
        (void)cmp_value;                                                                           \
        return NVSHMEMI_PICK(NVSHMEMI_WAIT_GROUP(TYPE, KIND, 2, 1, indices, cmp_values, NVSHMEMI_CALLER_NAME),           \
                             shmem_##NAME##_wait_until_some_vector(ivars, nelems, indices, status, \
                                                                   nvshmemi_host_cmp(cmp), cmp_values)); \
    }                                                                                              \
    NVSHMEMI_HD int nvshmem_##NAME##_test_all_vector(TYPE *ivars, size_t nelems, const int *status, int cmp, \
                                                     TYPE *cmp_values) {                           \
        TYPE cmp_value = 0;                                                                        \
        (void)cmp_value;                                                                           \
        return NVSHMEMI_PICK((int)NVSHMEMI_WAIT_GROUP(TYPE, KIND, 0, 0, NULL, cmp_values, (const char *)0),         \
                             shmem_##NAME##_test_all_vector(ivars, nelems, status, nvshmemi_host_cmp(cmp), \
                                                            cmp_values));                          \
    }                                                                                              \
    NVSHMEMI_HD size_t nvshmem_##NAME##_test_any_vector(TYPE *ivars, size_t nelems, const int *status, int cmp, \
                                                        TYPE *cmp_values) {                        \
        TYPE cmp_value = 0;                                                                        \
        (void)cmp_value;                                                                           \
        return NVSHMEMI_PICK(NVSHMEMI_WAIT_GROUP(TYPE, KIND, 1, 0, NULL, cmp_values, (const char *)0),              \
                             shmem_##NAME##_test_any_vector(ivars, nelems, status, nvshmemi_host_cmp(cmp), \
                                                            cmp_values));                          \
    }                                                                                              \
    NVSHMEMI_HD size_t nvshmem_##NAME##_test_some_vector(TYPE *ivars, size_t nelems, size_t *indices,  \
                                                         const int *status, int cmp, TYPE *cmp_values) { \
        TYPE cmp_value = 0;                                                                        \
        (void)cmp_value;                                                                           \
        return NVSHMEMI_PICK(NVSHMEMI_WAIT_GROUP(TYPE, KIND, 2, 0, indices, cmp_values, (const char *)0),           \
                             shmem_##NAME##_test_some_vector(ivars, nelems, indices, status,       \
                                                             nvshmemi_host_cmp(cmp), cmp_values)); \
    }
NVSHMEMI_WAIT_TYPES(NVSHMEMI_WAIT)
#undef NVSHMEMI_WAIT
#undef NVSHMEMI_WAIT_VECTOR
#undef NVSHMEMI_WAIT_GROUP

/* ---- Ordering -------------------------------------------------------------------------------- */

NVSHMEMI_HD void nvshmem_fence(void) { NVSHMEMI_PICK(rshmemd_fence(RSHMEMD_SCOPE_THREAD), shmem_fence()); }
NVSHMEMI_HD void nvshmem_quiet(void) { NVSHMEMI_PICK(rshmemd_quiet(RSHMEMD_SCOPE_THREAD), shmem_quiet()); }
static inline void nvshmemx_quiet_on_stream(cudaStream_t stream) { shmemx_quiet_on_stream(stream); }

#endif
