// CUDA's virtual-memory driver API as applications use it: one allocation (cuMemCreate) mapped
// at two reserved addresses, written through one mapping by a kernel and read through the
// other with cudaMemcpy; then the misuse a program can make of it, each refused with the code
// CUDA returns, and the program goes on.
#include <nvshmem.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cu_check.h"

__global__ void fill(int* data, size_t n, int base) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) data[i] = base + int(i);
}

static std::string name(CUresult result) {
    const char* text = nullptr;
    return cuGetErrorName(result, &text) == CUDA_SUCCESS ? text : "unknown";
}

int main() {
    nvshmem_init();
    const int me = nvshmem_my_pe();
    CU_CHECK(cuInit(0));
    CUdevice device;
    CU_CHECK(cuCtxGetDevice(&device));

    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    size_t granularity = 0;
    CU_CHECK(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    const size_t size = 2 * granularity;

    CUmemGenericAllocationHandle handle;
    CU_CHECK(cuMemCreate(&handle, size, &prop, 0));
    CUdeviceptr first, second;
    CU_CHECK(cuMemAddressReserve(&first, size, 0, 0, 0));
    CU_CHECK(cuMemAddressReserve(&second, size, 0, 0, 0));
    CU_CHECK(cuMemMap(first, size, 0, handle, 0));
    CU_CHECK(cuMemMap(second, size, 0, handle, 0));
    CUmemAccessDesc access = {};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(cuMemSetAccess(first, size, &access, 1));
    CU_CHECK(cuMemSetAccess(second, size, &access, 1));

    const size_t n = size / sizeof(int);
    fill<<<4, 64>>>(reinterpret_cast<int*>(first), n, 1000 * me);
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<int> seen(n);
    CUDA_CHECK(cudaMemcpy(seen.data(), reinterpret_cast<void*>(second), size, cudaMemcpyDeviceToHost));
    bool aliased = true;
    for (size_t i = 0; i < n; ++i) aliased = aliased && seen[i] == 1000 * me + int(i);
    std::vector<int> back(n, 7);
    CUDA_CHECK(cudaMemcpy(reinterpret_cast<void*>(first), back.data(), size, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(seen.data(), reinterpret_cast<void*>(second), sizeof(int), cudaMemcpyDeviceToHost));
    aliased = aliased && seen[0] == 7;

    CUmemGenericAllocationHandle retained;
    CU_CHECK(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(second)));
    CUmemAllocationProp asked = {};
    CU_CHECK(cuMemGetAllocationPropertiesFromHandle(&asked, retained));
    const bool same = retained == handle && asked.location.id == device;
    CU_CHECK(cuMemRelease(retained));

    CUmemGenericAllocationHandle odd;
    CUresult odd_size = cuMemCreate(&odd, granularity + 4096, &prop, 0);
    CUresult over_mapped = cuMemMap(first, size, 0, handle, 0);
    CU_CHECK(cuMemUnmap(second, size));
    CUresult unmap_unmapped = cuMemUnmap(second, size);
    cudaError_t copy_unmapped = cudaMemcpy(seen.data(), reinterpret_cast<void*>(second), sizeof(int), cudaMemcpyDeviceToHost);
    CU_CHECK(cuMemRelease(handle));
    CUresult release_twice = cuMemRelease(handle);
    CUresult unknown = cuMemMap(second, size, 0, handle + 100, 0);
    // The first mapping still holds the released allocation.
    CUDA_CHECK(cudaMemcpy(seen.data(), reinterpret_cast<void*>(first), sizeof(int), cudaMemcpyDeviceToHost));
    const bool held = seen[0] == 7;
    CU_CHECK(cuMemUnmap(first, size));
    CU_CHECK(cuMemAddressFree(first, size));
    CU_CHECK(cuMemAddressFree(second, size));

    std::cout << "PE " << me << ": granularity " << granularity << ", mappings alias " << (aliased ? "yes" : "NO")
              << ", retained handle " << (same ? "same" : "DIFFERENT") << ", released allocation held by its mapping "
              << (held ? "yes" : "NO") << std::endl;
    std::cout << "PE " << me << ": odd size " << name(odd_size) << ", map over a mapping " << name(over_mapped)
              << ", unmap twice " << name(unmap_unmapped) << ", copy from an unmapped range "
              << (copy_unmapped == cudaErrorInvalidValue ? "refused" : "ALLOWED") << ", release twice "
              << name(release_twice) << ", unknown handle " << name(unknown) << std::endl;
    nvshmem_finalize();
    return 0;
}
