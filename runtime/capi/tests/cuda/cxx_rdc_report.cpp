// Host code of the -rdc=true program, compiled as plain C++ (no CUDA), calling the CUDA
// runtime as a .cpp file of an nvcc-built program does.
#include "cxx_rdc.h"

#include <sstream>
#include <stdexcept>

std::string report(int pe, int from, long long got, long long expected) {
    std::ostringstream line;
    line << "PE " << pe << ": weighted sum from PE " << from << (got == expected ? " is right" : " is WRONG");
    if (clamp_to(5, 1, 9) != 5) line << " (clamp_to is wrong on the host)";
    return line.str();
}

std::vector<int> copy_to_host(const int* device, size_t n) {
    std::vector<int> host(n);
    cudaError_t status = cudaMemcpy(host.data(), device, n * sizeof(int), cudaMemcpyDeviceToHost);
    if (status != cudaSuccess) throw std::runtime_error(cudaGetErrorString(status));
    return host;
}
