/*
 * cuda.h for programs built by rshmem-nvcc for the simulator: the CUDA runtime (cuda_runtime.h)
 * and the part of the CUDA driver API that programs use beside NVSHMEM: devices, error names
 * and virtual-memory management (cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess
 * and their inverses), with CUDA's names and values. CUDA's names are static inline wrappers
 * over libshmem's __rsim_ functions (docs/cuda-sim-runtime.md, "The driver API").
 */
#ifndef RSHMEM_SIM_CUDA_H
#define RSHMEM_SIM_CUDA_H

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_NOT_SUPPORTED = 801
} CUresult;

typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;

typedef enum CUmemAllocationType_enum {
    CU_MEM_ALLOCATION_TYPE_INVALID = 0,
    CU_MEM_ALLOCATION_TYPE_PINNED = 1
} CUmemAllocationType;

typedef enum CUmemAllocationHandleType_enum {
    CU_MEM_HANDLE_TYPE_NONE = 0,
    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1,
    CU_MEM_HANDLE_TYPE_WIN32 = 2,
    CU_MEM_HANDLE_TYPE_WIN32_KMT = 4,
    CU_MEM_HANDLE_TYPE_FABRIC = 8
} CUmemAllocationHandleType;

typedef enum CUmemLocationType_enum {
    CU_MEM_LOCATION_TYPE_INVALID = 0,
    CU_MEM_LOCATION_TYPE_DEVICE = 1
} CUmemLocationType;

typedef enum CUmemAccess_flags_enum {
    CU_MEM_ACCESS_FLAGS_PROT_NONE = 0,
    CU_MEM_ACCESS_FLAGS_PROT_READ = 1,
    CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3
} CUmemAccess_flags;

typedef enum CUmemAllocationGranularity_flags_enum {
    CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0,
    CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1
} CUmemAllocationGranularity_flags;

typedef struct CUmemLocation_st {
    CUmemLocationType type;
    int id;
} CUmemLocation;

typedef struct CUmemAllocationProp_st {
    CUmemAllocationType type;
    CUmemAllocationHandleType requestedHandleTypes;
    CUmemLocation location;
    void *win32HandleMetaData;
    struct {
        unsigned char compressionType;
        unsigned char gpuDirectRDMACapable;
        unsigned short usage;
        unsigned char reserved[4];
    } allocFlags;
} CUmemAllocationProp;

typedef struct CUmemAccessDesc_st {
    CUmemLocation location;
    CUmemAccess_flags flags;
} CUmemAccessDesc;

int __rsim_cuInit(unsigned);
int __rsim_cuDeviceGetCount(int *);
int __rsim_cuDeviceGet(int *, int);
int __rsim_cuCtxGetDevice(int *);
int __rsim_cuGetErrorName(int, const char **);
int __rsim_cuGetErrorString(int, const char **);
int __rsim_cuMemGetAllocationGranularity(size_t *, const CUmemAllocationProp *, int);
int __rsim_cuMemCreate(unsigned long long *, size_t, const CUmemAllocationProp *, unsigned long long);
int __rsim_cuMemRelease(unsigned long long);
int __rsim_cuMemRetainAllocationHandle(unsigned long long *, void *);
int __rsim_cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *, unsigned long long);
int __rsim_cuMemAddressReserve(unsigned long long *, size_t, size_t, unsigned long long, unsigned long long);
int __rsim_cuMemAddressFree(unsigned long long, size_t);
int __rsim_cuMemMap(unsigned long long, size_t, size_t, unsigned long long, unsigned long long);
int __rsim_cuMemUnmap(unsigned long long, size_t);
int __rsim_cuMemSetAccess(unsigned long long, size_t, const CUmemAccessDesc *, size_t);

static inline CUresult cuInit(unsigned int flags) { return (CUresult)__rsim_cuInit(flags); }
static inline CUresult cuDeviceGetCount(int *count) { return (CUresult)__rsim_cuDeviceGetCount(count); }
static inline CUresult cuDeviceGet(CUdevice *device, int ordinal) { return (CUresult)__rsim_cuDeviceGet(device, ordinal); }
static inline CUresult cuCtxGetDevice(CUdevice *device) { return (CUresult)__rsim_cuCtxGetDevice(device); }
static inline CUresult cuGetErrorName(CUresult e, const char **name) { return (CUresult)__rsim_cuGetErrorName(e, name); }
static inline CUresult cuGetErrorString(CUresult e, const char **text) { return (CUresult)__rsim_cuGetErrorString(e, text); }
static inline CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                                     CUmemAllocationGranularity_flags option) {
    return (CUresult)__rsim_cuMemGetAllocationGranularity(granularity, prop, option);
}
static inline CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                                   unsigned long long flags) {
    return (CUresult)__rsim_cuMemCreate(handle, size, prop, flags);
}
static inline CUresult cuMemRelease(CUmemGenericAllocationHandle handle) { return (CUresult)__rsim_cuMemRelease(handle); }
static inline CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr) {
    return (CUresult)__rsim_cuMemRetainAllocationHandle(handle, addr);
}
static inline CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
                                                              CUmemGenericAllocationHandle handle) {
    return (CUresult)__rsim_cuMemGetAllocationPropertiesFromHandle(prop, handle);
}
static inline CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                           unsigned long long flags) {
    return (CUresult)__rsim_cuMemAddressReserve(ptr, size, alignment, addr, flags);
}
static inline CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) { return (CUresult)__rsim_cuMemAddressFree(ptr, size); }
static inline CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                                unsigned long long flags) {
    return (CUresult)__rsim_cuMemMap(ptr, size, offset, handle, flags);
}
static inline CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) { return (CUresult)__rsim_cuMemUnmap(ptr, size); }
static inline CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count) {
    return (CUresult)__rsim_cuMemSetAccess(ptr, size, desc, count);
}

#ifdef __cplusplus
}
#endif

#endif
