//! The bootstrap of a job's processes: how the PEs of a multi-process run find each other.
//!
//! [`Bootstrap`] is what every launcher offers (rank, size, node identity, allgather, barrier,
//! global exit); [`from_env`] chooses one by `RSHMEM_BOOTSTRAP` (docs/launching.md) and opens
//! it: the socket of `rshmem run` below, PMIx (`pmix/`, `mpirun` and `srun --mpi=pmix`), or
//! the PMI-2 and PMI-1 wire protocols (`pmi/`, `srun --mpi=pmi2` and Hydra). The rest of this
//! module documents `rshmem run`'s own.
//!
//! When `rshmem run -n N PROGRAM` starts `N` processes, each must learn what the others created
//! before any put can run: the keys of their symmetric segments (CUDA IPC or fabric handles),
//! their GPU, their clock. Those keys are opaque bytes, so the bootstrap offers one collective,
//! [`BootstrapClient::allgather`]: every rank gives some bytes and gets every rank's bytes back
//! in rank order. This is what NVSHMEM's bootstrap plugins (PMI, MPI, UID) provide, narrowed to
//! one node and to what rshmem needs.
//!
//! The launcher runs a [`BootstrapServer`] on a Unix domain socket in a private directory and
//! passes each child its rank, the number of ranks and the socket path in [`RANK_VAR`],
//! [`N_RANKS_VAR`] and [`SOCKET_VAR`]; the child reads them with [`BootstrapEnv::from_env`]
//! and connects with [`BootstrapClient::connect`]. The server is a relay: each round it waits
//! for every rank's message and sends all of them to everyone.
//!
//! Failure is the case that matters: a rank that crashes or exits early must not leave the
//! others blocked forever. The server notices the closed connection (or its deadline passing)
//! and sends every waiting rank an error that names the ranks it waited for; every blocking call
//! also takes a deadline of its own. Errors are [`BootstrapError`], never panics.
//!
//! A rank may also end the whole job on purpose (`shmem_global_exit(status)`):
//! [`BootstrapClient::global_exit`] tells the server, which tells every other rank (their
//! bootstrap calls fail with [`BootstrapError::GlobalExit`]) and returns
//! [`ServeEnd::GlobalExit`] to the launcher, which ends every other process at once and exits
//! with that status. The hook is `serve`'s return value rather than a callback: the launcher
//! already watches the serving thread, and a server that has seen a global exit has nothing
//! left to serve.
//!
//! A test harness that runs its own binary as the ranks of a run starts them with
//! [`run_ranks`], a launcher in miniature.
//!
//! This module is process-to-process I/O, not shared-memory synchronisation, so it uses
//! `std::thread` and channels directly rather than the `sync` facade: loom and shuttle check the
//! host backend, not sockets.

mod client;
#[cfg(any(feature = "process", feature = "cuda"))]
mod hosts;
mod job;
mod listen;
#[cfg(any(feature = "process", feature = "cuda"))]
pub mod mpi;
#[cfg(any(feature = "process", feature = "cuda"))]
mod pmi;
#[cfg(any(feature = "process", feature = "cuda"))]
mod pmix;
mod ranks;
#[cfg(any(feature = "process", feature = "cuda"))]
mod select;
mod server;
#[cfg(any(feature = "process", feature = "cuda"))]
mod status;
#[cfg(any(feature = "process", feature = "cuda"))]
pub mod uid;
mod wire;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io;
use std::path::PathBuf;

pub use client::BootstrapClient;
pub use job::{Bootstrap, NodeIdentity};
#[cfg(any(feature = "process", feature = "cuda"))]
pub use pmix::PMIX_ABI;
pub use ranks::run_ranks;
#[cfg(any(feature = "process", feature = "cuda"))]
pub use select::{
    BOOTSTRAP_VAR, BootstrapKind, Choice, NVSHMEM_BOOTSTRAP_VAR, NVSHMEM_PMI_VAR, PMIX_VARS,
    choose, from_env, open,
};
pub use server::BootstrapServer;
#[cfg(any(feature = "process", feature = "cuda"))]
pub use status::{NAME_BYTES, RankActivity, RankStatus, StatusReader, status_path};
pub use wire::MAX_MESSAGE_BYTES;

/// How [`BootstrapServer::serve`] ended when nothing went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServeEnd {
    /// Every rank said goodbye or closed its connection outside a round.
    AllLeft,
    /// `rank` called [`BootstrapClient::global_exit`] with `status`: the job is over, every
    /// other rank was told, and the launcher should end their processes and exit with `status`.
    GlobalExit {
        /// The rank that ended the job.
        rank: u32,
        /// The status it passed to `shmem_global_exit`.
        status: i32,
    },
}

/// The environment variable with this process's rank, `0..n_ranks`.
pub const RANK_VAR: &str = "RSHMEM_RANK";
/// The environment variable with the number of ranks (processes) of the run.
pub const N_RANKS_VAR: &str = "RSHMEM_N_RANKS";
/// The environment variable with the path of the bootstrap server's Unix domain socket.
pub const SOCKET_VAR: &str = "RSHMEM_BOOTSTRAP_SOCKET";

/// What the launcher told this process: who it is and where the bootstrap server listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BootstrapEnv {
    /// This process's rank, `0..n_ranks`.
    pub rank: u32,
    /// How many processes the run has.
    pub n_ranks: u32,
    /// The bootstrap server's Unix domain socket.
    pub socket: PathBuf,
}

impl BootstrapEnv {
    /// Reads [`RANK_VAR`], [`N_RANKS_VAR`] and [`SOCKET_VAR`] from this process's
    /// environment.
    ///
    /// `Ok(None)` when none of them is set: the program was not started by `rshmem run -n`
    /// (another launcher's variables are [`choose`]'s business).
    ///
    /// # Errors
    /// [`BootstrapError::Env`], naming the variable, when only some are set, when a number
    /// does not parse, when the rank is not below the number of ranks, or when the socket path
    /// is empty.
    pub fn from_env() -> Result<Option<BootstrapEnv>, BootstrapError> {
        Self::from_vars(|name| std::env::var_os(name))
    }

    /// [`from_env`](Self::from_env) over any lookup of variables, such as the environment a
    /// launcher is about to give a child, or a test's map.
    ///
    /// # Errors
    /// As [`from_env`](Self::from_env).
    pub fn from_vars(
        mut lookup: impl FnMut(&str) -> Option<OsString>,
    ) -> Result<Option<BootstrapEnv>, BootstrapError> {
        let names = [RANK_VAR, N_RANKS_VAR, SOCKET_VAR];
        let values = names.map(&mut lookup);
        if values.iter().all(Option::is_none) {
            return Ok(None);
        }
        let missing: Vec<&str> = names
            .iter()
            .zip(&values)
            .filter(|(_, v)| v.is_none())
            .map(|(n, _)| *n)
            .collect();
        if !missing.is_empty() {
            let set: Vec<&str> = names
                .iter()
                .zip(&values)
                .filter(|(_, v)| v.is_some())
                .map(|(n, _)| *n)
                .collect();
            return Err(BootstrapError::Env(format!(
                "{} set but {} not: start the program with `rshmem run -n N PROGRAM`, or unset {} \
                 to run it as a single process",
                set.join(" and "),
                missing.join(" and "),
                set.join(" and "),
            )));
        }
        let [Some(rank), Some(n_ranks), Some(socket)] = values else {
            // Every value is present: `missing` was empty.
            return Err(BootstrapError::Env(
                "the rshmem launcher variables changed while read".to_string(),
            ));
        };
        let rank = parse_count(RANK_VAR, &rank)?;
        let n_ranks = parse_count(N_RANKS_VAR, &n_ranks)?;
        if n_ranks == 0 {
            return Err(BootstrapError::Env(format!(
                "{N_RANKS_VAR}=0: a run needs at least one rank; start the program with \
                 `rshmem run -n N PROGRAM`"
            )));
        }
        if rank >= n_ranks {
            return Err(BootstrapError::Env(format!(
                "{RANK_VAR}={rank} is not below {N_RANKS_VAR}={n_ranks}: ranks are 0..{n_ranks}; \
                 start the program with `rshmem run -n N PROGRAM`"
            )));
        }
        if socket.is_empty() {
            return Err(BootstrapError::Env(format!(
                "{SOCKET_VAR} is empty: it must be the path of the launcher's bootstrap \
                 socket; start the program with `rshmem run -n N PROGRAM`"
            )));
        }
        Ok(Some(BootstrapEnv {
            rank,
            n_ranks,
            socket: PathBuf::from(socket),
        }))
    }
}

fn parse_count(name: &str, value: &OsString) -> Result<u32, BootstrapError> {
    value
        .to_str()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .ok_or_else(|| {
            BootstrapError::Env(format!(
                "{name}={} is not a number from 0 to {}: the rshmem launcher sets it; start the \
                 program with `rshmem run -n N PROGRAM`",
                value.to_string_lossy(),
                u32::MAX
            ))
        })
}

/// Why the bootstrap failed. Each message names the problem and what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    /// The launcher's environment variables are partly set or malformed.
    #[error("bad rshmem launcher environment: {0}")]
    Env(String),
    /// An argument that can never work, such as zero ranks.
    #[error("bootstrap: {0}")]
    InvalidArgument(String),
    /// A socket operation failed.
    #[error("bootstrap: {what}: {source}")]
    Io {
        /// What was being done, with the socket path where it helps.
        what: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// A peer sent something the protocol does not allow (a bug, or a foreign program on the
    /// socket).
    #[error(
        "bootstrap protocol error: {0}; every rank must run the same program and call the same \
         collectives in the same order"
    )]
    Protocol(String),
    /// The server refused a rank's hello: a duplicate rank, a rank out of range, or a
    /// different number of ranks.
    #[error(
        "bootstrap refused rank {rank}: {reason}; each process needs its own rank and the job's number of ranks, as its launcher (or nvshmemx_set_attr_uniqueid_args) gives them"
    )]
    Rejected {
        /// The rank the hello claimed.
        rank: u32,
        /// Why it was refused.
        reason: String,
    },
    /// Ranks left (exited, crashed, closed the connection) while others waited for them in an
    /// allgather.
    #[error(
        "bootstrap: {} left while the others waited for {} in an allgather; see {} output for \
         why it stopped",
        ranks(waited_for),
        them(waited_for),
        their(waited_for)
    )]
    PeerLost {
        /// The ranks that left.
        waited_for: Vec<u32>,
    },
    /// The deadline passed while waiting. `waited_for` names the ranks that had not connected
    /// or not joined the round; it is empty when a client's own deadline passed first and the
    /// server had not said.
    #[error(
        "bootstrap: the deadline passed while waiting for {}",
        deadline_subject(waited_for)
    )]
    Deadline {
        /// The ranks waited for (empty: not known to this process).
        waited_for: Vec<u32>,
    },
    /// The deadline passed while every rank still running had connected and none was in a
    /// bootstrap exchange: the ranks were running the program, past start-up, and something
    /// in it (a wait that nothing satisfies, most often) did not end. Only the launcher's
    /// server reports it.
    #[error(
        "the deadline passed while {} ran the program, past start-up: the last bootstrap \
         exchange ended {since_s:.1} s before and none of them was in one, so the program itself \
         did not finish (a wait that nothing satisfies, most often); set RSHMEM_WAIT_TIMEOUT_MS \
         below the launcher's timeout to have the PE that waits name its wait",
        ranks(running)
    )]
    ProgramRan {
        /// The ranks connected and not yet gone.
        running: Vec<u32>,
        /// Seconds since the last bootstrap exchange ended.
        since_s: f64,
    },
    /// Another rank ended the job with `shmem_global_exit(status)`; this rank should exit too
    /// (the launcher is about to end it anyway).
    #[error(
        "rank {rank} called shmem_global_exit({status}), which ends every rank of the job; exit \
         this process too"
    )]
    GlobalExit {
        /// The rank that called it.
        rank: u32,
        /// The status it passed.
        status: i32,
    },
    /// The launcher's PMI or PMIx refused a call, or its library cannot be loaded.
    #[error("bootstrap {bootstrap}: {what}")]
    Launcher {
        /// The bootstrap (`pmix`, `pmi2`, `pmi1`).
        bootstrap: &'static str,
        /// What failed, and what to do about it.
        what: String,
    },
    /// A message larger than [`MAX_MESSAGE_BYTES`].
    #[error(
        "bootstrap: a message of {len_bytes} bytes is over the limit of {max_bytes} bytes; \
         exchange keys and addresses through the bootstrap, not data"
    )]
    TooLarge {
        /// The size of the message.
        len_bytes: u64,
        /// The limit, [`MAX_MESSAGE_BYTES`].
        max_bytes: u64,
    },
}

impl BootstrapError {
    /// [`BootstrapError::TooLarge`] for an allgather message over [`MAX_MESSAGE_BYTES`], which
    /// every bootstrap refuses before sending.
    pub(crate) fn check_len(message: &[u8]) -> Result<(), BootstrapError> {
        let len_bytes = message.len() as u64;
        if len_bytes > MAX_MESSAGE_BYTES {
            return Err(BootstrapError::TooLarge {
                len_bytes,
                max_bytes: MAX_MESSAGE_BYTES,
            });
        }
        Ok(())
    }

    pub(crate) fn io(what: impl Into<String>, source: io::Error) -> Self {
        BootstrapError::Io {
            what: what.into(),
            source,
        }
    }
}

/// "rank 1" or "ranks 1, 2".
fn ranks(list: &[u32]) -> String {
    let mut s = String::from(if list.len() == 1 { "rank " } else { "ranks " });
    for (i, r) in list.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        let _ = write!(s, "{r}");
    }
    s
}

fn them(list: &[u32]) -> &'static str {
    if list.len() == 1 { "it" } else { "them" }
}

fn their(list: &[u32]) -> &'static str {
    if list.len() == 1 { "its" } else { "their" }
}

fn deadline_subject(list: &[u32]) -> String {
    if list.is_empty() {
        "the bootstrap server (it did not say for which ranks); check that every rank runs and \
         calls the same collectives, or allow more time"
            .to_string()
    } else {
        format!(
            "{} to connect or to join the allgather; check that {} runs and calls the same \
             collectives as the others, or allow more time",
            ranks(list),
            if list.len() == 1 { "it" } else { "each" }
        )
    }
}
