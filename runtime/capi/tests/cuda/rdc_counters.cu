// The histogram's device variables, defined in this file only; rdc_histogram.cu declares them
// `extern` and reads and writes them from its kernel and from the host.
#include "rdc_histogram.h"

__device__ unsigned long long histogram[kBuckets];
__device__ int out_of_range;
__constant__ int bucket_width;

__device__ void count_value(int value) {
    if (value >= kBuckets * bucket_width) {
        atomicAdd(&out_of_range, 1);
    } else {
        atomicAdd(&histogram[value / bucket_width], 1ULL);
    }
}
