// What the three files of the histogram program share: rdc_histogram.cu (the kernel and main),
// rdc_counters.cu (the device variables, defined once, and the device function that counts
// into them) and rdc_summary.cpp (host code compiled by the host compiler). Built with
// -rdc=true, as nvcc needs for a device variable that one file defines and others declare.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

constexpr int kBuckets = 16;

extern __device__ unsigned long long histogram[kBuckets];
extern __device__ int out_of_range;
extern __constant__ int bucket_width;

// Counts `value` into its bucket, or as out of range (rdc_counters.cu).
__device__ void count_value(int value);

// The i-th value PE `pe` draws: 0 .. kBuckets * width + 9, a few of them out of range.
__host__ __device__ inline int value_of(int pe, unsigned i, int width) {
    unsigned mixed = (i + 1u) * 2654435761u ^ static_cast<unsigned>(pe) * 40503u;
    return static_cast<int>(mixed % static_cast<unsigned>(kBuckets * width + 10));
}

// The line PE `pe` prints about the world's histogram (rdc_summary.cpp).
std::string summary(int pe, int n_pes, const std::vector<long long>& totals, int width, unsigned values_per_pe);
