/*
 * What a program built by rshmem-nvcc for the simulator calls in libshmem: the CUDA runtime
 * and the CUDA language's built-ins, emulated on the CPU, each GPU thread a coroutine of its PE.
 *
 * Names are prefixed `__rsim_` so that libshmem never exports a CUDA runtime name: a program
 * built by nvcc links the real CUDA runtime beside libshmem. rshmem-nvcc renames the calls that
 * clang's CUDA host pass emits (cudaLaunchKernel, __cudaPushCallConfiguration,
 * __cudaPopCallConfiguration, __cudaRegisterFatBinary, __cudaRegisterFatBinaryEnd,
 * __cudaUnregisterFatBinary, __cudaRegisterFunction, __cudaRegisterVar) to the same names with
 * `__rsim_` in front; the CUDA runtime API of the sim's cuda_runtime.h calls the `__rsim_`
 * functions below.
 */
#ifndef RSHMEM_CUDA_SIM_ABI_H
#define RSHMEM_CUDA_SIM_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RSIM_ABI_VERSION 1

/* The ids of the GPU thread that runs now; the emulator points __rsim_cur at them before it
 * resumes a thread (a thread switches only inside a call, after which the compiler reloads). */
struct rsim_ids {
    unsigned thread_idx[3];
    unsigned block_idx[3];
    unsigned block_dim[3];
    unsigned grid_dim[3];
};
extern const struct rsim_ids *__rsim_cur;

/* The device module of one object file, registered from its constructor by the code that
 * rshmem-nvcc's device pass emits. A kernel's trampoline takes the launch's argument array
 * (args[i] points at argument i, as cudaLaunchKernel's) and calls the kernel. `__shared__`
 * variables live in the section `rsim_smem` of the object, from smem_start to smem_end; the
 * emulator swaps their bytes per block. */
struct rsim_kernel {
    const char *name; /* the kernel's device (mangled) name, as __cudaRegisterFunction names it */
    void (*trampoline)(void **args);
};
struct rsim_var {
    const char *name; /* a __device__ or __constant__ variable's device name */
    void *addr;
    uint64_t size;
};
struct rsim_module {
    uint32_t abi_version; /* RSIM_ABI_VERSION */
    const struct rsim_kernel *kernels;
    uint64_t n_kernels;
    const struct rsim_var *vars;
    uint64_t n_vars;
    char *smem_start;
    char *smem_end;
    /* The module's __shared__ variables, each with its device name, address (in rsim_smem,
     * between smem_start and smem_end) and size: a linked program has one rsim_smem section
     * for all its modules, and a report names a variable by this table. */
    const struct rsim_var *smem_vars;
    uint64_t n_smem_vars;
};
void __rsim_register_module(const struct rsim_module *module);

/* `extern __shared__` arrays are this buffer (rshmem-nvcc links each such name to it). */
extern char __rsim_dynsmem[];

/* The CUDA runtime's launch and registration ABI (clang's host pass), renamed. The dim3
 * arguments are passed as clang passes them for x86-64: {x, y} packed in a uint64_t, z. */
unsigned __rsim___cudaPushCallConfiguration(uint64_t grid_xy, unsigned grid_z, uint64_t block_xy, unsigned block_z,
                                           size_t shmem, void *stream);
int __rsim___cudaPopCallConfiguration(void *grid, void *block, size_t *shmem, void **stream);
int __rsim_cudaLaunchKernel(const void *stub, uint64_t grid_xy, unsigned grid_z, uint64_t block_xy,
                            unsigned block_z, void **args, size_t shmem, void *stream);
void **__rsim___cudaRegisterFatBinary(void *fatbin);
void __rsim___cudaRegisterFatBinaryEnd(void **handle);
void __rsim___cudaUnregisterFatBinary(void **handle);
void __rsim___cudaRegisterFunction(void **handle, const void *stub, char *device_fun, const char *device_name,
                                   int thread_limit, void *tid, void *bid, void *block_dim, void *grid_dim,
                                   int *warp_size);
void __rsim___cudaRegisterVar(void **handle, char *host_var, char *device_address, const char *device_name, int ext,
                              size_t size, int constant, int global);

/* Built-ins of device code. */
void __rsim_syncthreads(void);
int __rsim_syncthreads_count(int predicate);
int __rsim_syncthreads_and(int predicate);
int __rsim_syncthreads_or(int predicate);
void __rsim_syncwarp(unsigned mask);
/* kind: 0 idx, 1 up, 2 down, 3 xor; `value` holds 4 or 8 bytes in its low bytes. */
uint64_t __rsim_shfl(unsigned mask, uint64_t value, int lane_arg, int width, int kind);
unsigned __rsim_ballot(unsigned mask, int predicate);
unsigned __rsim_activemask(void);
/* A device atomic on this PE's memory (global or shared): op as RSHMEMD_AMO_*, type as
 * RSHMEMD_TYPE (rshmem/device_abi.h), plus RSIM_ATOMIC_MIN/MAX/DEC; returns the old bits. */
#define RSIM_ATOMIC_MIN 100
#define RSIM_ATOMIC_MAX 101
#define RSIM_ATOMIC_INC_WRAP 102 /* atomicInc: ((old >= value) ? 0 : old + 1) */
#define RSIM_ATOMIC_DEC_WRAP 103 /* atomicDec */
uint64_t __rsim_atomic(void *addr, int op, int type, uint64_t value, uint64_t compare);
/* scope: 0 block, 1 device, 2 system */
void __rsim_threadfence(int scope);
long long __rsim_clock64(void);
uint64_t __rsim_globaltimer(void);
void __rsim_nanosleep(unsigned ns);
/* Device printf: clang lowers it to vprintf(format, packed arguments). */
int __rsim_vprintf(const char *format, const void *packed_args);
/* __trap(), assert() failures and unsupported constructs met at run time: ends the run naming
 * the PE, block and thread. */
void __rsim_trap(const char *what, const char *file, int line);

#ifdef __cplusplus
}
#endif
#endif
