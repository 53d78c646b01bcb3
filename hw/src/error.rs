//! Errors a correct caller can hit. Contract violations panic instead (see the crate docs).

use std::fmt;

use crate::types::{Instant, MemKind, Pe};

/// A device could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// The memory for a segment could not be had.
    #[error(
        "out of {kind:?} memory: asked for {requested_bytes} bytes, at most {limit_bytes} allowed"
    )]
    OutOfMemory {
        /// The kind of memory asked for.
        kind: MemKind,
        /// How much was asked for.
        requested_bytes: u64,
        /// The most this device grants.
        limit_bytes: u64,
    },
    /// A peer's segment was imported before the peer created it, or with a foreign key.
    #[error("cannot import {kind:?} segment of {peer}: {reason}")]
    Import {
        /// The peer.
        peer: Pe,
        /// The segment kind.
        kind: MemKind,
        /// Why.
        reason: String,
    },
    /// The device cannot do this, or not with these arguments; it is usable as before.
    #[error("{0}")]
    Refused(String),
    /// The device failed and cannot be used any more.
    #[error("device lost: {0}")]
    Lost(String),
}

/// A blocking operation (a wait, quiet, or a bootstrap exchange) did not complete.
#[derive(Debug, Clone, thiserror::Error)]
pub enum QueueError {
    /// The wait's deadline passed first.
    #[error(
        "{pe} waited until t={}ns for {waiting_for} and nothing provided it; \
         raise RSHMEM_WAIT_TIMEOUT_MS if the peer is just slow, or check that a peer updates it",
        deadline.0
    )]
    Deadline {
        /// The PE that waited.
        pe: Pe,
        /// What it waited for.
        waiting_for: String,
        /// When it gave up.
        deadline: Instant,
    },
    /// Every PE still running was blocked and nothing was in flight, so no wait could ever end.
    #[error("deadlock: every live PE is blocked and nothing is in flight\n{report}")]
    Deadlock {
        /// Who waited for what.
        report: WaitReport,
    },
    /// The backend failed.
    #[error("queue lost: {0}")]
    Lost(String),
}

/// Who was waiting for what when a run could not go on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WaitReport {
    /// Each blocked PE and a description of its wait.
    pub waits: Vec<(Pe, String)>,
    /// PEs that had already failed.
    pub failed: Vec<PeFailure>,
    /// PEs that had already returned.
    pub finished: Vec<Pe>,
}

impl fmt::Display for WaitReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (pe, what) in &self.waits {
            writeln!(f, "  {pe} waits for {what}")?;
        }
        for failure in &self.failed {
            writeln!(f, "  {} failed: {}", failure.pe, failure.message)?;
        }
        if !self.finished.is_empty() {
            let list: Vec<String> = self.finished.iter().map(|p| p.0.to_string()).collect();
            writeln!(f, "  already finished: PEs {}", list.join(", "))?;
        }
        Ok(())
    }
}

/// A PE whose program panicked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeFailure {
    /// The PE.
    pub pe: Pe,
    /// The panic message.
    pub message: String,
}

/// A run could not be started or could not finish.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The number of PEs asked for does not fit the machine.
    #[error("cannot run {requested} PEs: {reason}")]
    Pes {
        /// PEs asked for.
        requested: u32,
        /// Why not, and what to change.
        reason: String,
    },
    /// The GPUs asked for do not fit the machine: one it lacks, one named twice, none, or
    /// two without peer access; the message says which and what to change.
    #[error("cannot place the PEs on the GPUs asked for: {0}")]
    Gpus(String),
    /// The backend could not start.
    #[error("backend failed to start: {0}")]
    Init(String),
}
