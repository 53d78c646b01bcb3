// Checks of CUDA's driver and runtime calls for the programs of this directory that use the
// driver API: a failed call prints where and why, and ends the program with status 1.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdlib>
#include <iostream>

#define CU_CHECK(stmt)                                                                   \
    do {                                                                                 \
        CUresult result = (stmt);                                                        \
        if (result != CUDA_SUCCESS) {                                                    \
            const char* text = nullptr;                                                  \
            cuGetErrorString(result, &text);                                             \
            std::cerr << __FILE__ << ":" << __LINE__ << ": " << (text ? text : "?") << std::endl; \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

#define CUDA_CHECK(stmt)                                                                   \
    do {                                                                                   \
        cudaError_t result = (stmt);                                                       \
        if (result != cudaSuccess) {                                                       \
            std::cerr << __FILE__ << ":" << __LINE__ << ": " << cudaGetErrorString(result) << std::endl; \
            std::exit(1);                                                                  \
        }                                                                                  \
    } while (0)
