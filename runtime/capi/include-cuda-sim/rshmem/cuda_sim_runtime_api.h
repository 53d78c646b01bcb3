/*
 * The CUDA runtime API of programs built by rshmem-nvcc for the simulator and for processes:
 * CUDA's names as static inline wrappers over libshmem's __rsim_ functions, so libshmem
 * exports no CUDA name (docs/cuda-sim-runtime.md). Launches, copies and streams are
 * synchronous; every PE has one simulated GPU.
 */
#ifndef RSHMEM_CUDA_SIM_RUNTIME_API_H
#define RSHMEM_CUDA_SIM_RUNTIME_API_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <vector_types.h>

#ifdef __cplusplus
extern "C" {
#define RSIM_DEFAULT(x) = x
#else
#define RSIM_DEFAULT(x)
#endif

typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidSymbol = 13,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600
} cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};

/* CUDA's own name for the stream type, which shmemx.h also declares. */
typedef struct CUstream_st *cudaStream_t;
typedef struct rsim_event *cudaEvent_t;

int __rsim_cudaGetLastError(void);
int __rsim_cudaPeekAtLastError(void);
const char *__rsim_cudaGetErrorName(int);
const char *__rsim_cudaGetErrorString(int);
int __rsim_cudaGetDeviceCount(int *);
int __rsim_cudaSetDevice(int);
int __rsim_cudaGetDevice(int *);
const char *__rsim_device_name(void);
int64_t __rsim_device_attribute(int);
uint64_t __rsim_device_memory_bytes(void);
int __rsim_cudaDeviceSynchronize(void);
int __rsim_cudaDeviceReset(void);
int __rsim_cudaMalloc(void **, size_t);
int __rsim_cudaMallocHost(void **, size_t);
int __rsim_cudaFree(void *);
int __rsim_cudaMemcpy(void *, const void *, size_t, int);
int __rsim_cudaMemset(void *, int, size_t);
int __rsim_cudaMemcpyToSymbol(const void *, const void *, size_t, size_t);
int __rsim_cudaMemcpyFromSymbol(void *, const void *, size_t, size_t);
int __rsim_cudaGetSymbolAddress(void **, const void *);
int __rsim_cudaStreamCreate(void **);
int __rsim_cudaStreamDestroy(void *);
int __rsim_cudaStreamSynchronize(void *);
int __rsim_cudaEventCreate(void **);
int __rsim_cudaEventRecord(void *, void *);
int __rsim_cudaEventSynchronize(void *);
int __rsim_cudaEventElapsedTime(float *, void *, void *);
int __rsim_cudaEventDestroy(void *);

static inline cudaError_t cudaGetLastError(void) { return (cudaError_t)__rsim_cudaGetLastError(); }
static inline cudaError_t cudaPeekAtLastError(void) { return (cudaError_t)__rsim_cudaPeekAtLastError(); }
static inline const char *cudaGetErrorName(cudaError_t e) { return __rsim_cudaGetErrorName(e); }
static inline const char *cudaGetErrorString(cudaError_t e) { return __rsim_cudaGetErrorString(e); }
static inline cudaError_t cudaGetDeviceCount(int *n) { return (cudaError_t)__rsim_cudaGetDeviceCount(n); }
static inline cudaError_t cudaSetDevice(int d) { return (cudaError_t)__rsim_cudaSetDevice(d); }
static inline cudaError_t cudaGetDevice(int *d) { return (cudaError_t)__rsim_cudaGetDevice(d); }
static inline cudaError_t cudaDeviceSynchronize(void) { return (cudaError_t)__rsim_cudaDeviceSynchronize(); }
static inline cudaError_t cudaDeviceReset(void) { return (cudaError_t)__rsim_cudaDeviceReset(); }

/* cudaDeviceAttr: CUDA's numbers. */
enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxBlockDimX = 2,
    cudaDevAttrMaxBlockDimY = 3,
    cudaDevAttrMaxBlockDimZ = 4,
    cudaDevAttrMaxGridDimX = 5,
    cudaDevAttrMaxGridDimY = 6,
    cudaDevAttrMaxGridDimZ = 7,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrTotalConstantMemory = 9,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMaxRegistersPerBlock = 12,
    cudaDevAttrClockRate = 13,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    cudaDevAttrCooperativeLaunch = 95,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97
};

static inline cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device) {
    int64_t v = __rsim_device_attribute((int)attr);
    (void)device;
    if (!value || v < 0) return cudaErrorInvalidValue;
    *value = (int)v;
    return cudaSuccess;
}

struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    size_t totalConstMem;
    int major;
    int minor;
    int multiProcessorCount;
    int maxThreadsPerMultiProcessor;
    size_t sharedMemPerMultiprocessor;
    size_t sharedMemPerBlockOptin;
    int cooperativeLaunch;
};

static inline cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device) {
    const char *n = __rsim_device_name();
    size_t i = 0;
    (void)device;
    if (!p) return cudaErrorInvalidValue;
    for (; n[i] && i < sizeof p->name - 1; i++) p->name[i] = n[i];
    p->name[i] = 0;
    p->totalGlobalMem = __rsim_device_memory_bytes();
    p->sharedMemPerBlock = (size_t)__rsim_device_attribute(cudaDevAttrMaxSharedMemoryPerBlock);
    p->regsPerBlock = (int)__rsim_device_attribute(cudaDevAttrMaxRegistersPerBlock);
    p->warpSize = (int)__rsim_device_attribute(cudaDevAttrWarpSize);
    p->maxThreadsPerBlock = (int)__rsim_device_attribute(cudaDevAttrMaxThreadsPerBlock);
    for (i = 0; i < 3; i++) {
        p->maxThreadsDim[i] = (int)__rsim_device_attribute(cudaDevAttrMaxBlockDimX + (int)i);
        p->maxGridSize[i] = (int)__rsim_device_attribute(cudaDevAttrMaxGridDimX + (int)i);
    }
    p->clockRate = (int)__rsim_device_attribute(cudaDevAttrClockRate);
    p->totalConstMem = (size_t)__rsim_device_attribute(cudaDevAttrTotalConstantMemory);
    p->major = (int)__rsim_device_attribute(cudaDevAttrComputeCapabilityMajor);
    p->minor = (int)__rsim_device_attribute(cudaDevAttrComputeCapabilityMinor);
    p->multiProcessorCount = (int)__rsim_device_attribute(cudaDevAttrMultiProcessorCount);
    p->maxThreadsPerMultiProcessor = (int)__rsim_device_attribute(cudaDevAttrMaxThreadsPerMultiProcessor);
    p->sharedMemPerMultiprocessor = (size_t)__rsim_device_attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor);
    p->sharedMemPerBlockOptin = (size_t)__rsim_device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin);
    p->cooperativeLaunch = 1;
    return cudaSuccess;
}

static inline cudaError_t cudaMalloc(void **p, size_t n) { return (cudaError_t)__rsim_cudaMalloc(p, n); }
static inline cudaError_t cudaMallocHost(void **p, size_t n) { return (cudaError_t)__rsim_cudaMallocHost(p, n); }
static inline cudaError_t cudaHostAlloc(void **p, size_t n, unsigned flags) {
    (void)flags;
    return (cudaError_t)__rsim_cudaMallocHost(p, n);
}
static inline cudaError_t cudaFree(void *p) { return (cudaError_t)__rsim_cudaFree(p); }
static inline cudaError_t cudaFreeHost(void *p) { return (cudaError_t)__rsim_cudaFree(p); }
cudaError_t cudaMallocManaged(void **p, size_t n, unsigned flags RSIM_DEFAULT(1))
    __attribute__((unavailable("rshmem sim: managed memory is not emulated; use cudaMalloc and cudaMemcpy")));
static inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, enum cudaMemcpyKind k) {
    return (cudaError_t)__rsim_cudaMemcpy(d, s, n, (int)k);
}
static inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, enum cudaMemcpyKind k,
                                          cudaStream_t st RSIM_DEFAULT(0)) {
    int e = __rsim_cudaStreamSynchronize(st);
    return e ? (cudaError_t)e : (cudaError_t)__rsim_cudaMemcpy(d, s, n, (int)k);
}
static inline cudaError_t cudaMemset(void *d, int v, size_t n) { return (cudaError_t)__rsim_cudaMemset(d, v, n); }
static inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t st RSIM_DEFAULT(0)) {
    int e = __rsim_cudaStreamSynchronize(st);
    return e ? (cudaError_t)e : (cudaError_t)__rsim_cudaMemset(d, v, n);
}
static inline cudaError_t cudaMemcpyToSymbol(const void *sym, const void *s, size_t n, size_t off RSIM_DEFAULT(0),
                                             enum cudaMemcpyKind k RSIM_DEFAULT(cudaMemcpyHostToDevice)) {
    (void)k;
    return (cudaError_t)__rsim_cudaMemcpyToSymbol(sym, s, n, off);
}
static inline cudaError_t cudaMemcpyFromSymbol(void *d, const void *sym, size_t n, size_t off RSIM_DEFAULT(0),
                                               enum cudaMemcpyKind k RSIM_DEFAULT(cudaMemcpyDeviceToHost)) {
    (void)k;
    return (cudaError_t)__rsim_cudaMemcpyFromSymbol(d, sym, n, off);
}
static inline cudaError_t cudaGetSymbolAddress(void **p, const void *sym) {
    return (cudaError_t)__rsim_cudaGetSymbolAddress(p, sym);
}

/* Stream and event flags: every stream is synchronous and every event times on the emulator,
 * so they are accepted and change nothing. */
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
static inline cudaError_t cudaStreamCreate(cudaStream_t *s) { return (cudaError_t)__rsim_cudaStreamCreate((void **)s); }
static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags) {
    (void)flags;
    return (cudaError_t)__rsim_cudaStreamCreate((void **)s);
}
static inline cudaError_t cudaStreamDestroy(cudaStream_t s) { return (cudaError_t)__rsim_cudaStreamDestroy(s); }
static inline cudaError_t cudaStreamSynchronize(cudaStream_t s) { return (cudaError_t)__rsim_cudaStreamSynchronize(s); }
static inline cudaError_t cudaStreamQuery(cudaStream_t s) { return (cudaError_t)__rsim_cudaStreamSynchronize(s); }
static inline cudaError_t cudaEventCreate(cudaEvent_t *e) { return (cudaError_t)__rsim_cudaEventCreate((void **)e); }
static inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags) {
    (void)flags;
    return (cudaError_t)__rsim_cudaEventCreate((void **)e);
}
static inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s RSIM_DEFAULT(0)) {
    return (cudaError_t)__rsim_cudaEventRecord(e, s);
}
static inline cudaError_t cudaEventSynchronize(cudaEvent_t e) { return (cudaError_t)__rsim_cudaEventSynchronize(e); }
static inline cudaError_t cudaEventQuery(cudaEvent_t e) { return (cudaError_t)__rsim_cudaEventSynchronize(e); }
static inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
    return (cudaError_t)__rsim_cudaEventElapsedTime(ms, a, b);
}
static inline cudaError_t cudaEventDestroy(cudaEvent_t e) { return (cudaError_t)__rsim_cudaEventDestroy(e); }

/* A launch (clang lowers `k<<<g, b, shmem, stream>>>(args)` to a call of this). */
static inline cudaError_t cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shmem RSIM_DEFAULT(0),
                                           cudaStream_t s RSIM_DEFAULT(0)) {
    return (cudaError_t)__rsim_cudaLaunchKernel(f, (uint64_t)g.x | ((uint64_t)g.y << 32), g.z,
                                                (uint64_t)b.x | ((uint64_t)b.y << 32), b.z, args, shmem, s);
}

/* Every block is resident on the emulator, so a cooperative launch is an ordinary one. */
static inline cudaError_t cudaLaunchCooperativeKernel(const void *f, dim3 g, dim3 b, void **args,
                                                      size_t shmem RSIM_DEFAULT(0), cudaStream_t s RSIM_DEFAULT(0)) {
    return cudaLaunchKernel(f, g, b, args, shmem, s);
}

/* Occupancy: every block of a launch is resident on the emulator; this answers as a GPU with
 * 2048 threads per SM would, which is what programs size collective launches by. */
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, const void *f, int block_size,
                                                                        size_t shmem) {
    (void)f;
    (void)shmem;
    if (block_size <= 0 || block_size > 1024) return cudaErrorInvalidValue;
    *blocks = 2048 / block_size < 32 ? 2048 / block_size : 32;
    return cudaSuccess;
}

/* A kernel's attributes, as a GPU with the emulator's limits reports them. */
struct cudaFuncAttributes {
    size_t sharedSizeBytes;
    size_t constSizeBytes;
    size_t localSizeBytes;
    int maxThreadsPerBlock;
    int numRegs;
    int ptxVersion;
    int binaryVersion;
    int cacheModeCA;
    int maxDynamicSharedSizeBytes;
    int preferredShmemCarveout;
};
/* What cudaFuncSetAttribute sets (the CUDA runtime's numbers). */
enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};
/* The emulator gives every block the most dynamic shared memory (the launch checks the size it
 * asks for), so raising a kernel's limit up to that most is accepted and changes nothing. */
static inline cudaError_t cudaFuncSetAttribute(const void *f, enum cudaFuncAttribute attr, int value) {
    (void)f;
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize && (value < 0 || value > 227 * 1024))
        return cudaErrorInvalidValue;
    if (attr == cudaFuncAttributePreferredSharedMemoryCarveout && (value < -1 || value > 100))
        return cudaErrorInvalidValue;
    return cudaSuccess;
}
static inline cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *f) {
    (void)f;
    memset(attr, 0, sizeof *attr);
    attr->maxThreadsPerBlock = 1024;
    attr->numRegs = 32;
    attr->ptxVersion = 80;
    attr->binaryVersion = 80;
    attr->maxDynamicSharedSizeBytes = 227 * 1024;
    return cudaSuccess;
}

#ifdef __cplusplus
}
/* C++: typed pointers for the allocations, as CUDA's templates take them. */
template <class T>
static inline cudaError_t cudaMalloc(T **p, size_t n) {
    return cudaMalloc((void **)p, n);
}
template <class T>
static inline cudaError_t cudaMallocHost(T **p, size_t n) {
    return cudaMallocHost((void **)p, n);
}
/* C++: a symbol is passed as the variable itself, as CUDA's templates take it. */
template <class T>
static inline cudaError_t cudaMemcpyToSymbol(const T &sym, const void *s, size_t n, size_t off = 0,
                                             enum cudaMemcpyKind k = cudaMemcpyHostToDevice) {
    return cudaMemcpyToSymbol((const void *)&sym, s, n, off, k);
}
template <class T>
static inline cudaError_t cudaMemcpyFromSymbol(void *d, const T &sym, size_t n, size_t off = 0,
                                               enum cudaMemcpyKind k = cudaMemcpyDeviceToHost) {
    return cudaMemcpyFromSymbol(d, (const void *)&sym, n, off, k);
}
template <class T>
static inline cudaError_t cudaGetSymbolAddress(void **p, const T &sym) {
    return cudaGetSymbolAddress(p, (const void *)&sym);
}
/* C++: a kernel is passed as itself, as CUDA's templates take it. */
template <class T>
static inline cudaError_t cudaFuncSetAttribute(T *f, enum cudaFuncAttribute attr, int value) {
    return cudaFuncSetAttribute((const void *)f, attr, value);
}
template <class T>
static inline cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, T *f) {
    return cudaFuncGetAttributes(attr, (const void *)f);
}
#endif
#undef RSIM_DEFAULT
#endif
