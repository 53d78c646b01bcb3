//! What a simulated run reports, written as one JSON object to the file the launcher named;
//! the launcher prints it (`--json`) or a summary of it.
//!
//! Why a file and not standard output: standard output is the program's. The object has the
//! fields of the built-in workloads' `rshmem run --json`, plus each PE's exit status and the
//! races of a checked run, their addresses named by the program's symbols.
//!
//! A PE that ends the process (a failed call, `shmem_global_exit`, a fatal signal) ends the
//! run for every PE, since they share the process: `on_exit` and a signal handler name that
//! PE on standard error and in the report (`ending.rs`), so no run ends without saying why.

use std::ffi::c_int;
use std::io::Write;
use std::path::PathBuf;
use std::sync::OnceLock;

use hw::{KernelMemory, MemKind, PeFailure, Topology};
use rshmem::check::{Race, RaceAccess, RaceCause};
use serde::Serialize;
use sim::{OpCounts, SimReport};

use crate::sim_host::copies::Copy;
use crate::sim_host::image::Image;
use crate::sim_host::{HostError, Request};

/// The report object.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Report {
    ok: bool,
    program: String,
    pes: u32,
    topology: String,
    semantics: String,
    seed: u64,
    sim_time_ns: u64,
    ops: u64,
    op_counts: OpCounts,
    trace_hash: String,
    events: u64,
    memory_bytes_peak: u64,
    wall_s: f64,
    sim_ops_per_wall_s: f64,
    /// The host process's peak resident memory (every PE's copy, stack and touched memory).
    process_rss_bytes_peak: u64,
    /// Each PE's exit status (what `main` returned or `exit` was given, its low 8 bits), or
    /// `null` for a PE that did not end.
    exit_statuses: Vec<Option<c_int>>,
    /// The PE that ended the run with `shmem_global_exit`, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    ended_by: Option<String>,
    /// The simulator's chance events (for `rshmem check --schedule delays`).
    choices: u64,
    failures: Vec<String>,
    races: Vec<RaceJson>,
    /// Whether the program was built with `oshcc -rshmem-check`, so that a checked run saw
    /// its own loads and stores.
    instrumented: bool,
}

/// A race, with its accesses.
#[derive(Debug, Serialize)]
pub(crate) struct RaceJson {
    first: AccessJson,
    second: AccessJson,
    /// The first byte both touch, named.
    conflict: String,
    first_epoch: u64,
    second_epoch: u64,
    /// Why the first is not ordered before the second.
    why: String,
}

/// One access of a race: `where_` names its bytes (`flag+0x0`, `heap+0x40`).
#[derive(Debug, Serialize)]
pub(crate) struct AccessJson {
    pe: u32,
    kind: &'static str,
    target: u32,
    offset: u64,
    bytes: u64,
    #[serde(rename = "where")]
    where_: String,
    /// The thread that made it, for races between the threads of a launch or of a PE's
    /// program.
    #[serde(skip_serializing_if = "Option::is_none")]
    thread: Option<String>,
}

/// The run, as the launcher's PEs ended it.
#[derive(Debug)]
pub(crate) struct Outcome {
    report: Report,
    races: Vec<Race>,
    /// The recorded timeline, when a trace was asked for, and the machine it ran on.
    timeline: Option<(sim::Timeline, Topology)>,
}

impl Outcome {
    /// The outcome of a run whose PEs returned `results`.
    pub(crate) fn new(
        results: Vec<Result<c_int, PeFailure>>,
        sim: SimReport,
        races: Vec<Race>,
        topology: &Topology,
    ) -> Outcome {
        let mut failures = Vec::new();
        let exit_statuses = results
            .iter()
            .enumerate()
            .map(|(pe, result)| match result {
                Ok(0) => Some(0),
                Ok(status) => {
                    failures.push(exited(pe as u32, *status));
                    Some(*status)
                }
                Err(failure) => {
                    failures.push(format!("PE {pe}: {}", failure.message));
                    None
                }
            })
            .collect();
        failures.extend(sim.failure.clone());
        let report = Report {
            pes: sim.n_pes,
            topology: sim.topology.clone(),
            semantics: sim.semantics.name().to_owned(),
            seed: sim.seed,
            sim_time_ns: sim.sim_time_ns,
            ops: sim.ops.total(),
            op_counts: sim.ops,
            trace_hash: format!("{:016x}", sim.trace_hash),
            events: sim.events,
            memory_bytes_peak: sim.memory_bytes_peak,
            exit_statuses,
            choices: sim.choices,
            failures,
            ..Report::default()
        };
        let timeline = sim.timeline.map(|t| (t, topology.clone()));
        Outcome {
            report,
            races,
            timeline,
        }
    }

    /// Adds the wall time the run took.
    pub(crate) fn with_wall_s(mut self, wall_s: f64) -> Outcome {
        self.report.wall_s = wall_s;
        self.report.process_rss_bytes_peak = rss_bytes_peak();
        self.report.sim_ops_per_wall_s = self.report.ops as f64 / wall_s.max(1e-9);
        self
    }

    /// Names the races' addresses by the program's symbols.
    pub(crate) fn with_image(mut self, image: Image, copies: &[Copy]) -> Outcome {
        self.report.instrumented = image.instrumented;
        self.report.races = self
            .races
            .iter()
            .map(|race| {
                let name = |access: &RaceAccess, byte: u64| match &race.cause {
                    RaceCause::KernelThreads {
                        memory: KernelMemory::Shared,
                        ..
                    } => format!("__shared__+{byte:#x}"),
                    RaceCause::KernelThreads {
                        memory: KernelMemory::Global,
                        ..
                    } => format!("global memory {byte:#x}"),
                    RaceCause::HostThreads {
                        memory: KernelMemory::Global | KernelMemory::Shared,
                    } => format!("address {byte:#x}"),
                    _ => name_byte(&image, copies, access, byte),
                };
                RaceJson {
                    first: access_json(&race.first, name(&race.first, race.first.offset)),
                    second: access_json(&race.second, name(&race.second, race.second.offset)),
                    conflict: name(&race.first, race.conflict_offset),
                    first_epoch: race.first_epoch,
                    second_epoch: race.second_epoch,
                    why: race.cause.to_string(),
                }
            })
            .collect();
        self
    }
}

fn access_json(access: &RaceAccess, where_: String) -> AccessJson {
    AccessJson {
        pe: access.pe,
        kind: access.kind.name(),
        target: access.target,
        offset: access.offset,
        bytes: access.len_bytes,
        where_,
        thread: access.thread.map(|thread| thread.to_string()),
    }
}

/// Names the byte `within` of the memory `access` touched: a symbol of the program's static
/// data and the offset in it, or the heap and the offset in it.
fn name_byte(image: &Image, copies: &[Copy], access: &RaceAccess, within: u64) -> String {
    match access.memory {
        MemKind::Static => {
            let copy = &copies[access.target as usize];
            // The static data starts at the copy's data range; symbols are image addresses.
            let vaddr = (copy.data.start - copy.base) as u64 + within;
            match image.symbol_at(vaddr) {
                Some((symbol, at)) => format!("{symbol}+{at:#x}"),
                None => format!("static data+{within:#x}"),
            }
        }
        MemKind::Host => format!("heap+{within:#x}"),
        MemKind::Device => format!("device heap+{within:#x}"),
    }
}

/// Where the report goes, once the request is known: for the exit and crash hooks too.
static REPORT_PATH: OnceLock<PathBuf> = OnceLock::new();

impl Report {
    /// The report of a run of `request` that has not finished: what the exit hook completes
    /// when a PE ends the process early.
    pub(crate) fn early(request: &Request) -> Report {
        let _ = REPORT_PATH.set(request.report.clone());
        Report {
            program: program_name(),
            pes: request.pes,
            topology: request.topology.clone(),
            semantics: request.semantics.clone(),
            seed: request.seed,
            exit_statuses: vec![None; request.pes as usize],
            ..Report::default()
        }
    }

    /// Marks the run failed for `why`.
    pub(crate) fn fail(&mut self, why: String) {
        self.failures.push(why);
        self.ok = false;
    }

    /// Records that PE `pe` ended with `status`.
    pub(crate) fn pe_ended(&mut self, pe: u32, status: c_int) {
        if let Some(slot) = self.exit_statuses.get_mut(pe as usize) {
            *slot = Some(status);
        }
        if status != 0 {
            self.failures.push(exited(pe, status));
        }
    }

    /// Marks the run ended by a global exit (`who` says which PE) with `status`: a success
    /// when `status` is 0, as the process launcher says, whatever PEs exited before.
    pub(crate) fn end_globally(&mut self, who: String, status: c_int) {
        if status != 0 {
            self.failures.push(who.clone());
        }
        self.ok = status == 0;
        self.ended_by = Some(who);
    }
}

/// The failure of a PE that exited with a non-zero `status`.
fn exited(pe: u32, status: c_int) -> String {
    format!("PE {pe} exited with status {status}")
}

/// Writes a report completed by the exit hook.
pub(crate) fn write_early(report: &Report) {
    if let Some(path) = REPORT_PATH.get() {
        write(path, report);
    }
}

/// Writes the report of a finished (or failed) run and returns the process's exit status:
/// 0 when every PE exited 0 with no failure and no race, else the status of the first PE
/// that exited non-zero, else 1.
pub(crate) fn finish(request: &Request, outcome: Result<Outcome, HostError>) -> c_int {
    let (mut report, timeline) = match outcome {
        Ok(outcome) => (outcome.report, outcome.timeline),
        Err(err) => {
            let report = Report {
                failures: vec![err.to_string()],
                ..Report::default()
            };
            (report, None)
        }
    };
    report.program = program_name();
    report.ok = report.failures.is_empty() && report.races.is_empty();
    if let Some(path) = &request.trace {
        let written = match &timeline {
            Some((t, topology)) => {
                std::fs::write(path, t.to_chrome_json(topology)).map_err(|e| e.to_string())
            }
            None => Err("the simulator recorded no timeline".to_owned()),
        };
        if let Err(err) = written {
            report.failures.push(format!(
                "cannot write the trace to {}: {err}",
                path.display()
            ));
            report.ok = false;
        }
    }
    crate::sim_host::ending::finished();
    write(&request.report, &report);
    // SAFETY: fflush(NULL) flushes every C stream; the PEs' output is in them.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    if report.ok {
        0
    } else {
        crate::sim_host::ending::run_status(1)
    }
}

/// Reports a request the host could not even read, on standard error (there is no report
/// file to write to), and returns the launcher's status for bad arguments.
pub(crate) fn fail_early(err: &HostError) -> c_int {
    // Why ignore a failed write: the process ends either way, and stderr is all there is.
    let _ = writeln!(std::io::stderr(), "rshmem: {err}");
    2
}

fn write(path: &PathBuf, report: &Report) {
    let text = serde_json::to_string(report).expect("a report serialises");
    if let Err(err) = std::fs::write(path, text) {
        let _ = writeln!(
            std::io::stderr(),
            "rshmem: cannot write the simulator's report to {}: {err}",
            path.display()
        );
    }
}

/// This process's peak resident memory so far.
fn rss_bytes_peak() -> u64 {
    // SAFETY: getrusage fills the struct it is given; a zeroed rusage is valid.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0;
    }
    // Linux gives kilobytes.
    u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024
}

fn program_name() -> String {
    std::env::args().next().unwrap_or_default()
}
