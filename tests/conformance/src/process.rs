//! The harness that runs conformance bodies on the process backend (`hw::process`): one OS
//! process per PE, memory shared as memfds. A test runs its own binary as the ranks of a run
//! (self-exec, served by `hw::bootstrap::run_ranks`); the child that is a rank runs the body
//! on its one PE through `rshmem::run`, and fails its test if the body failed.

use std::process::Command;
use std::time::{Duration, Instant};

use hw::bootstrap::{RANK_VAR, run_ranks};
use hw::process::{Process, ProcessBackend, ProcessReport};
use rshmem::Shmem;

use crate::{BodyError, RunError, run_body};

/// The PE counts each body runs with on the process backend.
pub const PROCESS_PES: [u32; 2] = [2, 4];

/// How many times each body runs per PE count (process schedules differ from run to run).
pub const PROCESS_REPEATS: u32 = 3;

/// How long one run's ranks may take, start to end.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// Whether this process is a rank of a run (the launcher's variables are set).
pub fn is_rank() -> bool {
    std::env::var_os(RANK_VAR).is_some()
}

/// Runs `body` on this process's PE of the run the launcher's variables describe, and returns
/// the report, failing with the PE's error if its check failed.
///
/// # Errors
/// [`RunError::Failed`] if the check failed; another [`RunError`] if the run could not
/// happen.
pub fn run_on_process(
    body: impl Fn(&Shmem<ProcessBackend>) -> Result<(), BodyError> + Sync,
) -> Result<ProcessReport, RunError> {
    let process = Process::builder().build()?;
    // The bodies need a few KiB, but `heap_growth` wants a heap past the first 64 MiB; a
    // memfd is sparse, so the room costs nothing.
    let (report, failures) = run_body(process, 256 << 20, body)?;
    if failures.is_empty() {
        Ok(report)
    } else {
        Err(RunError::Failed {
            run: format!("a process of {} PEs", report.n_pes),
            failures,
        })
    }
}

/// In a rank: runs `body` ([`run_on_process`]) and panics on failure. In the test itself:
/// runs the calling test as the ranks of a run of every PE count of [`PROCESS_PES`],
/// [`PROCESS_REPEATS`] times each, and panics with the output of every rank that failed.
/// The test is named by its thread, which the test harness names after it.
///
/// # Panics
/// As said; also if the calling thread has no test's name (a harness run on one thread).
pub fn process_conformance(
    body: impl Fn(&Shmem<ProcessBackend>) -> Result<(), BodyError> + Sync + Copy,
) {
    if is_rank() {
        if let Err(e) = run_on_process(body) {
            panic!("{e}");
        }
        return;
    }
    let thread = std::thread::current();
    let test = thread
        .name()
        .filter(|name| *name != "main")
        .expect("the test's name, from its thread: run the suite with more than one test thread");
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut failures = Vec::new();
    for n in PROCESS_PES {
        for _ in 0..PROCESS_REPEATS {
            let outputs = run_ranks(n, Instant::now() + RUN_TIMEOUT, |_| {
                let mut command = Command::new(&exe);
                command.args([test, "--exact", "--nocapture", "--test-threads", "1"]);
                command
            })
            .unwrap_or_else(|e| panic!("cannot start {n} ranks: {e}"));
            for (rank, output) in outputs.iter().enumerate() {
                let stdout = String::from_utf8_lossy(&output.stdout);
                if !output.status.success() || !stdout.contains("1 passed") {
                    failures.push(format!(
                        "{n} PEs, rank {rank} ended with {}:\n{stdout}{}",
                        output.status,
                        String::from_utf8_lossy(&output.stderr)
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
