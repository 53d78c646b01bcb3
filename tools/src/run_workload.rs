//! One checked run of a built-in workload on the simulator: every PE's result judged, the
//! failures gathered into a summary. `rshmem run` prints it and `rshmem swarm` judges it.

use std::time::Instant;

use hw::{Launcher, Pe, Topology};
use serde::Serialize;
use sim::costs::Timing;
use sim::{InjectionReport, OpCounts, Sim, SimReport};

use crate::workloads::{self, BandwidthPoint, PeOutcome, Workload};

/// What one run of a workload found, as `rshmem run` prints it (text or JSON).
#[derive(Serialize, Debug)]
pub(crate) struct Summary {
    pub(crate) workload: String,
    pub(crate) pes: u32,
    pub(crate) topology: String,
    pub(crate) semantics: &'static str,
    pub(crate) seed: u64,
    pub(crate) ok: bool,
    pub(crate) sim_time_ns: u64,
    /// Of the simulated time, the start-up before the PEs' programs ran (`Timing::startup_ns`).
    pub(crate) startup_ns: u64,
    pub(crate) ops: u64,
    pub(crate) op_counts: OpCounts,
    pub(crate) trace_hash: String,
    pub(crate) events: u64,
    pub(crate) memory_bytes_peak: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) process_rss_bytes_peak: Option<u64>,
    pub(crate) wall_s: f64,
    pub(crate) sim_ops_per_wall_s: f64,
    pub(crate) failures: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) curve: Option<Vec<BandwidthPoint>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) modelled_gbps: Option<f64>,
    /// The injected faults as drawn for this seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) faults: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) notes: Vec<String>,
    /// The workload's phases over the PEs that reported them, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) phases: Vec<Phase>,
}

/// One phase of a workload (`deepep-ll`'s dispatch, ...) over its PEs, in simulated time.
#[derive(Serialize, Debug, PartialEq)]
pub(crate) struct Phase {
    pub(crate) name: &'static str,
    pub(crate) mean_ns: u64,
    /// The slowest PE's: what the layer waits for.
    pub(crate) max_ns: u64,
}

/// Each phase's mean and maximum over `per_pe`, every PE's phases in order.
fn phases_over(per_pe: &[Vec<(&'static str, u64)>]) -> Vec<Phase> {
    let Some(first) = per_pe.first() else {
        return Vec::new();
    };
    first
        .iter()
        .enumerate()
        .map(|(i, &(name, _))| {
            let times = per_pe
                .iter()
                .filter_map(|phases| phases.get(i).map(|p| p.1));
            let (sum, max, count) =
                times.fold((0u64, 0u64, 0u64), |(s, m, c), t| (s + t, m.max(t), c + 1));
            Phase {
                name,
                mean_ns: sum / count.max(1),
                max_ns: max,
            }
        })
        .collect()
}

/// How one PE's run ended, for `swarm` to judge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PeVerdict {
    /// Its check passed.
    Passed,
    /// Its check failed: a wrong result.
    WrongResult,
    /// It returned an error, or its setup or teardown failed (a deadlock names why).
    Failed,
    /// Its program panicked.
    Panicked,
    /// It crashed, as the fault plan said.
    Crashed,
}

/// One checked run of a workload on the simulator: what `run` prints and `swarm` judges.
pub(crate) struct WorkloadRun {
    pub(crate) summary: Summary,
    /// Each PE's verdict, in PE order.
    pub(crate) verdicts: Vec<PeVerdict>,
    /// What the simulator reported as the run's failure (a deadlock report, ...).
    pub(crate) failure: Option<String>,
    pub(crate) injection: Option<InjectionReport>,
    pub(crate) timeline: Option<sim::Timeline>,
    pub(crate) topology: Topology,
}

/// Runs `workload` with `params` on `sim` and checks every PE's result; `timing` is the
/// machine's.
///
/// # Errors
/// If the PEs could not be launched.
pub(crate) fn run_workload(
    workload: &Workload,
    params: &workloads::Params,
    sim: Sim,
    config: rshmem::Config,
    timing: &Timing,
) -> anyhow::Result<WorkloadRun> {
    let topology = sim.topology().clone();
    let wall = Instant::now();
    let output = rshmem::run(sim, config, |sh| workloads::run_on_pe(workload, params, sh))?;
    let wall_s = wall.elapsed().as_secs_f64();
    let mut report = output.report;
    let injection = report.injection.take();
    let crashes = injection.iter().flat_map(|i| &i.crashes);
    let crashed: Vec<_> = crashes.filter(|c| c.happened).collect();
    let mut failures = Vec::new();
    let mut curve = None;
    let mut phases = Vec::new();
    let mut verdicts = Vec::new();
    for (pe, result) in output.results.into_iter().enumerate() {
        let crash = crashed.iter().find(|c| c.pe as usize == pe);
        let verdict = match (result, crash) {
            (Err(_), Some(crash)) => {
                // The crash first: it is what the rest of the report follows from.
                let first_others = verdicts
                    .iter()
                    .filter(|&&v| v == PeVerdict::Crashed)
                    .count();
                failures.insert(first_others, crash.message());
                PeVerdict::Crashed
            }
            (Ok(Ok(outcome)), _) => {
                let ok = outcome.ok;
                if !outcome.phases_ns.is_empty() {
                    phases.push(outcome.phases_ns.clone());
                }
                record(pe as u32, outcome, &mut failures, &mut curve);
                if ok {
                    PeVerdict::Passed
                } else {
                    PeVerdict::WrongResult
                }
            }
            (Ok(Err(err)), _) => {
                failures.push(format!("PE {pe}: {err}"));
                PeVerdict::Failed
            }
            (Err(err), _) => {
                // A PE unwound because the simulator stopped the run says only what the run's
                // failure, listed below, says.
                let stopped = matches!(&err, rshmem::PeError::Failed(f)
                    if report.failure.as_ref() == Some(&f.message));
                if !stopped {
                    failures.push(format!("PE {pe}: {err}"));
                }
                match err {
                    rshmem::PeError::Failed(_) => PeVerdict::Panicked,
                    _ => PeVerdict::Failed,
                }
            }
        };
        verdicts.push(verdict);
    }
    if let Some(message) = &report.failure {
        failures.push(message.clone());
    }
    let mut failures = fold_repeated_reports(failures);
    let mut notes = Vec::new();
    let modelled_gbps = (workload.name == "put-bw").then(|| modelled_put_gbps(&topology, timing));
    if let (Some(points), Some(model)) = (&curve, modelled_gbps) {
        if injection.is_some() {
            notes.push(
                "the bandwidth curve is not checked against the model: injected faults change \
                 the machine"
                    .to_string(),
            );
        } else {
            failures.extend(check_curve(points, model));
        }
    }
    let mut summary = summarise(
        workload,
        &report,
        timing.startup_ns,
        wall_s,
        failures,
        curve,
        modelled_gbps,
    );
    summary.faults = injection.as_ref().map(|i| i.drawn.clone());
    summary.notes = notes;
    summary.phases = phases_over(&phases);
    Ok(WorkloadRun {
        summary,
        verdicts,
        failure: report.failure.clone(),
        injection,
        timeline: report.timeline.take(),
        topology,
    })
}

/// Keeps the first copy of each multi-line report (a deadlock's names every PE, and every PE
/// that waited fails with it) and shortens the later ones to their first line.
fn fold_repeated_reports(failures: Vec<String>) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    failures
        .into_iter()
        .map(|failure| match failure.split_once('\n') {
            Some((head, report)) if seen.iter().any(|s| s == report) => {
                format!("{head} (the report above)")
            }
            Some((_, report)) => {
                seen.push(report.to_string());
                failure
            }
            None => failure,
        })
        .collect()
}

fn record(
    pe: u32,
    outcome: PeOutcome,
    failures: &mut Vec<String>,
    curve: &mut Option<Vec<BandwidthPoint>>,
) {
    if !outcome.ok {
        failures.push(format!("PE {pe}: check failed: {}", outcome.detail));
    }
    if outcome.curve.is_some() {
        *curve = outcome.curve;
    }
}

/// The curve must rise with size and its largest point must be within 5 % of the route's
/// modelled bandwidth. "Rise" allows each point to sit up to 3 % below the one before: the
/// simulator's link jitter (up to twice the latency on a straggler) moves the end of a batch
/// by about a microsecond, which is that much of the mid-size batches.
fn check_curve(points: &[BandwidthPoint], modelled_gbps: f64) -> Vec<String> {
    let mut problems = Vec::new();
    for pair in points.windows(2) {
        if pair[1].gbps < pair[0].gbps * 0.97 {
            problems.push(format!(
                "bandwidth fell from {:.2} GB/s at {} B to {:.2} GB/s at {} B",
                pair[0].gbps, pair[0].bytes, pair[1].gbps, pair[1].bytes
            ));
        }
    }
    if let Some(last) = points.last() {
        let error = (last.gbps - modelled_gbps).abs() / modelled_gbps;
        if error > 0.05 {
            problems.push(format!(
                "{:.2} GB/s at {} B is {:.1} % away from the modelled {modelled_gbps:.2} GB/s",
                last.gbps,
                last.bytes,
                error * 100.0
            ));
        }
    }
    problems
}

fn summarise(
    workload: &Workload,
    report: &SimReport,
    startup_ns: u64,
    wall_s: f64,
    failures: Vec<String>,
    curve: Option<Vec<BandwidthPoint>>,
    modelled_gbps: Option<f64>,
) -> Summary {
    Summary {
        workload: workload.name.to_string(),
        pes: report.n_pes,
        topology: report.topology.clone(),
        semantics: report.semantics.name(),
        seed: report.seed,
        ok: failures.is_empty(),
        sim_time_ns: report.sim_time_ns,
        startup_ns,
        ops: report.ops.total(),
        op_counts: report.ops,
        trace_hash: format!("{:016x}", report.trace_hash),
        events: report.events,
        memory_bytes_peak: report.memory_bytes_peak,
        process_rss_bytes_peak: process_rss_bytes_peak(),
        wall_s,
        sim_ops_per_wall_s: report.ops.total() as f64 / wall_s.max(1e-9),
        failures,
        curve,
        modelled_gbps,
        faults: None,
        notes: Vec::new(),
        phases: Vec::new(),
    }
}

/// The most memory this process held at once (Linux `VmHWM`), if the system says.
fn process_rss_bytes_peak() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The rate PE 0's large puts to PE 1 tend to in the model: the slower of the route's
/// bandwidth and the PE's own copy curve (`Timing::copy`), in GB/s.
fn modelled_put_gbps(topology: &Topology, timing: &Timing) -> f64 {
    let path = topology.routes_from(Pe(0)).path_to(topology, Pe(1));
    let mover = timing.copy.device.asymptotic_bytes_per_s();
    let bytes_per_s = mover.map_or(path.bandwidth_bytes_per_s, |m| {
        m.min(path.bandwidth_bytes_per_s)
    });
    bytes_per_s as f64 / 1e9
}
