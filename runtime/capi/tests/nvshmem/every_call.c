/*
 * Calls every function of nvshmem.h once, to be compiled (not run) by runtime/capi/tests/nvshmem.rs:
 * as CUDA by nvcc (host and device calls, this file included by every_call.cu) and as plain C
 * and C++ (host calls). The typed calls are generated from the header's own type tables, so a
 * type added there is called here too.
 */
#include <nvshmem.h>
#include <nvshmemx.h>

#ifdef __CUDACC__
#define EVERY_CALL_FN __host__ __device__
#else
#define EVERY_CALL_FN
#endif

/* The calls both sides make. */
static EVERY_CALL_FN void every_common_call(void *sym, uint64_t *sig, size_t *indices, const int *status) {
    int pe = nvshmem_my_pe() + nvshmem_n_pes() - 1;
    nvshmem_team_t team = NVSHMEM_TEAM_WORLD;
    pe += nvshmem_team_my_pe(team) + nvshmem_team_n_pes(NVSHMEM_TEAM_SHARED) +
          nvshmem_team_translate_pe(team, 0, NVSHMEMX_TEAM_NODE);
    (void)nvshmem_ptr(sym, pe);
    nvshmem_putmem(sym, sym, 8, pe);
    nvshmem_getmem(sym, sym, 8, pe);
    nvshmem_putmem_nbi(sym, sym, 8, pe);
    nvshmem_getmem_nbi(sym, sym, 8, pe);
#define RMA(NAME, TYPE, KIND)                                                                      \
    nvshmem_##NAME##_put((TYPE *)sym, (TYPE *)sym, 1, pe);                                         \
    nvshmem_##NAME##_get((TYPE *)sym, (TYPE *)sym, 1, pe);                                         \
    nvshmem_##NAME##_put_nbi((TYPE *)sym, (TYPE *)sym, 1, pe);                                     \
    nvshmem_##NAME##_get_nbi((TYPE *)sym, (TYPE *)sym, 1, pe);                                     \
    nvshmem_##NAME##_p((TYPE *)sym, nvshmem_##NAME##_g((TYPE *)sym, pe), pe);                      \
    nvshmem_##NAME##_iput((TYPE *)sym, (TYPE *)sym, 2, 2, 1, pe);                                  \
    nvshmem_##NAME##_iget((TYPE *)sym, (TYPE *)sym, 2, 2, 1, pe);                                  \
    nvshmem_##NAME##_put_signal((TYPE *)sym, (TYPE *)sym, 1, sig, 1, NVSHMEM_SIGNAL_SET, pe);      \
    nvshmem_##NAME##_put_signal_nbi((TYPE *)sym, (TYPE *)sym, 1, sig, 1, NVSHMEM_SIGNAL_ADD, pe);  \
    nvshmem_##NAME##_broadcast(team, (TYPE *)sym, (TYPE *)sym, 1, 0);                              \
    nvshmem_##NAME##_fcollect(team, (TYPE *)sym, (TYPE *)sym, 1);                                  \
    nvshmem_##NAME##_alltoall(team, (TYPE *)sym, (TYPE *)sym, 1);
    NVSHMEMI_RMA_TYPES(RMA)
#define SIZED(BITS, _a, _b)                                                                        \
    nvshmem_put##BITS(sym, sym, 1, pe);                                                            \
    nvshmem_get##BITS(sym, sym, 1, pe);                                                            \
    nvshmem_put##BITS##_nbi(sym, sym, 1, pe);                                                      \
    nvshmem_get##BITS##_nbi(sym, sym, 1, pe);                                                      \
    nvshmem_iput##BITS(sym, sym, 1, 1, 1, pe);                                                     \
    nvshmem_iget##BITS(sym, sym, 1, 1, 1, pe);                                                     \
    nvshmem_put##BITS##_signal(sym, sym, 1, sig, 1, NVSHMEM_SIGNAL_SET, pe);                       \
    nvshmem_put##BITS##_signal_nbi(sym, sym, 1, sig, 1, NVSHMEM_SIGNAL_SET, pe);
    NVSHMEMI_SIZES(SIZED)
#define EXTENDED(NAME, TYPE, KIND)                                                                 \
    nvshmem_##NAME##_atomic_set((TYPE *)sym, nvshmem_##NAME##_atomic_fetch((TYPE *)sym, pe), pe);  \
    (void)nvshmem_##NAME##_atomic_swap((TYPE *)sym, 1, pe);
    NVSHMEMI_AMO_EXTENDED_TYPES(EXTENDED)
#define STANDARD(NAME, TYPE, KIND)                                                                 \
    (void)nvshmem_##NAME##_atomic_compare_swap((TYPE *)sym, 0, 1, pe);                             \
    (void)nvshmem_##NAME##_atomic_fetch_inc((TYPE *)sym, pe);                                      \
    nvshmem_##NAME##_atomic_inc((TYPE *)sym, pe);                                                  \
    (void)nvshmem_##NAME##_atomic_fetch_add((TYPE *)sym, 1, pe);                                   \
    nvshmem_##NAME##_atomic_add((TYPE *)sym, 1, pe);
    NVSHMEMI_AMO_STANDARD_TYPES(STANDARD)
#define BITWISE(NAME, TYPE, KIND)                                                                  \
    (void)nvshmem_##NAME##_atomic_fetch_and((TYPE *)sym, 1, pe);                                   \
    nvshmem_##NAME##_atomic_and((TYPE *)sym, 1, pe);                                               \
    (void)nvshmem_##NAME##_atomic_fetch_or((TYPE *)sym, 1, pe);                                    \
    nvshmem_##NAME##_atomic_or((TYPE *)sym, 1, pe);                                                \
    (void)nvshmem_##NAME##_atomic_fetch_xor((TYPE *)sym, 1, pe);                                   \
    nvshmem_##NAME##_atomic_xor((TYPE *)sym, 1, pe);                                               \
    nvshmem_##NAME##_and_reduce(team, (TYPE *)sym, (TYPE *)sym, 1);
    NVSHMEMI_AMO_BITWISE_TYPES(BITWISE)
#define WAIT(NAME, TYPE, KIND)                                                                     \
    nvshmem_##NAME##_wait_until((TYPE *)sym, NVSHMEM_CMP_GE, 1);                                   \
    (void)nvshmem_##NAME##_test((TYPE *)sym, NVSHMEM_CMP_LT, 1);                                   \
    nvshmem_##NAME##_wait_until_all((TYPE *)sym, 2, status, NVSHMEM_CMP_EQ, 1);                    \
    (void)nvshmem_##NAME##_wait_until_any((TYPE *)sym, 2, status, NVSHMEM_CMP_NE, 1);              \
    (void)nvshmem_##NAME##_wait_until_some((TYPE *)sym, 2, indices, status, NVSHMEM_CMP_GT, 1);    \
    nvshmem_##NAME##_wait_until_all_vector((TYPE *)sym, 2, status, NVSHMEM_CMP_LE, (TYPE *)sym);   \
    (void)nvshmem_##NAME##_wait_until_any_vector((TYPE *)sym, 2, status, NVSHMEM_CMP_EQ, (TYPE *)sym); \
    (void)nvshmem_##NAME##_wait_until_some_vector((TYPE *)sym, 2, indices, status, NVSHMEM_CMP_EQ, (TYPE *)sym); \
    (void)nvshmem_##NAME##_test_all((TYPE *)sym, 2, status, NVSHMEM_CMP_EQ, 1);                    \
    (void)nvshmem_##NAME##_test_any((TYPE *)sym, 2, status, NVSHMEM_CMP_EQ, 1);                    \
    (void)nvshmem_##NAME##_test_some((TYPE *)sym, 2, indices, status, NVSHMEM_CMP_EQ, 1);          \
    (void)nvshmem_##NAME##_test_all_vector((TYPE *)sym, 2, status, NVSHMEM_CMP_EQ, (TYPE *)sym);   \
    (void)nvshmem_##NAME##_test_any_vector((TYPE *)sym, 2, status, NVSHMEM_CMP_EQ, (TYPE *)sym);   \
    (void)nvshmem_##NAME##_test_some_vector((TYPE *)sym, 2, indices, status, NVSHMEM_CMP_EQ, (TYPE *)sym);
    NVSHMEMI_WAIT_TYPES(WAIT)
#define ARITH(NAME, TYPE, KIND)                                                                    \
    nvshmem_##NAME##_sum_reduce(team, (TYPE *)sym, (TYPE *)sym, 1);                                \
    nvshmem_##NAME##_prod_reduce(team, (TYPE *)sym, (TYPE *)sym, 1);                               \
    nvshmem_##NAME##_min_reduce(team, (TYPE *)sym, (TYPE *)sym, 1);                                \
    nvshmem_##NAME##_max_reduce(team, (TYPE *)sym, (TYPE *)sym, 1);
    NVSHMEMI_REDUCE_ARITH_TYPES(ARITH)
    nvshmem_uchar_or_reduce(team, (unsigned char *)sym, (unsigned char *)sym, 1);
    nvshmem_size_xor_reduce(team, (size_t *)sym, (size_t *)sym, 1);
    nvshmem_broadcastmem(team, sym, sym, 8, 0);
    nvshmem_fcollectmem(team, sym, sym, 8);
    nvshmem_alltoallmem(team, sym, sym, 8);
    nvshmem_putmem_signal(sym, sym, 8, sig, 1, NVSHMEM_SIGNAL_SET, pe);
    nvshmem_putmem_signal_nbi(sym, sym, 8, sig, 1, NVSHMEM_SIGNAL_ADD, pe);
    nvshmemx_signal_op(sig, 1, NVSHMEM_SIGNAL_ADD, pe);
    (void)nvshmem_signal_fetch(sig);
    (void)nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, 1);
    nvshmem_fence();
    nvshmem_quiet();
    nvshmem_barrier(team);
    nvshmem_team_sync(team);
    nvshmem_sync_all();
    nvshmem_barrier_all();
}

/* The host's own calls: setup, teams, memory and the on-stream forms. */
static void every_host_call(void) {
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    nvshmemx_get_uniqueid(&id);
    nvshmemx_set_attr_uniqueid_args(0, 1, &id, &attr);
    if (nvshmemx_init_status() == NVSHMEM_STATUS_NOT_INITIALIZED) {
        (void)nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
    }
    int provided = 0, major = 0, minor = 0, patch = 0;
    char name[NVSHMEM_MAX_NAME_LEN];
    (void)nvshmem_init_thread(NVSHMEM_THREAD_SINGLE, &provided);
    nvshmem_query_thread(&provided);
    nvshmem_info_get_version(&major, &minor);
    nvshmem_info_get_name(name);
    nvshmemx_vendor_get_version_info(&major, &minor, &patch);
    nvshmem_team_t even = NVSHMEM_TEAM_INVALID, x = NVSHMEM_TEAM_INVALID, y = NVSHMEM_TEAM_INVALID;
    nvshmem_team_config_t config = NVSHMEM_TEAM_CONFIG_INITIALIZER;
    nvshmem_team_split_strided(NVSHMEM_TEAM_WORLD, 0, 2, 1, &config, 0, &even);
    nvshmem_team_split_2d(NVSHMEM_TEAM_WORLD, 1, NULL, 0, &x, NULL, 0, &y);
    nvshmem_team_destroy(even);
    void *sym = nvshmem_malloc(64);
    uint64_t *sig = (uint64_t *)nvshmem_calloc(1, sizeof(uint64_t));
    void *aligned = nvshmem_align(64, 64);
    size_t indices[2];
    int status[2] = {0, 0};
    every_common_call(sym, sig, indices, status);
    cudaStream_t stream = NULL;
    nvshmemx_putmem_on_stream(sym, sym, 8, 0, stream);
    nvshmemx_getmem_on_stream(sym, sym, 8, 0, stream);
    nvshmemx_putmem_nbi_on_stream(sym, sym, 8, 0, stream);
    nvshmemx_getmem_nbi_on_stream(sym, sym, 8, 0, stream);
    nvshmemx_int_put_on_stream((int *)sym, (int *)sym, 1, 0, stream);
    nvshmemx_double_get_nbi_on_stream((double *)sym, (double *)sym, 1, 0, stream);
    nvshmemx_put64_on_stream(sym, sym, 1, 0, stream);
    nvshmemx_putmem_signal_on_stream(sym, sym, 8, sig, 1, NVSHMEM_SIGNAL_SET, 0, stream);
    nvshmemx_long_put_signal_nbi_on_stream((long *)sym, (long *)sym, 1, sig, 1, NVSHMEM_SIGNAL_ADD, 0, stream);
    nvshmemx_signal_op_on_stream(sig, 1, NVSHMEM_SIGNAL_SET, 0, stream);
    nvshmemx_signal_wait_until_on_stream(sig, NVSHMEM_CMP_GE, 1, stream);
    nvshmemx_quiet_on_stream(stream);
    nvshmemx_barrier_all_on_stream(stream);
    nvshmemx_sync_all_on_stream(stream);
#ifdef NVSHMEMI_HAVE_CUDART
    nvshmemx_int_p_on_stream((int *)sym, 1, 0, stream);
    nvshmemx_barrier_on_stream(NVSHMEM_TEAM_WORLD, stream);
    nvshmemx_team_sync_on_stream(NVSHMEM_TEAM_WORLD, stream);
    nvshmemx_float_broadcast_on_stream(NVSHMEM_TEAM_WORLD, (float *)sym, (float *)sym, 1, 0, stream);
    nvshmemx_fcollectmem_on_stream(NVSHMEM_TEAM_WORLD, sym, sym, 8, stream);
    nvshmemx_int_alltoall_on_stream(NVSHMEM_TEAM_WORLD, (int *)sym, (int *)sym, 1, stream);
    nvshmemx_float_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, (float *)sym, (float *)sym, 1, stream);
#endif
    nvshmem_free(aligned);
    nvshmem_free(sig);
    nvshmem_free(sym);
}

#ifndef __CUDACC__
int main(void) {
    nvshmem_init();
    every_host_call();
    nvshmem_finalize();
    nvshmem_global_exit(0);
    return 0;
}
#endif
