//! The harness that runs conformance bodies on the process backend (`hw::process`): one OS
//! process per PE, memory shared as memfds. A test runs its own binary as the ranks of a run
//! (self-exec, served by `hw::bootstrap::run_ranks`); the child that is a rank runs the body
//! on its one PE through `rshmem::run`, and fails its test if the body failed.
//!
//! A process that another launcher started (`mpirun`, `srun --mpi=pmix` or `--mpi=pmi2`) is
//! a rank too: the bootstrap's `auto` choice finds that launcher's variables, so the same
//! binary runs as the ranks of a job that [`run_under_launcher`] starts.

use std::process::Command;
use std::time::{Duration, Instant};

use hw::bootstrap::{N_RANKS_VAR, RANK_VAR, SOCKET_VAR, choose, run_ranks};
use hw::process::{Process, ProcessBackend, ProcessReport};
use rshmem::Shmem;

use crate::{BodyError, RunError, run_body};

/// The PE counts each body runs with on the process backend.
pub const PROCESS_PES: [u32; 2] = [2, 4];

/// How many times each body runs per PE count (process schedules differ from run to run).
pub const PROCESS_REPEATS: u32 = 3;

/// How long one run's ranks may take, start to end.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// Whether this process is a rank of a run: [`run_ranks`] started it, or another launcher
/// whose variables the bootstrap's `auto` choice finds (`hw::bootstrap::choose`). Variables
/// that `choose` refuses count as a rank's too, so that its bootstrap names them, rather than
/// the test starting ranks of its own inside another launcher's job.
pub fn is_rank() -> bool {
    !matches!(choose(|name| std::env::var_os(name)), Ok(None))
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

/// Why a job under another launcher failed.
#[derive(Debug, thiserror::Error)]
pub enum LauncherRunError {
    /// The launcher could not be started.
    #[error("cannot start `{launcher}`: {source}")]
    Start {
        /// The launcher's command line.
        launcher: String,
        /// Why.
        source: std::io::Error,
    },
    /// The job ran past its deadline and was killed.
    #[error(
        "`{launcher} {test}` ran past {} s, waiting for every rank to pass; it printed:\n{output}",
        RUN_TIMEOUT.as_secs()
    )]
    Deadline {
        /// The launcher's command line.
        launcher: String,
        /// The test its ranks ran.
        test: String,
        /// What the job printed.
        output: String,
    },
    /// The job ended, but not with every rank's test passed.
    #[error(
        "`{launcher} {test}` ended with {status}, {passed} of {n_ranks} ranks passed:\n{output}"
    )]
    Failed {
        /// The launcher's command line.
        launcher: String,
        /// The test its ranks ran.
        test: String,
        /// How the launcher ended.
        status: std::process::ExitStatus,
        /// How many ranks said their test passed.
        passed: usize,
        /// How many ranks the job had.
        n_ranks: u32,
        /// What the job printed.
        output: String,
    },
}

/// Runs the test `test` of this test binary, once, as the `n_ranks` ranks of one job that
/// `launcher` starts (its words before the program: `["mpirun", "-np", "4"]`, `["srun", "-n",
/// "4", "--mpi=pmix"]`) with `envs` added, and returns what the job printed. Each rank finds
/// the launcher through the bootstrap's `auto` choice; `rshmem run`'s own variables are
/// removed, so that a suite run under it does not hand the ranks its socket.
///
/// # Errors
/// [`LauncherRunError::Failed`] with the job's output unless the launcher succeeded and every
/// rank said its test passed; [`LauncherRunError::Deadline`] when the job ran past the
/// harness's deadline (the launcher is killed); [`LauncherRunError::Start`] when the launcher
/// cannot be started.
pub fn run_under_launcher(
    launcher: &[&str],
    envs: &[(&str, &str)],
    n_ranks: u32,
    test: &str,
) -> Result<String, LauncherRunError> {
    let exe = std::env::current_exe().map_err(|source| LauncherRunError::Start {
        launcher: launcher.join(" "),
        source,
    })?;
    let line = launcher.join(" ");
    // `timeout` ends the launcher at the deadline; the launcher ends its ranks.
    let output = Command::new("timeout")
        .args(["-k", "5", &RUN_TIMEOUT.as_secs().to_string()])
        .args(launcher)
        .arg(&exe)
        .args([test, "--exact", "--test-threads", "1", "--color", "never"])
        .env_remove(RANK_VAR)
        .env_remove(N_RANKS_VAR)
        .env_remove(SOCKET_VAR)
        .envs(envs.iter().copied())
        .output()
        .map_err(|source| LauncherRunError::Start {
            launcher: line.clone(),
            source,
        })?;
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    // `timeout` exits with 124 when the deadline passed, 137 when it had to kill.
    if matches!(output.status.code(), Some(124 | 137)) {
        return Err(LauncherRunError::Deadline {
            launcher: line,
            test: test.to_string(),
            output: printed,
        });
    }
    // libtest prints its summary line in several writes, and the launcher forwards the ranks'
    // writes as they come, so two ranks' summaries can interleave within a line; the counts are
    // one write.
    let passed = printed.matches(". 1 passed; 0 failed;").count();
    if output.status.success() && passed == n_ranks as usize {
        Ok(printed)
    } else {
        Err(LauncherRunError::Failed {
            launcher: line,
            test: test.to_string(),
            status: output.status,
            passed,
            n_ranks,
            output: printed,
        })
    }
}
