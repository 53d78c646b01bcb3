// Device functions that another .cu file calls (built with -rdc=true, as nvcc's separate
// compilation): a weight per element, and a host-and-device helper both files use.
#include "cxx_rdc.h"

__host__ __device__ int clamp_to(int value, int low, int high) { return max(low, min(value, high)); }

__device__ int weight_of(int pe, unsigned index) {
    // a weight of 1 to 9, different for each PE and element
    return clamp_to(static_cast<int>((index * 7u + pe * 3u) % 11u), 1, 9);
}
