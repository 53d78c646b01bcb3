/*
 * NVSHMEM's remote memory access, for nvshmem.h: typed, sized and byte put/get/p/g/iput/iget,
 * their _nbi forms, the device's _warp and _block forms and the host's _on_stream forms.
 *
 * Every typed and sized function is a byte copy of `nelems * size` bytes through one of a few
 * helpers (nvshmemi_*), so the tables add names, not bodies. Device side: rshmemd_putmem /
 * rshmemd_getmem at the caller's scope; host side: libshmem's putmem/getmem, whose typed forms
 * do the same copy. Strided copies go element by element on the device and through libshmem's
 * sized iput/iget on the host.
 */
#ifndef RSHMEM_NVSHMEM_RMA_H
#define RSHMEM_NVSHMEM_RMA_H

/* ---- Helpers ------------------------------------------------------------------------------- */

NVSHMEMI_HD void nvshmemi_putmem(void *dest, const void *source, size_t bytes, int pe, int nbi) {
#ifdef __CUDA_ARCH__
    rshmemd_putmem(dest, source, bytes, pe, RSHMEMD_SCOPE_THREAD, nbi);
#else
    if (nbi) {
        shmem_putmem_nbi(dest, source, bytes, pe);
    } else {
        shmem_putmem(dest, source, bytes, pe);
    }
#endif
}
NVSHMEMI_HD void nvshmemi_getmem(void *dest, const void *source, size_t bytes, int pe, int nbi) {
#ifdef __CUDA_ARCH__
    rshmemd_getmem(dest, source, bytes, pe, RSHMEMD_SCOPE_THREAD, nbi);
#else
    if (nbi) {
        shmem_getmem_nbi(dest, source, bytes, pe);
    } else {
        shmem_getmem(dest, source, bytes, pe);
    }
#endif
}

/* Strided copies of `nelems` elements of `elem_bytes` (1, 2, 4, 8 or 16). */
NVSHMEMI_HD void nvshmemi_iput(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                               size_t elem_bytes, int pe) {
#ifdef __CUDA_ARCH__
    for (size_t i = 0; i < nelems; ++i) {
        rshmemd_putmem((char *)dest + (ptrdiff_t)i * dst * (ptrdiff_t)elem_bytes,
                       (const char *)source + (ptrdiff_t)i * sst * (ptrdiff_t)elem_bytes, elem_bytes, pe,
                       RSHMEMD_SCOPE_THREAD, 0);
    }
#else
    switch (elem_bytes) {
    case 1: shmem_iput8(dest, source, dst, sst, nelems, pe); break;
    case 2: shmem_iput16(dest, source, dst, sst, nelems, pe); break;
    case 4: shmem_iput32(dest, source, dst, sst, nelems, pe); break;
    case 8: shmem_iput64(dest, source, dst, sst, nelems, pe); break;
    default: shmem_iput128(dest, source, dst, sst, nelems, pe); break;
    }
#endif
}
NVSHMEMI_HD void nvshmemi_iget(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                               size_t elem_bytes, int pe) {
#ifdef __CUDA_ARCH__
    for (size_t i = 0; i < nelems; ++i) {
        rshmemd_getmem((char *)dest + (ptrdiff_t)i * dst * (ptrdiff_t)elem_bytes,
                       (const char *)source + (ptrdiff_t)i * sst * (ptrdiff_t)elem_bytes, elem_bytes, pe,
                       RSHMEMD_SCOPE_THREAD, 0);
    }
#else
    switch (elem_bytes) {
    case 1: shmem_iget8(dest, source, dst, sst, nelems, pe); break;
    case 2: shmem_iget16(dest, source, dst, sst, nelems, pe); break;
    case 4: shmem_iget32(dest, source, dst, sst, nelems, pe); break;
    case 8: shmem_iget64(dest, source, dst, sst, nelems, pe); break;
    default: shmem_iget128(dest, source, dst, sst, nelems, pe); break;
    }
#endif
}

/* ---- Bytes ----------------------------------------------------------------------------------- */

NVSHMEMI_HD void nvshmem_putmem(void *dest, const void *source, size_t bytes, int pe) {
    nvshmemi_putmem(dest, source, bytes, pe, 0);
}
NVSHMEMI_HD void nvshmem_getmem(void *dest, const void *source, size_t bytes, int pe) {
    nvshmemi_getmem(dest, source, bytes, pe, 0);
}
NVSHMEMI_HD void nvshmem_putmem_nbi(void *dest, const void *source, size_t bytes, int pe) {
    nvshmemi_putmem(dest, source, bytes, pe, 1);
}
NVSHMEMI_HD void nvshmem_getmem_nbi(void *dest, const void *source, size_t bytes, int pe) {
    nvshmemi_getmem(dest, source, bytes, pe, 1);
}

/* ---- Typed ----------------------------------------------------------------------------------- */

/* The copies of every type: put, get, their _nbi forms, iput and iget. */
#define NVSHMEMI_RMA_TYPED_COPIES(NAME, TYPE)                                                      \
    NVSHMEMI_HD void nvshmem_##NAME##_put(TYPE *dest, const TYPE *source, size_t nelems, int pe) {  \
        nvshmemi_putmem(dest, source, nelems * sizeof(TYPE), pe, 0);                               \
    }                                                                                              \
    NVSHMEMI_HD void nvshmem_##NAME##_get(TYPE *dest, const TYPE *source, size_t nelems, int pe) {  \
        nvshmemi_getmem(dest, source, nelems * sizeof(TYPE), pe, 0);                               \
    }                                                                                              \
    NVSHMEMI_HD void nvshmem_##NAME##_put_nbi(TYPE *dest, const TYPE *source, size_t nelems, int pe) { \
        nvshmemi_putmem(dest, source, nelems * sizeof(TYPE), pe, 1);                               \
    }                                                                                              \
    NVSHMEMI_HD void nvshmem_##NAME##_get_nbi(TYPE *dest, const TYPE *source, size_t nelems, int pe) { \
        nvshmemi_getmem(dest, source, nelems * sizeof(TYPE), pe, 1);                               \
    }                                                                                              \
    NVSHMEMI_HD void nvshmem_##NAME##_iput(TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst, \
                                           size_t nelems, int pe) {                                \
        nvshmemi_iput(dest, source, dst, sst, nelems, sizeof(TYPE), pe);                           \
    }                                                                                              \
    NVSHMEMI_HD void nvshmem_##NAME##_iget(TYPE *dest, const TYPE *source, ptrdiff_t dst, ptrdiff_t sst, \
                                           size_t nelems, int pe) {                                \
        nvshmemi_iget(dest, source, dst, sst, nelems, sizeof(TYPE), pe);                           \
    }
#define NVSHMEMI_RMA_TYPED(NAME, TYPE, KIND)                                                       \
    NVSHMEMI_RMA_TYPED_COPIES(NAME, TYPE)                                                          \
    NVSHMEMI_HD void nvshmem_##NAME##_p(TYPE *dest, const TYPE value, int pe) {                    \
        NVSHMEMI_PICK(rshmemd_p(dest, &value, NVSHMEMI_TYPE_CODE(TYPE, KIND), pe),                 \
                      shmem_##NAME##_p(dest, value, pe));                                          \
    }                                                                                              \
    NVSHMEMI_HD TYPE nvshmem_##NAME##_g(const TYPE *source, int pe) {                              \
        TYPE value;                                                                                \
        NVSHMEMI_PICK(rshmemd_g(&value, source, NVSHMEMI_TYPE_CODE(TYPE, KIND), pe),               \
                      value = shmem_##NAME##_g(source, pe));                                       \
        return value;                                                                              \
    }
/* half and bfloat16: libshmem has no such type, so p and g move the 16 bits as a uint16. */
#define NVSHMEMI_RMA_HALF_TYPED(NAME, TYPE, KIND)                                                  \
    NVSHMEMI_RMA_TYPED_COPIES(NAME, TYPE)                                                          \
    NVSHMEMI_HD void nvshmem_##NAME##_p(TYPE *dest, const TYPE value, int pe) {                    \
        uint16_t bits;                                                                             \
        memcpy(&bits, &value, sizeof bits);                                                        \
        NVSHMEMI_PICK(rshmemd_p(dest, &bits, RSHMEMD_TYPE(RSHMEMD_KIND_UNSIGNED, 2), pe),          \
                      shmem_uint16_p((uint16_t *)dest, bits, pe));                                 \
    }                                                                                              \
    NVSHMEMI_HD TYPE nvshmem_##NAME##_g(const TYPE *source, int pe) {                              \
        uint16_t bits;                                                                             \
        NVSHMEMI_PICK(rshmemd_g(&bits, source, RSHMEMD_TYPE(RSHMEMD_KIND_UNSIGNED, 2), pe),        \
                      bits = shmem_uint16_g((const uint16_t *)source, pe));                        \
        TYPE value;                                                                                \
        memcpy(&value, &bits, sizeof bits);                                                        \
        return value;                                                                              \
    }
NVSHMEMI_RMA_TYPES(NVSHMEMI_RMA_TYPED)
NVSHMEMI_HALF_TYPES(NVSHMEMI_RMA_HALF_TYPED)
#undef NVSHMEMI_RMA_TYPED
#undef NVSHMEMI_RMA_HALF_TYPED
#undef NVSHMEMI_RMA_TYPED_COPIES

/* ---- Sized ----------------------------------------------------------------------------------- */

#define NVSHMEMI_RMA_SIZED(BITS, _a, _b)                                                           \
    NVSHMEMI_HD void nvshmem_put##BITS(void *dest, const void *source, size_t nelems, int pe) {    \
        nvshmemi_putmem(dest, source, nelems * (BITS / 8), pe, 0);                                 \
    }                                                                                              \
    NVSHMEMI_HD void nvshmem_get##BITS(void *dest, const void *source, size_t nelems, int pe) {    \
        nvshmemi_getmem(dest, source, nelems * (BITS / 8), pe, 0);                                 \
    }                                                                                              \
    NVSHMEMI_HD void nvshmem_put##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe) { \
        nvshmemi_putmem(dest, source, nelems * (BITS / 8), pe, 1);                                 \
    }                                                                                              \
    NVSHMEMI_HD void nvshmem_get##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe) { \
        nvshmemi_getmem(dest, source, nelems * (BITS / 8), pe, 1);                                 \
    }                                                                                              \
    NVSHMEMI_HD void nvshmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                                       size_t nelems, int pe) {                                    \
        nvshmemi_iput(dest, source, dst, sst, nelems, BITS / 8, pe);                               \
    }                                                                                              \
    NVSHMEMI_HD void nvshmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, \
                                       size_t nelems, int pe) {                                    \
        nvshmemi_iget(dest, source, dst, sst, nelems, BITS / 8, pe);                               \
    }
NVSHMEMI_SIZES(NVSHMEMI_RMA_SIZED)
#undef NVSHMEMI_RMA_SIZED

/* ---- Device: _warp and _block ---------------------------------------------------------------- */

#ifdef __CUDACC__
/* One copy made by every thread of the warp or block, with the same arguments. */
#define NVSHMEMI_RMA_SCOPED_MEM(SCOPE, SCOPE_CODE)                                                 \
    NVSHMEMI_D void nvshmemx_putmem_##SCOPE(void *dest, const void *source, size_t bytes, int pe) { \
        rshmemd_putmem(dest, source, bytes, pe, SCOPE_CODE, 0);                                    \
    }                                                                                              \
    NVSHMEMI_D void nvshmemx_getmem_##SCOPE(void *dest, const void *source, size_t bytes, int pe) { \
        rshmemd_getmem(dest, source, bytes, pe, SCOPE_CODE, 0);                                    \
    }                                                                                              \
    NVSHMEMI_D void nvshmemx_putmem_nbi_##SCOPE(void *dest, const void *source, size_t bytes, int pe) { \
        rshmemd_putmem(dest, source, bytes, pe, SCOPE_CODE, 1);                                    \
    }                                                                                              \
    NVSHMEMI_D void nvshmemx_getmem_nbi_##SCOPE(void *dest, const void *source, size_t bytes, int pe) { \
        rshmemd_getmem(dest, source, bytes, pe, SCOPE_CODE, 1);                                    \
    }
NVSHMEMI_RMA_SCOPED_MEM(warp, RSHMEMD_SCOPE_WARP)
NVSHMEMI_RMA_SCOPED_MEM(block, RSHMEMD_SCOPE_BLOCK)
#undef NVSHMEMI_RMA_SCOPED_MEM

#define NVSHMEMI_RMA_SCOPED_TYPED_IN(NAME, TYPE, SCOPE, SCOPE_CODE)                                \
    NVSHMEMI_D void nvshmemx_##NAME##_put_##SCOPE(TYPE *dest, const TYPE *source, size_t nelems, int pe) { \
        rshmemd_putmem(dest, source, nelems * sizeof(TYPE), pe, SCOPE_CODE, 0);                    \
    }                                                                                              \
    NVSHMEMI_D void nvshmemx_##NAME##_get_##SCOPE(TYPE *dest, const TYPE *source, size_t nelems, int pe) { \
        rshmemd_getmem(dest, source, nelems * sizeof(TYPE), pe, SCOPE_CODE, 0);                    \
    }                                                                                              \
    NVSHMEMI_D void nvshmemx_##NAME##_put_nbi_##SCOPE(TYPE *dest, const TYPE *source, size_t nelems, int pe) { \
        rshmemd_putmem(dest, source, nelems * sizeof(TYPE), pe, SCOPE_CODE, 1);                    \
    }                                                                                              \
    NVSHMEMI_D void nvshmemx_##NAME##_get_nbi_##SCOPE(TYPE *dest, const TYPE *source, size_t nelems, int pe) { \
        rshmemd_getmem(dest, source, nelems * sizeof(TYPE), pe, SCOPE_CODE, 1);                    \
    }
#define NVSHMEMI_RMA_SCOPED_TYPED(NAME, TYPE, KIND)                                                \
    NVSHMEMI_RMA_SCOPED_TYPED_IN(NAME, TYPE, warp, RSHMEMD_SCOPE_WARP)                             \
    NVSHMEMI_RMA_SCOPED_TYPED_IN(NAME, TYPE, block, RSHMEMD_SCOPE_BLOCK)
NVSHMEMI_RMA_TYPES(NVSHMEMI_RMA_SCOPED_TYPED)
NVSHMEMI_HALF_TYPES(NVSHMEMI_RMA_SCOPED_TYPED)
#undef NVSHMEMI_RMA_SCOPED_TYPED

/* Sized: BITS / 8 bytes an element. */
#define NVSHMEMI_RMA_SCOPED_SIZED_IN(BITS, SCOPE, SCOPE_CODE)                                      \
    NVSHMEMI_D void nvshmemx_put##BITS##_##SCOPE(void *dest, const void *source, size_t nelems, int pe) { \
        rshmemd_putmem(dest, source, nelems * (BITS / 8), pe, SCOPE_CODE, 0);                      \
    }                                                                                              \
    NVSHMEMI_D void nvshmemx_get##BITS##_##SCOPE(void *dest, const void *source, size_t nelems, int pe) { \
        rshmemd_getmem(dest, source, nelems * (BITS / 8), pe, SCOPE_CODE, 0);                      \
    }                                                                                              \
    NVSHMEMI_D void nvshmemx_put##BITS##_nbi_##SCOPE(void *dest, const void *source, size_t nelems, int pe) { \
        rshmemd_putmem(dest, source, nelems * (BITS / 8), pe, SCOPE_CODE, 1);                      \
    }                                                                                              \
    NVSHMEMI_D void nvshmemx_get##BITS##_nbi_##SCOPE(void *dest, const void *source, size_t nelems, int pe) { \
        rshmemd_getmem(dest, source, nelems * (BITS / 8), pe, SCOPE_CODE, 1);                      \
    }
#define NVSHMEMI_RMA_SCOPED_SIZED(BITS, _a, _b)                                                    \
    NVSHMEMI_RMA_SCOPED_SIZED_IN(BITS, warp, RSHMEMD_SCOPE_WARP)                                   \
    NVSHMEMI_RMA_SCOPED_SIZED_IN(BITS, block, RSHMEMD_SCOPE_BLOCK)
NVSHMEMI_SIZES(NVSHMEMI_RMA_SCOPED_SIZED)
#undef NVSHMEMI_RMA_SCOPED_SIZED
#undef NVSHMEMI_RMA_SCOPED_SIZED_IN
#undef NVSHMEMI_RMA_SCOPED_TYPED_IN
#endif /* __CUDACC__ */

/* ---- Host: _on_stream -------------------------------------------------------------------------
 * Copies between symmetric objects run on the stream through libshmem's on-stream calls. */

static inline void nvshmemx_putmem_on_stream(void *dest, const void *source, size_t bytes, int pe,
                                             cudaStream_t stream) {
    shmemx_putmem_on_stream(dest, source, bytes, pe, stream);
}
static inline void nvshmemx_getmem_on_stream(void *dest, const void *source, size_t bytes, int pe,
                                             cudaStream_t stream) {
    shmemx_getmem_on_stream(dest, source, bytes, pe, stream);
}
/* Issued on the stream at once: the blocking forms are legal non-blocking ones. */
static inline void nvshmemx_putmem_nbi_on_stream(void *dest, const void *source, size_t bytes, int pe,
                                                 cudaStream_t stream) {
    shmemx_putmem_on_stream(dest, source, bytes, pe, stream);
}
static inline void nvshmemx_getmem_nbi_on_stream(void *dest, const void *source, size_t bytes, int pe,
                                                 cudaStream_t stream) {
    shmemx_getmem_on_stream(dest, source, bytes, pe, stream);
}

#define NVSHMEMI_RMA_ON_STREAM(PREFIX, TYPE, BYTES)                                                \
    static inline void nvshmemx_##PREFIX##_on_stream(TYPE *dest, const TYPE *source, size_t nelems, int pe, \
                                                     cudaStream_t stream) {                        \
        shmemx_putmem_on_stream(dest, source, nelems * (BYTES), pe, stream);                       \
    }
#define NVSHMEMI_RMA_GET_ON_STREAM(PREFIX, TYPE, BYTES)                                            \
    static inline void nvshmemx_##PREFIX##_on_stream(TYPE *dest, const TYPE *source, size_t nelems, int pe, \
                                                     cudaStream_t stream) {                        \
        shmemx_getmem_on_stream(dest, source, nelems * (BYTES), pe, stream);                       \
    }
#define NVSHMEMI_RMA_TYPED_ON_STREAM(NAME, TYPE, KIND)                                             \
    NVSHMEMI_RMA_ON_STREAM(NAME##_put, TYPE, sizeof(TYPE))                                         \
    NVSHMEMI_RMA_ON_STREAM(NAME##_put_nbi, TYPE, sizeof(TYPE))                                     \
    NVSHMEMI_RMA_GET_ON_STREAM(NAME##_get, TYPE, sizeof(TYPE))                                     \
    NVSHMEMI_RMA_GET_ON_STREAM(NAME##_get_nbi, TYPE, sizeof(TYPE))
NVSHMEMI_RMA_TYPES(NVSHMEMI_RMA_TYPED_ON_STREAM)
NVSHMEMI_HALF_TYPES(NVSHMEMI_RMA_TYPED_ON_STREAM)
#define NVSHMEMI_RMA_SIZED_ON_STREAM(BITS, _a, _b)                                                 \
    NVSHMEMI_RMA_ON_STREAM(put##BITS, void, BITS / 8)                                              \
    NVSHMEMI_RMA_ON_STREAM(put##BITS##_nbi, void, BITS / 8)                                        \
    NVSHMEMI_RMA_GET_ON_STREAM(get##BITS, void, BITS / 8)                                          \
    NVSHMEMI_RMA_GET_ON_STREAM(get##BITS##_nbi, void, BITS / 8)
NVSHMEMI_SIZES(NVSHMEMI_RMA_SIZED_ON_STREAM)
#undef NVSHMEMI_RMA_SIZED_ON_STREAM
#undef NVSHMEMI_RMA_TYPED_ON_STREAM
#undef NVSHMEMI_RMA_GET_ON_STREAM
#undef NVSHMEMI_RMA_ON_STREAM

#ifdef NVSHMEMI_HAVE_CUDART
/* One element: the value lives on the caller's stack, so the stream's work is waited for and
 * the element is put on the host, which returns when it may go. */
#define NVSHMEMI_P_ON_STREAM(NAME, TYPE, KIND)                                                     \
    static inline void nvshmemx_##NAME##_p_on_stream(TYPE *dest, const TYPE value, int pe, cudaStream_t stream) { \
        cudaStreamSynchronize(stream);                                                             \
        nvshmem_##NAME##_p(dest, value, pe);                                                       \
    }
NVSHMEMI_RMA_TYPES(NVSHMEMI_P_ON_STREAM)
NVSHMEMI_HALF_TYPES(NVSHMEMI_P_ON_STREAM)
#undef NVSHMEMI_P_ON_STREAM
#endif

#endif
