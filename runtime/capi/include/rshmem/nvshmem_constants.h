/*
 * NVSHMEM 3.x's public constants, status codes, enumerations and plain types, for nvshmem.h.
 *
 * Names and values are NVSHMEM's wherever a program can see the value: stored in files, compared,
 * passed to another library, or laid out in a struct it fills (the NVSHMEM API documentation,
 * "Library Constants" and "Initialization"). The structs keep NVSHMEM's sizes, which the static
 * assertions below check, so that code sizing or copying them compiles and behaves the same.
 */
#ifndef RSHMEM_NVSHMEM_CONSTANTS_H
#define RSHMEM_NVSHMEM_CONSTANTS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__cplusplus)
#define NVSHMEMI_STATIC_ASSERT(condition, message) static_assert(condition, message)
#else
#define NVSHMEMI_STATIC_ASSERT(condition, message) _Static_assert(condition, message)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Versions ------------------------------------------------------------------------------ */

/* The OpenSHMEM specification NVSHMEM follows, and the NVSHMEM release whose API this is. */
#define NVSHMEM_MAJOR_VERSION 1
#define NVSHMEM_MINOR_VERSION 3
#define NVSHMEM_VENDOR_MAJOR_VERSION 3
#define NVSHMEM_VENDOR_MINOR_VERSION 0
#define NVSHMEM_VENDOR_PATCH_VERSION 0
#define NVSHMEM_VENDOR_VERSION                                                                     \
    ((NVSHMEM_VENDOR_MAJOR_VERSION) * 10000 + (NVSHMEM_VENDOR_MINOR_VERSION) * 100 +               \
     (NVSHMEM_VENDOR_PATCH_VERSION))
#define NVSHMEM_MAX_NAME_LEN 256
#define NVSHMEM_VENDOR_STRING "rshmem (NVSHMEM 3.x source-compatible)"

/* ---- Status codes of the nvshmemx_ calls that return one ----------------------------------- */

enum nvshmemx_status {
    NVSHMEMX_SUCCESS = 0,
    NVSHMEMX_ERROR_INVALID_VALUE = 1,
    NVSHMEMX_ERROR_OUT_OF_MEMORY = 2,
    NVSHMEMX_ERROR_NOT_SUPPORTED = 3,
    NVSHMEMX_ERROR_SYMMETRY = 4,
    NVSHMEMX_ERROR_GPU_NOT_SELECTED = 5,
    NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED = 6,
    NVSHMEMX_ERROR_INTERNAL = 7,
    NVSHMEMX_ERROR_SENTINEL = INT_MAX
};

/* The status's name, for messages. */
static inline const char *nvshmemx_status_string(int status) {
    switch (status) {
    case NVSHMEMX_SUCCESS: return "NVSHMEMX_SUCCESS";
    case NVSHMEMX_ERROR_INVALID_VALUE: return "NVSHMEMX_ERROR_INVALID_VALUE";
    case NVSHMEMX_ERROR_OUT_OF_MEMORY: return "NVSHMEMX_ERROR_OUT_OF_MEMORY";
    case NVSHMEMX_ERROR_NOT_SUPPORTED: return "NVSHMEMX_ERROR_NOT_SUPPORTED";
    case NVSHMEMX_ERROR_SYMMETRY: return "NVSHMEMX_ERROR_SYMMETRY";
    case NVSHMEMX_ERROR_GPU_NOT_SELECTED: return "NVSHMEMX_ERROR_GPU_NOT_SELECTED";
    case NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED: return "NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED";
    case NVSHMEMX_ERROR_INTERNAL: return "NVSHMEMX_ERROR_INTERNAL";
    default: return "NVSHMEMX_ERROR_<unknown>";
    }
}

/* ---- Comparisons, signal operators, thread levels, init status ------------------------------ */

typedef enum nvshmemx_cmp_type {
    NVSHMEM_CMP_EQ = 0,
    NVSHMEM_CMP_NE = 1,
    NVSHMEM_CMP_GT = 2,
    NVSHMEM_CMP_LE = 3,
    NVSHMEM_CMP_LT = 4,
    NVSHMEM_CMP_GE = 5,
    NVSHMEM_CMP_SENTINEL = INT_MAX
} nvshmemx_cmp_type_t;

/* NVSHMEM's values, which are not the device primitives' (nvshmem_sync.h translates them). */
typedef enum {
    NVSHMEM_SIGNAL_SET = 9,
    NVSHMEM_SIGNAL_ADD = 10
} nvshmemx_signal_op_t;

typedef enum nvshmemx_thread_support {
    NVSHMEM_THREAD_SINGLE = 0,
    NVSHMEM_THREAD_FUNNELED = 1,
    NVSHMEM_THREAD_SERIALIZED = 2,
    NVSHMEM_THREAD_MULTIPLE = 3,
    NVSHMEM_THREAD_TYPE_SENTINEL = INT_MAX
} nvshmemx_thread_support_t;

/* What nvshmemx_init_status() returns. */
typedef enum {
    NVSHMEM_STATUS_NOT_INITIALIZED = 0,
    NVSHMEM_STATUS_IS_BOOTSTRAPPED = 1,
    NVSHMEM_STATUS_IS_INITIALIZED = 2,
    NVSHMEM_STATUS_LIMITED_MPG = 3,
    NVSHMEM_STATUS_FULL_MPG = 4,
    NVSHMEM_STATUS_INVALID = INT_MAX
} nvshmemx_init_status_t;

/* PE and queue-pair wildcards, of the calls that take a PE or a queue pair. */
typedef enum {
    NVSHMEM_PE_INVALID = -1,
    NVSHMEMX_PE_ANY = 1 << 15,
    NVSHMEMX_PE_ALL = 1 << 15
} nvshmem_pe_index_t;

typedef int nvshmemx_qp_handle_t;
typedef enum {
    NVSHMEMX_QP_HOST = 0,
    NVSHMEMX_QP_DEFAULT = 1,
    NVSHMEMX_QP_ANY = INT_MAX,
    NVSHMEMX_QP_ALL = INT_MAX
} nvshmemx_qp_handle_index_t;

/* ---- Teams ------------------------------------------------------------------------------------- */

/* A team is an int32 handle that libshmem maps to a shmem_team_t (nvshmem_teams.rs). The
 * predefined teams keep NVSHMEM's numbers; teams this library does not form are refused in
 * nvshmem_refused.h. */
typedef int32_t nvshmem_team_t;
typedef nvshmem_team_t nvshmemx_team_t;
typedef uint64_t nvshmemx_team_uniqueid_t;
typedef enum {
    NVSHMEM_TEAM_INVALID = -1,
    NVSHMEM_TEAM_WORLD = 0,
    NVSHMEM_TEAM_WORLD_INDEX = 0,
    NVSHMEM_TEAM_SHARED = 1,
    NVSHMEM_TEAM_SHARED_INDEX = 1,
    NVSHMEMX_TEAM_NODE = 2,
    NVSHMEM_TEAM_NODE_INDEX = 2,
    NVSHMEMX_TEAM_NODE_INDEX = 2
} nvshmem_team_id_t;

/* nvshmem_team_split_*'s configuration: NVSHMEM's 64-byte layout, version 2. */
typedef struct {
    int version;
    int num_contexts;
    nvshmemx_team_uniqueid_t uniqueid;
    char padding[48];
} nvshmem_team_config_t;
NVSHMEMI_STATIC_ASSERT(sizeof(nvshmem_team_config_t) == 64, "NVSHMEM's team configuration is 64 bytes");
#define NVSHMEM_TEAM_CONFIG_VERSION_2_IDENTIFIER ((2 << 16) + (int)sizeof(nvshmem_team_config_t))
#define NVSHMEM_TEAM_UNIQUID_INITIALIZER 0xFFFFFFFFFFFFFFFFULL
#define NVSHMEM_TEAM_CONFIG_INITIALIZER                                                            \
    {NVSHMEM_TEAM_CONFIG_VERSION_2_IDENTIFIER, -1, NVSHMEM_TEAM_UNIQUID_INITIALIZER, {0}}
/* config_mask bits: which fields of the configuration the caller set. */
#define NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS 0x1L
#define NVSHMEM_TEAM_CONFIG_MASK_UNIQUEID 0x2L
/* The OpenSHMEM spelling of the first bit, which NVSHMEM programs also use. */
#define NVSHMEM_TEAM_NUM_CONTEXTS NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS

/* ---- Initialisation attributes ----------------------------------------------------------------- */

/* nvshmemx_init_attr's flags. */
#define NVSHMEMX_INIT_THREAD_PES (1 << 0)
#define NVSHMEMX_INIT_WITH_MPI_COMM (1 << 1)
#define NVSHMEMX_INIT_WITH_SHMEM (1 << 2)
#define NVSHMEMX_INIT_WITH_UNIQUEID (1 << 3)
#define NVSHMEMX_INIT_MAX (1 << 31)

/* A struct's version word is its layout version in the upper half and its size in the lower. */
#define NVSHMEMI_LAYOUT_VERSION(layout, type) (((layout) << 16) + (int)sizeof(type))

typedef struct {
    int version;
    char internal[124];
} nvshmemx_uniqueid_t;
NVSHMEMI_STATIC_ASSERT(sizeof(nvshmemx_uniqueid_t) == 128, "NVSHMEM's unique id is 128 bytes");
#define NVSHMEMX_UNIQUEID_INITIALIZER {NVSHMEMI_LAYOUT_VERSION(1, nvshmemx_uniqueid_t), {0}}

typedef struct {
    int version;
    nvshmemx_uniqueid_t *id;
    int myrank;
    int nranks;
} nvshmemx_uniqueid_args_t;
#define NVSHMEMX_UNIQUEID_ARGS_INVALID (-1)
#define NVSHMEMX_UNIQUEID_ARGS_INITIALIZER                                                         \
    {NVSHMEMI_LAYOUT_VERSION(1, nvshmemx_uniqueid_args_t), NULL, NVSHMEMX_UNIQUEID_ARGS_INVALID,  \
     NVSHMEMX_UNIQUEID_ARGS_INVALID}

typedef struct {
    int version;
    nvshmemx_uniqueid_args_t uid_args;
    /* The GPU to use; -1: the one current when nvshmem_init runs. */
    int cuda_device_id;
    char content[92];
} nvshmemx_init_args_t;
NVSHMEMI_STATIC_ASSERT(sizeof(nvshmemx_init_args_t) == 128, "NVSHMEM's init arguments are 128 bytes");
#define NVSHMEM_INIT_ARGS_V2_IDENTIFIER NVSHMEMI_LAYOUT_VERSION(2, nvshmemx_init_args_t)
#define NVSHMEMX_INIT_ARGS_INITIALIZER                                                             \
    {NVSHMEM_INIT_ARGS_V2_IDENTIFIER, NVSHMEMX_UNIQUEID_ARGS_INITIALIZER, -1, {0}}

typedef struct {
    int version;
    /* A pointer to the program's MPI_Comm (NVSHMEMX_INIT_WITH_MPI_COMM). */
    void *mpi_comm;
    nvshmemx_init_args_t args;
} nvshmemx_init_attr_t;
NVSHMEMI_STATIC_ASSERT(sizeof(nvshmemx_init_attr_t) == 144, "NVSHMEM's init attributes are 144 bytes");
#define NVSHMEM_INIT_ATTR_V2_IDENTIFIER NVSHMEMI_LAYOUT_VERSION(2, nvshmemx_init_attr_t)
#define NVSHMEMX_INIT_ATTR_INITIALIZER {NVSHMEM_INIT_ATTR_V2_IDENTIFIER, NULL, NVSHMEMX_INIT_ARGS_INITIALIZER}

#ifdef __cplusplus
}
#endif

#endif
