//! The OpenSHMEM C API of rshmem: `libshmem.so` and `libshmem.a` for programs written
//! against `shmem.h` (docs/c-api.md).
//!
//! Design choices:
//!
//! - **A thin layer.** Every function turns its C arguments into a call of the Rust runtime
//!   (`rshmem`) on one process-global PE (`state.rs`); no operation is implemented twice.
//! - **Pointers are translated, then checked.** A C pointer becomes a symmetric address by
//!   the table of where this process maps each heap and its static data
//!   ([`rshmem::PeState::symmetric_addr`]); the runtime then checks PE, bounds and alignment
//!   as for Rust programs.
//! - **Misuse ends the job, loudly.** C cannot receive a typed error from most calls, so an
//!   error prints the call, the PE, the problem and the fix, and ends the process with
//!   status 1 (`fail.rs`); the launcher then ends the other PEs.
//! - **PEs are processes.** C programs run on the `hw::process` backend, one process per PE
//!   started by `oshrun`, or on GPUs (`hw::cuda`, `oshrun --gpu`), picked at `shmem_init`
//!   (`start.rs`); globals and statics of the program are symmetric on the process backend.
//!
//! Modules: `state.rs` the global PE and threads; `fail.rs` errors; `handles.rs` context and
//! team handles; `types.rs` the type table; `setup.rs` setup, queries and ordering;
//! `init_attr.rs` NVSHMEM's initialisation by an MPI communicator or a unique id;
//! `memory.rs` allocation; `teams.rs` teams; `ctx.rs` contexts; `rma.rs`, `rma_sized.rs` RMA;
//! `signal.rs` put-with-signal and signal words; `amo.rs` atomics; `cmp.rs` the `SHMEM_CMP_*`
//! values; `wait.rs` and `wait_exports.rs` waits and tests; `lock.rs` locks; `collectives.rs`
//! team collectives; `reductions.rs` reductions and scans (with `csrc/long_double.c`);
//! `active_set.rs` the deprecated active-set collectives; `stream.rs` the on-stream extensions
//! of `shmemx.h`; `header/` (tests only) the generator
//! of `shmem.h` and `shmemx.h` and the checks of the headers and of the library's symbols.

pub mod active_set;
pub mod amo;
pub mod cmp;
pub mod collectives;
pub mod ctx;
mod cuda_sim;
pub mod device_state;
pub mod device_teams;
mod fail;
pub mod handles;
#[cfg(test)]
mod header;
pub mod init_attr;
pub mod lock;
pub mod memory;
pub mod nvshmem_teams;
mod rank_status;
pub mod reductions;
pub mod registered;
pub mod rma;
pub mod rma_sized;
pub mod setup;
pub mod signal;
mod sim_host;
mod start;
mod state;
pub mod stream;
pub mod teams;
pub mod types;
pub mod wait;
pub mod wait_exports;

pub use state::thread_level;

/// `SHMEM_MAX_NAME_LEN`: the bytes `shmem_info_get_name` may write, NUL included.
pub const MAX_NAME_LEN: usize = 256;
