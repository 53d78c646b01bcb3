/*
 * cuda_runtime.h for programs built by rshmem-nvcc for the simulator (pre-included, as nvcc
 * does): the CUDA language (rshmem/cuda_sim_lang.h) and the CUDA runtime API, which libshmem
 * emulates (rshmem/cuda_sim_runtime_api.h).
 */
#ifndef RSHMEM_SIM_CUDA_RUNTIME_H
#define RSHMEM_SIM_CUDA_RUNTIME_H

#include <rshmem/cuda_sim_lang.h>

#if __has_include(<rshmem/cuda_sim_runtime_api.h>)
#include <rshmem/cuda_sim_runtime_api.h>
#else
/* Without the runtime API header, the one declaration clang's lowering of `<<<>>>` needs. */
typedef int cudaError_t;
typedef struct CUstream_st *cudaStream_t;
#ifdef __cplusplus
extern "C"
#endif
cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
                                        cudaStream_t stream);
#endif

#endif
