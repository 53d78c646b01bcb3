//! The constants and types `shmem.h` and `shmemx.h` define, each value read from the Rust
//! item the library itself uses (thread levels in `state.rs`, handles in `handles.rs`, context
//! options in `ctx.rs`, comparisons in `cmp.rs`, signal operations in `signal.rs`, hints from
//! `rshmem::MallocHints`), so the header and the library cannot disagree.

use std::fmt::Write;

use rshmem::MallocHints;

use crate::handles::predefined;
use crate::thread_level;

/// The size, in elements, of the `pSync` and `pWrk` arrays of the deprecated active-set
/// collectives. The library never reads them (those collectives run on the runtime's teams),
/// so any size would do; this one is what programs commonly expect to be enough.
const SYNC_SIZE: u32 = 16;

/// One `#define` line.
fn define(out: &mut String, name: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "#define {name} {value}");
}

/// The constants of `shmem.h` that need no type of the header.
pub(crate) fn plain() -> String {
    let mut out = String::new();
    let (major, minor) = rshmem::info_get_version();
    define(&mut out, "SHMEM_MAJOR_VERSION", major);
    define(&mut out, "SHMEM_MINOR_VERSION", minor);
    define(&mut out, "SHMEM_MAX_NAME_LEN", crate::MAX_NAME_LEN);
    define(
        &mut out,
        "SHMEM_VENDOR_STRING",
        format!("\"{}\"", rshmem::info_get_name()),
    );
    out.push('\n');
    for (name, value) in [
        ("SINGLE", thread_level::SINGLE),
        ("FUNNELED", thread_level::FUNNELED),
        ("SERIALIZED", thread_level::SERIALIZED),
        ("MULTIPLE", thread_level::MULTIPLE),
    ] {
        define(&mut out, &format!("SHMEM_THREAD_{name}"), value);
    }
    out.push('\n');
    for (name, value) in crate::cmp::NAMES {
        define(&mut out, &format!("SHMEM_CMP_{name}"), value);
    }
    define(&mut out, "SHMEM_SIGNAL_SET", crate::signal::SIGNAL_SET);
    define(&mut out, "SHMEM_SIGNAL_ADD", crate::signal::SIGNAL_ADD);
    out.push('\n');
    define(
        &mut out,
        "SHMEM_CTX_SERIALIZED",
        format!("{}L", crate::ctx::CTX_SERIALIZED),
    );
    define(
        &mut out,
        "SHMEM_CTX_PRIVATE",
        format!("{}L", crate::ctx::CTX_PRIVATE),
    );
    define(
        &mut out,
        "SHMEM_CTX_NOSTORE",
        format!("{}L", crate::ctx::CTX_NOSTORE),
    );
    define(&mut out, "SHMEM_SESSION_BATCH", "1L");
    define(&mut out, "SHMEM_SESSION_TOTAL_OPS", "1L");
    define(
        &mut out,
        "SHMEM_TEAM_NUM_CONTEXTS",
        format!("{}L", crate::teams::TEAM_NUM_CONTEXTS),
    );
    for (name, hint) in [
        ("ATOMICS_REMOTE", MallocHints::ATOMICS_REMOTE),
        ("SIGNAL_REMOTE", MallocHints::SIGNAL_REMOTE),
    ] {
        define(
            &mut out,
            &format!("SHMEM_MALLOC_{name}"),
            format!("{}L", hint.bits()),
        );
    }
    out.push('\n');
    out.push_str("/* The deprecated active-set collectives' work arrays (never read). */\n");
    define(&mut out, "SHMEM_SYNC_VALUE", "0L");
    for name in [
        "SYNC_SIZE",
        "BARRIER_SYNC_SIZE",
        "BCAST_SYNC_SIZE",
        "COLLECT_SYNC_SIZE",
        "REDUCE_SYNC_SIZE",
        "ALLTOALL_SYNC_SIZE",
        "ALLTOALLS_SYNC_SIZE",
        "REDUCE_MIN_WRKDATA_SIZE",
    ] {
        define(&mut out, &format!("SHMEM_{name}"), SYNC_SIZE);
    }
    out.push('\n');
    out.push_str("/* Deprecated spellings (OpenSHMEM 1.3). */\n");
    for name in [
        "SYNC_VALUE",
        "BARRIER_SYNC_SIZE",
        "BCAST_SYNC_SIZE",
        "COLLECT_SYNC_SIZE",
        "REDUCE_SYNC_SIZE",
        "REDUCE_MIN_WRKDATA_SIZE",
        "MAJOR_VERSION",
        "MINOR_VERSION",
        "MAX_NAME_LEN",
        "VENDOR_STRING",
        "CMP_EQ",
        "CMP_NE",
        "CMP_GT",
        "CMP_LE",
        "CMP_LT",
        "CMP_GE",
    ] {
        define(&mut out, &format!("_SHMEM_{name}"), format!("SHMEM_{name}"));
    }
    out
}

/// The types of `shmem.h` and the handle constants, which need them.
pub(crate) fn types_and_handles() -> String {
    let mut out = String::from(
        "/* Handles are pointers to types never defined, so that a context and a team, or either\n \
         * and an element pointer, are told apart by _Generic and by C++ overloading. */\n\
         typedef struct rshmem_ctx *shmem_ctx_t;\n\
         typedef struct rshmem_team *shmem_team_t;\n\n\
         typedef struct {\n    int num_contexts;\n} shmem_team_config_t;\n\n\
         typedef struct {\n    size_t total_ops;\n} shmem_session_config_t;\n\n\
         /* The complex types of the reductions, spelled so that C++ (a GNU extension) reads them. */\n\
         #ifdef __cplusplus\n\
         typedef __complex__ double shmem_complexd_t;\n\
         typedef __complex__ float shmem_complexf_t;\n\
         #else\n\
         typedef double _Complex shmem_complexd_t;\n\
         typedef float _Complex shmem_complexf_t;\n\
         #endif\n\n",
    );
    let handle = |out: &mut String, name: &str, ty: &str, value: usize| {
        let value = if value == usize::MAX {
            "UINTPTR_MAX".to_owned()
        } else {
            value.to_string()
        };
        define(out, name, format!("(({ty}) {value})"));
    };
    handle(
        &mut out,
        "SHMEM_CTX_DEFAULT",
        "shmem_ctx_t",
        predefined::CTX_DEFAULT,
    );
    handle(
        &mut out,
        "SHMEM_CTX_INVALID",
        "shmem_ctx_t",
        predefined::CTX_INVALID,
    );
    handle(
        &mut out,
        "SHMEM_TEAM_INVALID",
        "shmem_team_t",
        predefined::TEAM_INVALID,
    );
    handle(
        &mut out,
        "SHMEM_TEAM_WORLD",
        "shmem_team_t",
        predefined::TEAM_WORLD,
    );
    handle(
        &mut out,
        "SHMEM_TEAM_SHARED",
        "shmem_team_t",
        predefined::TEAM_SHARED,
    );
    out
}

/// The constants of `shmemx.h`: rshmem's extensions.
pub(crate) fn extensions() -> String {
    let mut out = String::new();
    out.push_str("/* The team of the PEs of this node (every PE of a run here). */\n");
    define(
        &mut out,
        "SHMEMX_TEAM_NODE",
        format!("((shmem_team_t) {})", predefined::TEAM_NODE),
    );
    out.push_str("\n/* shmem_malloc_with_hints: the heap to allocate from. */\n");
    for (name, hint) in [
        ("HOST_HEAP", MallocHints::HOST_HEAP),
        ("DEVICE_HEAP", MallocHints::DEVICE_HEAP),
    ] {
        define(
            &mut out,
            &format!("SHMEMX_MALLOC_{name}"),
            format!("{}L", hint.bits()),
        );
    }
    out
}
