/* Declarations of the CUDA runtime API calls the corpus makes, for compile-only checks while
 * the simulator's runtime API header (rshmem/cuda_sim_runtime_api.h) is not in the tree. */
enum cudaMemcpyKind {
    cudaMemcpyHostToHost,
    cudaMemcpyHostToDevice,
    cudaMemcpyDeviceToHost,
    cudaMemcpyDeviceToDevice,
    cudaMemcpyDefault
};
extern "C" cudaError_t cudaMalloc(void **ptr, size_t bytes);
extern "C" cudaError_t cudaFree(void *ptr);
extern "C" cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind);
extern "C" cudaError_t cudaMemset(void *dst, int value, size_t bytes);
extern "C" cudaError_t cudaDeviceSynchronize(void);
template <class T>
cudaError_t cudaMemcpyToSymbol(const T &symbol, const void *src, size_t bytes, size_t offset = 0,
                               cudaMemcpyKind kind = cudaMemcpyHostToDevice);
template <class T>
cudaError_t cudaMemcpyFromSymbol(void *dst, const T &symbol, size_t bytes, size_t offset = 0,
                                 cudaMemcpyKind kind = cudaMemcpyDeviceToHost);
