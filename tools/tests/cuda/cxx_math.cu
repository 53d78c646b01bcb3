// CUDA's math API with the C++ standard library around it: min/max of mixed operand types as
// CUDA's overloads convert them, std:: math and std::abs(long) in a kernel, and intrinsics that
// give the same answers on the host and the device.
// expect: host 4294967295 7 2.5 5 9 0x33221144 17 3 -2
// expect: device 4294967295 7 2.5 5 9 0x33221144 17 3 -2
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

struct Results {
    unsigned long long mixed_unsigned;
    long mixed_long;
    double mixed_float;
    long abs_long;
    int clamped;
    unsigned permuted;
    unsigned funnel;
    int rounded_up;
    int high_product;
};

__host__ __device__ Results compute(int minus_one, unsigned zero, long seven, float two_and_half) {
    Results r;
    r.mixed_unsigned = max(minus_one, zero);  // -1 converts to unsigned, as CUDA's max(int, unsigned)
    r.mixed_long = min(100, seven);
    r.mixed_float = max(two_and_half, 1.0);
    r.abs_long = std::abs(seven - 12L);
    r.clamped = static_cast<int>(std::min(std::sqrt(81.0f), 10.0f));
    r.permuted = __byte_perm(0x11223344u, 0x55667788u, 0x1230);
    r.funnel = __funnelshift_l(0x10000000u, 1u, 4);
    r.rounded_up = __float2int_ru(2.1f);
    r.high_product = __mulhi(-(1 << 30), 8);
    return r;
}

__global__ void on_device(Results* out, int minus_one, unsigned zero, long seven, float two_and_half) {
    *out = compute(minus_one, zero, seven, two_and_half);
}

static void print(const char* side, const Results& r) {
    std::printf("%s %llu %ld %g %ld %d 0x%08x %u %d %d\n", side, r.mixed_unsigned, r.mixed_long, r.mixed_float,
                r.abs_long, r.clamped, r.permuted, r.funnel, r.rounded_up, r.high_product);
}

int main() {
    print("host", compute(-1, 0u, 7L, 2.5f));
    Results* device = nullptr;
    cudaMalloc(&device, sizeof(Results));
    on_device<<<1, 1>>>(device, -1, 0u, 7L, 2.5f);
    std::vector<Results> back(1);
    cudaMemcpy(back.data(), device, sizeof(Results), cudaMemcpyDeviceToHost);
    print("device", back[0]);
    cudaFree(device);
    return 0;
}
