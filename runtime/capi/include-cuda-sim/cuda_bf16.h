/*
 * cuda_bf16.h for programs built by rshmem-nvcc for the simulator: `__nv_bfloat16`
 * (`nv_bfloat16`) and its conversions and arithmetic (rshmem/cuda_sim_half.h, shared with
 * cuda_fp16.h).
 */
#ifndef RSHMEM_SIM_CUDA_BF16_H
#define RSHMEM_SIM_CUDA_BF16_H
#include <rshmem/cuda_sim_half.h>
#endif
