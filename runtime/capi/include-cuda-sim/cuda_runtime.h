/*
 * cuda_runtime.h for programs built by rshmem-nvcc for the simulator (pre-included, as nvcc
 * does): the CUDA language (rshmem/cuda_sim_lang.h) and the CUDA runtime API, which libshmem
 * emulates (rshmem/cuda_sim_runtime_api.h).
 */
#ifndef RSHMEM_SIM_CUDA_RUNTIME_H
#define RSHMEM_SIM_CUDA_RUNTIME_H

#include <rshmem/cuda_sim_lang.h>

/* Host and device, like the emulator's ABI that cuda_sim_lang.h declares so: the runtime API
 * header redeclares ABI functions, and clang refuses a host-only redeclaration of a host and
 * device function. It defines cudaLaunchKernel, which clang's lowering of `<<<>>>` calls (it
 * looks the declaration up by name). */
#ifdef __CUDA__
#pragma clang force_cuda_host_device begin
#endif
#include <rshmem/cuda_sim_runtime_api.h>
#ifdef __CUDA__
#pragma clang force_cuda_host_device end
#endif

#endif
