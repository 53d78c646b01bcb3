/* device_launch_parameters.h for programs built by rshmem-nvcc for the simulator: cuda_runtime.h has it all. */
#ifndef RSHMEM_SIM_DEVICE_LAUNCH_PARAMETERS_H
#define RSHMEM_SIM_DEVICE_LAUNCH_PARAMETERS_H
#include <cuda_runtime.h>
#endif
