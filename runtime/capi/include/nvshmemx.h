/*
 * NVSHMEM's extension header. nvshmem.h declares the whole API, the nvshmemx_ names included,
 * so that either header alone compiles a program (NVSHMEM's programs include both).
 */
#ifndef RSHMEM_NVSHMEMX_H
#define RSHMEM_NVSHMEMX_H
#include <nvshmem.h>
#endif
