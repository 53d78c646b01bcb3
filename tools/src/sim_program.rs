//! `rshmem run -n N --sim TOPOLOGY PROGRAM`: an OpenSHMEM program, built by `oshcc`, on N
//! simulated GPUs.
//!
//! The launcher starts the program once, with `RSHMEM_SIM` holding the run's request; the
//! program's `libshmem` sees it before `main`, runs every PE as a coroutine over its own
//! copy of the program, and writes its report to a file in the run's private directory
//! (docs/c-api.md, "On the simulator"). The launcher prints the report, or the JSON object
//! itself with `--json`, and explains a run that ended without one.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, ExitStatus};
use std::time::{Duration, Instant};

use anyhow::Context;
use hw::Semantics;
use serde::Serialize;
use serde_json::Value;

use crate::launch::{self, RunDir};

/// The variable that carries the request (the host's `REQUEST_VAR`).
const REQUEST_VAR: &str = "RSHMEM_SIM";

/// One simulated run of a program, as the launcher asks the program's host for it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SimRequest {
    pub(crate) pes: u32,
    pub(crate) topology: String,
    pub(crate) seed: u64,
    pub(crate) semantics: &'static str,
    pub(crate) trace: Option<PathBuf>,
    /// Filled in by [`run_once`].
    pub(crate) report: PathBuf,
    pub(crate) check: bool,
    pub(crate) explore: Option<ExploreRequest>,
    /// Every kernel load of a peer a simulated get (the simulator's mapped loads off).
    pub(crate) exact: bool,
}

/// The exploration mode's choices (`rshmem check --schedule delays`).
#[derive(Clone, Copy, Debug, Serialize)]
pub(crate) struct ExploreRequest {
    pub(crate) depth: u32,
    pub(crate) n_choices: u64,
    pub(crate) rounds: u32,
}

impl SimRequest {
    /// A seeded run of `pes` PEs on `topology`.
    pub(crate) fn new(pes: u32, topology: &str, seed: u64, semantics: Semantics) -> SimRequest {
        SimRequest {
            pes,
            topology: topology.to_owned(),
            seed,
            semantics: semantics.name(),
            trace: None,
            report: PathBuf::new(),
            check: false,
            explore: None,
            exact: false,
        }
    }
}

/// How one simulated run of the program ended.
pub(crate) struct Ran {
    pub(crate) status: ExitStatus,
    /// The host's report, if it wrote one.
    pub(crate) report: Option<Value>,
}

/// Starts `program` with `args` on the simulator as `request` says and waits for it; kills it
/// after `timeout_s` seconds (0: no limit). A checked run's standard output is dropped: the
/// detector runs the program many times, and the report is what it wants.
///
/// # Errors
/// If the program cannot be found or started, or its report cannot be read.
pub(crate) fn run_once(
    program: &Path,
    args: &[String],
    mut request: SimRequest,
    exports: &[(String, String)],
    timeout_s: u64,
) -> anyhow::Result<Ran> {
    let dir = RunDir::create()?;
    request.report = dir.0.join("report.json");
    let mut command = Command::new(program);
    if request.check {
        command.stdout(std::process::Stdio::null());
    }
    let mut child = command
        .args(args)
        .env(REQUEST_VAR, serde_json::to_string(&request)?)
        .envs(exports.iter().map(|(k, v)| (k, v)))
        .spawn()
        .with_context(|| format!("cannot start {}", program.display()))?;
    let deadline = (timeout_s > 0).then(|| Instant::now() + Duration::from_secs(timeout_s));
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            let _ = child.kill();
            let _ = child.wait();
            anyhow::bail!(
                "the simulated run of {} passed --timeout-s {timeout_s} and was killed; a PE \
                 may spin on a plain load (use shmem_wait_until), a thread may spin on an atomic \
                 another thread sets (call sched_yield in the loop, or build with oshcc \
                 -rshmem-check, whose atomics let the others run), or the program runs long",
                program.display()
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let report = match std::fs::read_to_string(&request.report) {
        Ok(text) => Some(serde_json::from_str(&text).with_context(|| {
            format!(
                "the simulator's report of {} is malformed",
                program.display()
            )
        })?),
        Err(_) => None,
    };
    Ok(Ran { status, report })
}

/// Why a run has no report, for the user.
pub(crate) fn missing_report(program: &Path, status: ExitStatus) -> String {
    let how = match (status.code(), status.signal()) {
        (_, Some(signal)) => format!("was killed by signal {signal}"),
        (Some(code), None) => format!("exited with status {code}"),
        (None, None) => "ended".to_owned(),
    };
    if status.signal().is_some() {
        format!(
            "the simulated run of {} {how} without a report; the line above names the PE that \
             crashed",
            program.display()
        )
    } else {
        format!(
            "{} {how} without running on the simulator: is it linked with rshmem's libshmem? \
             Build it with oshcc (docs/c-tools.md)",
            program.display()
        )
    }
}

/// `rshmem run -n N --sim TOPOLOGY PROGRAM ARGS...`.
///
/// # Errors
/// If the program cannot be found or started.
pub(crate) fn main(
    program: &str,
    args: &[String],
    request: SimRequest,
    json: bool,
    exports: &[(String, String)],
    timeout_s: u64,
) -> anyhow::Result<ExitCode> {
    let path = launch::resolve(program)?;
    let trace = request.trace.clone();
    let ran = run_once(&path, args, request, exports, timeout_s)?;
    let Some(report) = ran.report else {
        eprintln!("rshmem run: {}", missing_report(&path, ran.status));
        // A crash (the line above names the PE and the signal) gives 128 + the signal, as a
        // shell reports a process killed by it and as the process launcher does.
        let status = ran.status.signal().map_or(1, |signal| 128 + signal);
        return Ok(ExitCode::from(u8::try_from(status).unwrap_or(1)));
    };
    if json {
        println!("{report}");
    } else {
        print_text(program, &report, trace.as_deref());
    }
    let ok = report["ok"].as_bool() == Some(true);
    // A PE that ended the run with exit(s) or shmem_global_exit(s) gives its status, as the
    // process launcher does.
    let status = ran.status.code().filter(|&c| c != 0).unwrap_or(1);
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(u8::try_from(status).unwrap_or(1))
    })
}

/// The report as text, on standard error: standard output is the program's.
fn print_text(program: &str, r: &Value, trace: Option<&Path>) {
    let ok = r["ok"].as_bool() == Some(true);
    eprintln!(
        "{program} on {} PEs of {} ({}), seed {}: {}",
        r["pes"],
        r["topology"].as_str().unwrap_or("?"),
        r["semantics"].as_str().unwrap_or("?"),
        r["seed"],
        if ok { "ok" } else { "FAILED" }
    );
    if r["trace_hash"].as_str().is_some_and(|h| !h.is_empty()) {
        eprintln!(
            "  simulated {} ns, {} SHMEM operations, trace hash {}, {:.3} s wall ({:.0} ops/s)",
            r["sim_time_ns"],
            r["ops"],
            r["trace_hash"].as_str().unwrap_or("?"),
            r["wall_s"].as_f64().unwrap_or(0.0),
            r["sim_ops_per_wall_s"].as_f64().unwrap_or(0.0)
        );
    }
    for failure in r["failures"].as_array().into_iter().flatten() {
        eprintln!("  {}", failure.as_str().unwrap_or("?"));
    }
    if let Some(ended_by) = r["ended_by"].as_str().filter(|_| ok) {
        eprintln!("  {ended_by}");
    }
    if let Some(path) = trace.filter(|_| ok) {
        eprintln!(
            "  trace: {} (open it in https://ui.perfetto.dev)",
            path.display()
        );
    }
}
