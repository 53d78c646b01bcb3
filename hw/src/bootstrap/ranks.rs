//! [`run_ranks`]: the ranks of a run started by a harness rather than by `rshmem run -n`, for
//! tests that run a program's own binary as the processes of a run (self-exec).
//!
//! It is the launcher in miniature: a [`BootstrapServer`] on a socket in a private directory,
//! one child per rank with [`RANK_VAR`], [`N_RANKS_VAR`] and [`SOCKET_VAR`] set, and every
//! child's output collected. Each child is waited for on a thread of its own, so that no child
//! blocks on a full pipe while the harness waits for another (which, with ranks that wait for
//! each other in the bootstrap, would be a deadlock).

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use super::{BootstrapError, BootstrapServer, N_RANKS_VAR, RANK_VAR, SOCKET_VAR};

/// A private directory for one run's socket, removed when dropped.
struct RunDir(PathBuf);

impl RunDir {
    fn create() -> Result<RunDir, BootstrapError> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("rshmem-ranks-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| {
            BootstrapError::io(
                format!("cannot create the run directory {}", dir.display()),
                e,
            )
        })?;
        Ok(RunDir(dir))
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Starts `command(rank)` for every rank of a run of `n_ranks`, serving their bootstrap until
/// `deadline`, and returns each one's output in rank order once all have exited.
///
/// # Errors
/// [`BootstrapError::Io`] when the socket or a child cannot be started (the children already
/// started are killed); [`BootstrapError::InvalidArgument`] for 0 ranks.
pub fn run_ranks(
    n_ranks: u32,
    deadline: Instant,
    command: impl Fn(u32) -> Command,
) -> Result<Vec<Output>, BootstrapError> {
    let dir = RunDir::create()?;
    let socket = dir.0.join("bootstrap.sock");
    let server = BootstrapServer::bind(&socket, n_ranks)?;
    // Not joined: a rank that died before connecting leaves the server waiting until the
    // deadline, which must not hold the outputs back.
    std::thread::Builder::new()
        .name("rshmem-bootstrap".to_string())
        .spawn(move || server.serve(deadline))
        .map_err(|e| BootstrapError::io("cannot start the bootstrap server's thread", e))?;
    let mut children = Vec::with_capacity(n_ranks as usize);
    for rank in 0..n_ranks {
        let mut child = command(rank);
        child
            .env(RANK_VAR, rank.to_string())
            .env(N_RANKS_VAR, n_ranks.to_string())
            .env(SOCKET_VAR, &socket)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        match child.spawn() {
            Ok(child) => children.push(child),
            Err(e) => {
                for child in &mut children {
                    let _ = child.kill();
                    let _ = child.wait();
                }
                return Err(BootstrapError::io(format!("cannot start rank {rank}"), e));
            }
        }
    }
    let waiters: Vec<_> = children
        .into_iter()
        .map(|child| std::thread::spawn(move || child.wait_with_output()))
        .collect();
    waiters
        .into_iter()
        .enumerate()
        .map(|(rank, waiter)| {
            let waited = waiter.join().unwrap_or_else(|_| {
                Err(std::io::Error::other(
                    "the thread that waited for it panicked",
                ))
            });
            waited.map_err(|e| BootstrapError::io(format!("waiting for rank {rank}"), e))
        })
        .collect()
}
