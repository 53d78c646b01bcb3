//! A table of NVSHMEM 3.x's public names, each with one line of C that uses it the way a
//! program does, from which `tests/nvshmem.rs` writes a program and compiles it against
//! `nvshmem.h`. A failing line names the NVSHMEM name it stands for.
//!
//! Values that a program can observe (status codes, comparison and signal operators, team
//! numbers, init flags, struct sizes) are checked with static assertions against the numbers
//! of the NVSHMEM API documentation.

/// Where a name exists: in every compilation, or only in device code compiled for CUDA.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Host,
    Device,
}

/// One public name and a statement that uses it. In the statement, `sym` is a symmetric
/// `void *`, `sig` a `uint64_t *`, `pe` an `int`, `team` a `nvshmem_team_t` and `stream` a
/// `cudaStream_t`; `CHECK(condition)` is a static assertion.
pub struct Entry {
    pub name: &'static str,
    pub side: Side,
    pub statement: &'static str,
}

const fn host(name: &'static str, statement: &'static str) -> Entry {
    Entry {
        name,
        side: Side::Host,
        statement,
    }
}

const fn device(name: &'static str, statement: &'static str) -> Entry {
    Entry {
        name,
        side: Side::Device,
        statement,
    }
}

pub const TABLE: &[Entry] = &[
    // Status codes (nvshmemx_error.h) and their type.
    host("NVSHMEMX_SUCCESS", "CHECK(NVSHMEMX_SUCCESS == 0);"),
    host(
        "NVSHMEMX_ERROR_INVALID_VALUE",
        "CHECK(NVSHMEMX_ERROR_INVALID_VALUE == 1);",
    ),
    host(
        "NVSHMEMX_ERROR_OUT_OF_MEMORY",
        "CHECK(NVSHMEMX_ERROR_OUT_OF_MEMORY == 2);",
    ),
    host(
        "NVSHMEMX_ERROR_NOT_SUPPORTED",
        "CHECK(NVSHMEMX_ERROR_NOT_SUPPORTED == 3);",
    ),
    host(
        "NVSHMEMX_ERROR_SYMMETRY",
        "CHECK(NVSHMEMX_ERROR_SYMMETRY == 4);",
    ),
    host(
        "NVSHMEMX_ERROR_GPU_NOT_SELECTED",
        "CHECK(NVSHMEMX_ERROR_GPU_NOT_SELECTED == 5);",
    ),
    host(
        "NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED",
        "CHECK(NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED == 6);",
    ),
    host(
        "NVSHMEMX_ERROR_INTERNAL",
        "CHECK(NVSHMEMX_ERROR_INTERNAL == 7);",
    ),
    host(
        "nvshmemx_status_string",
        "printf(\"%s\\n\", nvshmemx_status_string(NVSHMEMX_ERROR_SYMMETRY));",
    ),
    host(
        "enum nvshmemx_status",
        "{ enum nvshmemx_status s = NVSHMEMX_SUCCESS; (void)s; }",
    ),
    // Comparisons, signal operators, thread levels, init status (nvshmem_constants.h).
    host("NVSHMEM_CMP_EQ", "CHECK(NVSHMEM_CMP_EQ == 0);"),
    host("NVSHMEM_CMP_NE", "CHECK(NVSHMEM_CMP_NE == 1);"),
    host("NVSHMEM_CMP_GT", "CHECK(NVSHMEM_CMP_GT == 2);"),
    host("NVSHMEM_CMP_LE", "CHECK(NVSHMEM_CMP_LE == 3);"),
    host("NVSHMEM_CMP_LT", "CHECK(NVSHMEM_CMP_LT == 4);"),
    host("NVSHMEM_CMP_GE", "CHECK(NVSHMEM_CMP_GE == 5);"),
    host(
        "nvshmemx_cmp_type_t",
        "{ nvshmemx_cmp_type_t c = NVSHMEM_CMP_GE; (void)c; }",
    ),
    host("NVSHMEM_SIGNAL_SET", "CHECK(NVSHMEM_SIGNAL_SET == 9);"),
    host("NVSHMEM_SIGNAL_ADD", "CHECK(NVSHMEM_SIGNAL_ADD == 10);"),
    host(
        "nvshmemx_signal_op_t",
        "{ nvshmemx_signal_op_t op = NVSHMEM_SIGNAL_ADD; (void)op; }",
    ),
    host(
        "NVSHMEM_THREAD_SINGLE",
        "CHECK(NVSHMEM_THREAD_SINGLE == 0);",
    ),
    host(
        "NVSHMEM_THREAD_FUNNELED",
        "CHECK(NVSHMEM_THREAD_FUNNELED == 1);",
    ),
    host(
        "NVSHMEM_THREAD_SERIALIZED",
        "CHECK(NVSHMEM_THREAD_SERIALIZED == 2);",
    ),
    host(
        "NVSHMEM_THREAD_MULTIPLE",
        "CHECK(NVSHMEM_THREAD_MULTIPLE == 3);",
    ),
    host(
        "nvshmemx_thread_support_t",
        "{ nvshmemx_thread_support_t t = NVSHMEM_THREAD_MULTIPLE; (void)t; }",
    ),
    host(
        "NVSHMEM_STATUS_NOT_INITIALIZED",
        "CHECK(NVSHMEM_STATUS_NOT_INITIALIZED == 0);",
    ),
    host(
        "NVSHMEM_STATUS_IS_BOOTSTRAPPED",
        "CHECK(NVSHMEM_STATUS_IS_BOOTSTRAPPED == 1);",
    ),
    host(
        "NVSHMEM_STATUS_IS_INITIALIZED",
        "CHECK(NVSHMEM_STATUS_IS_INITIALIZED == 2);",
    ),
    host(
        "NVSHMEM_STATUS_LIMITED_MPG",
        "CHECK(NVSHMEM_STATUS_LIMITED_MPG == 3);",
    ),
    host(
        "NVSHMEM_STATUS_FULL_MPG",
        "CHECK(NVSHMEM_STATUS_FULL_MPG == 4);",
    ),
    host(
        "nvshmemx_init_status_t",
        "{ nvshmemx_init_status_t s = NVSHMEM_STATUS_FULL_MPG; (void)s; }",
    ),
    host("NVSHMEM_PE_INVALID", "CHECK(NVSHMEM_PE_INVALID == -1);"),
    host("NVSHMEMX_PE_ANY", "CHECK(NVSHMEMX_PE_ANY == 1 << 15);"),
    host("NVSHMEMX_QP_DEFAULT", "CHECK(NVSHMEMX_QP_DEFAULT == 1);"),
    // Versions.
    host(
        "NVSHMEM_MAJOR_VERSION",
        "CHECK(NVSHMEM_MAJOR_VERSION == 1);",
    ),
    host(
        "NVSHMEM_MINOR_VERSION",
        "CHECK(NVSHMEM_MINOR_VERSION == 3);",
    ),
    host(
        "NVSHMEM_VENDOR_MAJOR_VERSION",
        "CHECK(NVSHMEM_VENDOR_MAJOR_VERSION == 3);",
    ),
    host(
        "NVSHMEM_VENDOR_MINOR_VERSION",
        "CHECK(NVSHMEM_VENDOR_MINOR_VERSION >= 0);",
    ),
    host(
        "NVSHMEM_VENDOR_PATCH_VERSION",
        "CHECK(NVSHMEM_VENDOR_PATCH_VERSION >= 0);",
    ),
    host(
        "NVSHMEM_VENDOR_VERSION",
        "CHECK(NVSHMEM_VENDOR_VERSION >= 30000);",
    ),
    host(
        "NVSHMEM_MAX_NAME_LEN",
        "CHECK(NVSHMEM_MAX_NAME_LEN == 256);",
    ),
    // Teams.
    host("NVSHMEM_TEAM_INVALID", "CHECK(NVSHMEM_TEAM_INVALID == -1);"),
    host("NVSHMEM_TEAM_WORLD", "CHECK(NVSHMEM_TEAM_WORLD == 0);"),
    host("NVSHMEM_TEAM_SHARED", "CHECK(NVSHMEM_TEAM_SHARED == 1);"),
    host("NVSHMEMX_TEAM_NODE", "CHECK(NVSHMEMX_TEAM_NODE == 2);"),
    host(
        "NVSHMEM_TEAM_WORLD_INDEX",
        "CHECK(NVSHMEM_TEAM_WORLD_INDEX == 0);",
    ),
    host(
        "NVSHMEM_TEAM_SHARED_INDEX",
        "CHECK(NVSHMEM_TEAM_SHARED_INDEX == 1);",
    ),
    host(
        "NVSHMEM_TEAM_NODE_INDEX",
        "CHECK(NVSHMEM_TEAM_NODE_INDEX == 2);",
    ),
    host("nvshmem_team_t", "CHECK(sizeof(nvshmem_team_t) == 4);"),
    host(
        "nvshmemx_team_t",
        "{ nvshmemx_team_t t = NVSHMEM_TEAM_WORLD; (void)t; }",
    ),
    host(
        "nvshmem_team_id_t",
        "{ nvshmem_team_id_t t = NVSHMEMX_TEAM_NODE; (void)t; }",
    ),
    host(
        "nvshmem_team_config_t",
        "CHECK(sizeof(nvshmem_team_config_t) == 64);",
    ),
    host(
        "NVSHMEM_TEAM_CONFIG_INITIALIZER",
        "{ nvshmem_team_config_t c = NVSHMEM_TEAM_CONFIG_INITIALIZER; c.num_contexts = 1; (void)c; }",
    ),
    host(
        "NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS",
        "CHECK(NVSHMEM_TEAM_CONFIG_MASK_NUM_CONTEXTS == 1);",
    ),
    host(
        "NVSHMEM_TEAM_CONFIG_MASK_UNIQUEID",
        "CHECK(NVSHMEM_TEAM_CONFIG_MASK_UNIQUEID == 2);",
    ),
    // Initialisation attributes.
    host(
        "NVSHMEMX_INIT_THREAD_PES",
        "CHECK(NVSHMEMX_INIT_THREAD_PES == 1);",
    ),
    host(
        "NVSHMEMX_INIT_WITH_MPI_COMM",
        "CHECK(NVSHMEMX_INIT_WITH_MPI_COMM == 2);",
    ),
    host(
        "NVSHMEMX_INIT_WITH_SHMEM",
        "CHECK(NVSHMEMX_INIT_WITH_SHMEM == 4);",
    ),
    host(
        "NVSHMEMX_INIT_WITH_UNIQUEID",
        "CHECK(NVSHMEMX_INIT_WITH_UNIQUEID == 8);",
    ),
    host(
        "nvshmemx_uniqueid_t",
        "CHECK(sizeof(nvshmemx_uniqueid_t) == 128);",
    ),
    host(
        "nvshmemx_uniqueid_args_t",
        "CHECK(sizeof(nvshmemx_uniqueid_args_t) == 24);",
    ),
    host(
        "nvshmemx_init_args_t",
        "CHECK(sizeof(nvshmemx_init_args_t) == 128);",
    ),
    host(
        "nvshmemx_init_attr_t",
        "CHECK(sizeof(nvshmemx_init_attr_t) == 144);",
    ),
    host(
        "NVSHMEMX_UNIQUEID_INITIALIZER",
        "{ nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER; nvshmemx_get_uniqueid(&id); }",
    ),
    host(
        "NVSHMEMX_INIT_ATTR_INITIALIZER",
        "{ nvshmemx_init_attr_t a = NVSHMEMX_INIT_ATTR_INITIALIZER; a.args.cuda_device_id = -1; (void)a; }",
    ),
    host(
        "nvshmemx_set_attr_uniqueid_args",
        "{ nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER; nvshmemx_init_attr_t a = NVSHMEMX_INIT_ATTR_INITIALIZER; nvshmemx_set_attr_uniqueid_args(pe, 2, &id, &a); }",
    ),
    host(
        "nvshmemx_set_attr_mpi_comm_args",
        "{ nvshmemx_init_attr_t a = NVSHMEMX_INIT_ATTR_INITIALIZER; nvshmemx_set_attr_mpi_comm_args(sym, &a); }",
    ),
    host(
        "nvshmemx_init_attr",
        "{ nvshmemx_init_attr_t a = NVSHMEMX_INIT_ATTR_INITIALIZER; if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, &a) != NVSHMEMX_SUCCESS) return; }",
    ),
    // What the headers bring in.
    host("assert", "assert(pe >= 0);"),
    host("printf", "printf(\"%d\\n\", pe);"),
    host("INT_MAX", "CHECK(INT_MAX > 0);"),
    host("uint64_t", "CHECK(sizeof(uint64_t) == 8);"),
    host("size_t", "CHECK(sizeof(size_t) == sizeof(void *));"),
    // The host API.
    host("nvshmem_init", "nvshmem_init();"),
    host(
        "nvshmem_init_thread",
        "{ int provided; nvshmem_init_thread(NVSHMEM_THREAD_MULTIPLE, &provided); }",
    ),
    host(
        "nvshmem_query_thread",
        "{ int level; nvshmem_query_thread(&level); }",
    ),
    host(
        "nvshmemx_init_status",
        "CHECK(sizeof(nvshmemx_init_status()) == sizeof(int));",
    ),
    host("nvshmem_my_pe", "pe = nvshmem_my_pe();"),
    host("nvshmem_n_pes", "pe = pe % nvshmem_n_pes();"),
    host("nvshmem_team_my_pe", "pe = nvshmem_team_my_pe(team);"),
    host("nvshmem_team_n_pes", "pe = pe % nvshmem_team_n_pes(team);"),
    host(
        "nvshmem_team_translate_pe",
        "pe = nvshmem_team_translate_pe(team, pe, NVSHMEM_TEAM_WORLD);",
    ),
    host(
        "nvshmem_team_split_strided",
        "{ nvshmem_team_t t; nvshmem_team_split_strided(team, 0, 1, 1, NULL, 0, &t); nvshmem_team_destroy(t); }",
    ),
    host(
        "nvshmem_team_split_2d",
        "{ nvshmem_team_t x, y; nvshmem_team_split_2d(team, 1, NULL, 0, &x, NULL, 0, &y); }",
    ),
    host("nvshmem_malloc", "sym = nvshmem_malloc(64);"),
    host(
        "nvshmem_calloc",
        "sig = (uint64_t *)nvshmem_calloc(1, sizeof(uint64_t));",
    ),
    host("nvshmem_align", "nvshmem_free(nvshmem_align(64, 64));"),
    host("nvshmem_ptr", "(void)nvshmem_ptr(sym, pe);"),
    host("nvshmem_putmem", "nvshmem_putmem(sym, sym, 8, pe);"),
    host("nvshmem_getmem_nbi", "nvshmem_getmem_nbi(sym, sym, 8, pe);"),
    host("nvshmem_int_p", "nvshmem_int_p((int *)sym, 1, pe);"),
    host(
        "nvshmem_double_g",
        "(void)nvshmem_double_g((double *)sym, pe);",
    ),
    host(
        "nvshmem_float_put",
        "nvshmem_float_put((float *)sym, (float *)sym, 2, pe);",
    ),
    host(
        "nvshmem_int64_iget",
        "nvshmem_int64_iget((int64_t *)sym, (int64_t *)sym, 1, 1, 2, pe);",
    ),
    host("nvshmem_put64_nbi", "nvshmem_put64_nbi(sym, sym, 1, pe);"),
    host("nvshmem_fence", "nvshmem_fence();"),
    host("nvshmem_quiet", "nvshmem_quiet();"),
    host("nvshmem_barrier_all", "nvshmem_barrier_all();"),
    host("nvshmem_barrier", "nvshmem_barrier(team);"),
    host("nvshmem_sync_all", "nvshmem_sync_all();"),
    host("nvshmem_team_sync", "nvshmem_team_sync(team);"),
    host(
        "nvshmem_int_atomic_fetch_add",
        "(void)nvshmem_int_atomic_fetch_add((int *)sym, 1, pe);",
    ),
    host(
        "nvshmem_uint64_atomic_compare_swap",
        "(void)nvshmem_uint64_atomic_compare_swap(sig, 0, 1, pe);",
    ),
    host(
        "nvshmem_putmem_signal",
        "nvshmem_putmem_signal(sym, sym, 8, sig, 1, NVSHMEM_SIGNAL_SET, pe);",
    ),
    host(
        "nvshmemx_signal_op",
        "nvshmemx_signal_op(sig, 1, NVSHMEM_SIGNAL_ADD, pe);",
    ),
    host("nvshmem_signal_fetch", "(void)nvshmem_signal_fetch(sig);"),
    host(
        "nvshmem_signal_wait_until",
        "(void)nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, 1);",
    ),
    host(
        "nvshmem_int_wait_until",
        "nvshmem_int_wait_until((int *)sym, NVSHMEM_CMP_NE, 0);",
    ),
    host(
        "nvshmem_long_test",
        "(void)nvshmem_long_test((long *)sym, NVSHMEM_CMP_EQ, 0);",
    ),
    host(
        "nvshmem_int_sum_reduce",
        "(void)nvshmem_int_sum_reduce(team, (int *)sym, (int *)sym, 1);",
    ),
    host(
        "nvshmem_float_broadcast",
        "(void)nvshmem_float_broadcast(team, (float *)sym, (float *)sym, 1, 0);",
    ),
    host(
        "nvshmem_int_fcollect",
        "(void)nvshmem_int_fcollect(team, (int *)sym, (int *)sym, 1);",
    ),
    host(
        "nvshmem_int_alltoall",
        "(void)nvshmem_int_alltoall(team, (int *)sym, (int *)sym, 1);",
    ),
    host(
        "nvshmem_info_get_version",
        "{ int major, minor; nvshmem_info_get_version(&major, &minor); }",
    ),
    host(
        "nvshmem_info_get_name",
        "{ char name[NVSHMEM_MAX_NAME_LEN]; nvshmem_info_get_name(name); }",
    ),
    host(
        "nvshmemx_vendor_get_version_info",
        "{ int a, b, c; nvshmemx_vendor_get_version_info(&a, &b, &c); }",
    ),
    // Stream-ordered host calls: cudaStream_t is an opaque pointer without the CUDA runtime.
    host("cudaStream_t", "stream = (cudaStream_t)0;"),
    host(
        "nvshmemx_putmem_on_stream",
        "nvshmemx_putmem_on_stream(sym, sym, 8, pe, stream);",
    ),
    host(
        "nvshmemx_getmem_on_stream",
        "nvshmemx_getmem_on_stream(sym, sym, 8, pe, stream);",
    ),
    host(
        "nvshmemx_putmem_signal_on_stream",
        "nvshmemx_putmem_signal_on_stream(sym, sym, 8, sig, 1, NVSHMEM_SIGNAL_SET, pe, stream);",
    ),
    host(
        "nvshmemx_signal_wait_until_on_stream",
        "nvshmemx_signal_wait_until_on_stream(sig, NVSHMEM_CMP_EQ, 1, stream);",
    ),
    host(
        "nvshmemx_quiet_on_stream",
        "nvshmemx_quiet_on_stream(stream);",
    ),
    host(
        "nvshmemx_barrier_all_on_stream",
        "nvshmemx_barrier_all_on_stream(stream);",
    ),
    host(
        "nvshmemx_sync_all_on_stream",
        "nvshmemx_sync_all_on_stream(stream);",
    ),
    host("nvshmem_free", "nvshmem_free(sym);"),
    host("nvshmem_finalize", "nvshmem_finalize();"),
    host("nvshmem_global_exit", "if (pe < 0) nvshmem_global_exit(1);"),
    // Device code only: absent from a host compilation, as in NVSHMEM.
    device(
        "nvshmemx_putmem_warp",
        "nvshmemx_putmem_warp(sym, sym, 8, pe);",
    ),
    device(
        "nvshmemx_getmem_block",
        "nvshmemx_getmem_block(sym, sym, 8, pe);",
    ),
    device(
        "nvshmemx_int_put_nbi_block",
        "nvshmemx_int_put_nbi_block((int *)sym, (int *)sym, 1, pe);",
    ),
    device(
        "nvshmemx_putmem_signal_warp",
        "nvshmemx_putmem_signal_warp(sym, sym, 8, sig, 1, NVSHMEM_SIGNAL_ADD, pe);",
    ),
    device(
        "nvshmemx_barrier_all_block",
        "nvshmemx_barrier_all_block();",
    ),
    device("nvshmemx_sync_all_warp", "nvshmemx_sync_all_warp();"),
    device(
        "nvshmemx_float_sum_reduce_block",
        "(void)nvshmemx_float_sum_reduce_block(team, (float *)sym, (float *)sym, 1);",
    ),
];
