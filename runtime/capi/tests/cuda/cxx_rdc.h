// What the three files of the -rdc=true program share: cxx_rdc_main.cu (kernels and main),
// cxx_rdc_weights.cu (device functions main's kernel calls) and cxx_rdc_report.cpp (host code
// compiled by the host compiler).
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

__host__ __device__ int clamp_to(int value, int low, int high);
extern __device__ int weight_of(int pe, unsigned index);

// The line PE `pe` prints about the weighted sum it received from PE `from`.
std::string report(int pe, int from, long long got, long long expected);
// What cudaMemcpy of n ints from the device gives, as a vector.
std::vector<int> copy_to_host(const int* device, size_t n);
