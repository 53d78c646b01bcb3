// Structs passed by value, a deduced template kernel and an explicit one in a namespace.
// expect: scaled 7.5 3, templated 15 42
#include <cstdio>

struct Params {
    float scale;
    int offset;
    char tag;
    double extra;
};

__global__ void apply(Params p, float *out, int *iout) {
    out[0] = p.scale * 2.5f + (float)p.extra;
    iout[0] = p.offset + p.tag;
}

template <typename T> __global__ void times(T *x, T factor) { x[threadIdx.x] *= factor; }

namespace ns {
template <int K> __global__ void set(int *x) { x[0] = K; }
}

int main() {
    float *f;
    int *i, *j;
    cudaMalloc((void **)&f, sizeof(float));
    cudaMalloc((void **)&i, sizeof(int));
    cudaMalloc((void **)&j, sizeof(int));
    Params p = {2.0f, 1, 2, 2.5};
    apply<<<1, 1>>>(p, f, i);
    float hf;
    int hi;
    cudaMemcpy(&hf, f, sizeof hf, cudaMemcpyDeviceToHost);
    cudaMemcpy(&hi, i, sizeof hi, cudaMemcpyDeviceToHost);
    printf("scaled %g %d, ", hf, hi);
    times<<<1, 1>>>(f, 2.0f);
    ns::set<42><<<1, 1>>>(j);
    int hj;
    cudaMemcpy(&hf, f, sizeof hf, cudaMemcpyDeviceToHost);
    cudaMemcpy(&hj, j, sizeof hj, cudaMemcpyDeviceToHost);
    printf("templated %g %d\n", hf, hj);
    return 0;
}
