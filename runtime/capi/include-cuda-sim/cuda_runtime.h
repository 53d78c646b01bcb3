/*
 * cuda_runtime.h for programs built by rshmem-nvcc for the simulator (pre-included, as nvcc
 * does): the CUDA language (rshmem/cuda_sim_lang.h) and the CUDA runtime API, which libshmem
 * emulates (rshmem/cuda_sim_runtime_api.h).
 */
#ifndef RSHMEM_SIM_CUDA_RUNTIME_H
#define RSHMEM_SIM_CUDA_RUNTIME_H

#include <rshmem/cuda_sim_lang.h>

/* Host and device functions, as the ABI's declarations in cuda_sim_lang.h are. */
#pragma clang force_cuda_host_device begin
#include <rshmem/cuda_sim_runtime_api.h>
#pragma clang force_cuda_host_device end

#endif
