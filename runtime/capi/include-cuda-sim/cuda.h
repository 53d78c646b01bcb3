/* cuda.h for programs built by rshmem-nvcc for the simulator: cuda_runtime.h has it all. */
#ifndef RSHMEM_SIM_CUDA_H
#define RSHMEM_SIM_CUDA_H
#include <cuda_runtime.h>
#endif
