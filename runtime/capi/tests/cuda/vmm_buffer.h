// Buffers of CUDA's virtual-memory driver API, as programs that own their allocations make
// them for nvshmemx_buffer_register_symmetric: pinned memory of one device, exportable as a
// POSIX file descriptor (which the other PEs' processes need to map it) unless told otherwise,
// reserved, mapped and made readable and writable by that device.
#pragma once

#include "cu_check.h"

struct VmmBuffer {
    CUmemGenericAllocationHandle handle;
    CUdeviceptr addr;
    size_t size;
};

inline CUmemAllocationProp vmm_prop(int device, bool shareable = true) {
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    if (shareable) prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return prop;
}

inline VmmBuffer vmm_create(int device, size_t size, bool shareable = true) {
    const CUmemAllocationProp prop = vmm_prop(device, shareable);
    VmmBuffer b = {0, 0, size};
    CU_CHECK(cuMemCreate(&b.handle, size, &prop, 0));
    CU_CHECK(cuMemAddressReserve(&b.addr, size, 0, 0, 0));
    CU_CHECK(cuMemMap(b.addr, size, 0, b.handle, 0));
    CUmemAccessDesc access = {};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(cuMemSetAccess(b.addr, size, &access, 1));
    return b;
}

inline void vmm_destroy(const VmmBuffer& b) {
    CU_CHECK(cuMemUnmap(b.addr, b.size));
    CU_CHECK(cuMemAddressFree(b.addr, b.size));
    CU_CHECK(cuMemRelease(b.handle));
}
