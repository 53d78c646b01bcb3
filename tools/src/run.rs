//! `rshmem run`: a built-in workload on the simulator, checked, with a report.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use hw::{Launcher, Pe, Semantics, Topology};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use sim::costs::Timing;
use sim::{Machine, OpCounts, Sim, SimReport};

use crate::launch::{self, LaunchArgs};
use crate::sim_program::{self, SimRequest};
use crate::workloads::{self, BandwidthPoint, PeOutcome, Workload};

pub(crate) const AFTER_HELP: &str = "Examples:
  rshmem run ring --pes 8 --topology hgx8 --seed 1
  rshmem run put-bw --pes 2 --topology h200x2 --json
  rshmem run alltoall --pes 1024 --topology ib-128 --trace trace.json

The exit status is 0 when every PE's check passed, 1 when a check failed or the run
deadlocked, and 2 for bad arguments. --trace writes Chrome trace-event JSON: open it in
https://ui.perfetto.dev or chrome://tracing (one track per PE and per link direction).

Launcher mode (-n N): start N processes of PROGRAM on this machine instead of simulating.
  rshmem run -n 2 ./target/release/examples/hello
  rshmem run -n 4 --timeout-s 60 my-prog --size 1m
Every argument after PROGRAM is PROGRAM's (put -- before PROGRAM if it starts with -). Each
rank gets RSHMEM_RANK, RSHMEM_N_RANKS and RSHMEM_BOOTSTRAP (the bootstrap socket). When a
rank fails, the others are killed 2 s later. The simulator's options (--pes, --topology,
--semantics, --seed, --trace, --json) do not apply and are refused with -n. The exit status
is 0 when every rank exited 0, else the status of the lowest rank that failed (128 + signal
when killed), and 2 when the launcher itself could not run. See docs/launcher.md.";

/// The simulated machine a workload runs on (`run` and `check`).
#[derive(Args, Debug)]
pub(crate) struct MachineArgs {
    /// How many PEs (default: one per GPU of the topology).
    #[arg(long)]
    pub(crate) pes: Option<u32>,
    /// A topology preset (h200x2, hgx8, ib-N) or a TOML topology file.
    #[arg(long, default_value = "hgx8")]
    pub(crate) topology: String,
    /// Ordering rules: nvshmem (relaxed fetches, InfiniBand visibility rule) or openshmem-1.5.
    #[arg(
        long,
        default_value = Semantics::default().name(),
        value_parser = PossibleValuesParser::new(Semantics::ALL.map(Semantics::name))
            .try_map(|name| name.parse::<Semantics>())
    )]
    pub(crate) semantics: Semantics,
}

#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    /// The workload: hello, ring, reduce, alltoall, broadcast, fcollect, matmul, moe-dispatch,
    /// put-bw, msg-rate, flag-nofence or flag-fence. With -n: the program to start, a path or
    /// a name looked up in PATH.
    #[arg(value_name = "WORKLOAD|PROGRAM")]
    target: String,
    /// With -n: the program's arguments, passed on as given (options included).
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    args: Vec<String>,
    #[command(flatten)]
    launch: LaunchArgs,
    #[command(flatten)]
    machine: MachineArgs,
    /// The seed of every random choice of the simulator; the same seed replays the same run
    /// (default 0).
    #[arg(long)]
    seed: Option<u64>,
    /// Write a Chrome/Perfetto trace of the run to this file.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// With --sim: every load a kernel makes of a peer's memory is a simulated get (slower,
    /// every access an event), not a mapped load (docs/nvshmem-programs.md)
    #[arg(long, requires = "sim")]
    exact: bool,
}

#[derive(Serialize, Debug)]
struct Summary {
    workload: String,
    pes: u32,
    topology: String,
    semantics: &'static str,
    seed: u64,
    ok: bool,
    sim_time_ns: u64,
    /// Of the simulated time, the start-up before the PEs' programs ran (`Timing::startup_ns`).
    startup_ns: u64,
    ops: u64,
    op_counts: OpCounts,
    trace_hash: String,
    events: u64,
    memory_bytes_peak: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    process_rss_bytes_peak: Option<u64>,
    wall_s: f64,
    sim_ops_per_wall_s: f64,
    failures: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    curve: Option<Vec<BandwidthPoint>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    modelled_gbps: Option<f64>,
}

pub(crate) fn main(args: RunArgs) -> anyhow::Result<ExitCode> {
    if let Some(n_ranks) = args.launch.np {
        if let Some(topology) = &args.launch.sim {
            let mut request = SimRequest::new(
                n_ranks,
                topology,
                args.seed.unwrap_or(0),
                args.machine.semantics,
            );
            request.trace.clone_from(&args.trace);
            request.exact = args.exact;
            return sim_program::main(
                &args.target,
                &args.args,
                request,
                args.json,
                &args.launch.exports,
                args.launch.timeout_s,
            );
        }
        if args.seed.is_some() || args.trace.is_some() || args.json {
            bail!(
                "--seed, --trace and --json are the simulator's: with -n they need --sim \
                 TOPOLOGY (`rshmem run -n 8 --sim hgx8 --seed 1 ./prog`)"
            );
        }
        return launch::main(n_ranks, &args.target, &args.args, &args.launch);
    }
    if !args.args.is_empty() {
        bail!(
            "unexpected arguments after the workload: {}; to start a program with arguments, \
             pass -n N (`rshmem run -n 2 PROGRAM ARGS...`)",
            args.args.join(" ")
        );
    }
    let workload = workloads::lookup(&args.target).map_err(|e| {
        let e = anyhow::Error::from(e);
        if args.target.contains('/') {
            e.context(format!(
                "{} looks like a program: to start it as N processes, pass -n N",
                args.target
            ))
        } else {
            e
        }
    })?;
    let machine = sim::topology::load(&args.machine.topology)?;
    let timing = machine.timing;
    let sim = simulator(
        workload,
        SimChoice {
            machine,
            pes: args.machine.pes,
            seed: args.seed.unwrap_or(0),
            semantics: args.machine.semantics,
            timeline: args.trace.is_some(),
            explore: None,
        },
    )?;
    let n_pes = sim.n_pes();
    let topology = sim.topology().clone();
    let config = rshmem::Config::from_env().context("reading the SHMEM_*/RSHMEM_* environment")?;
    if config.info {
        // Why stderr: stdout may be the --json object.
        eprint!("{}", crate::info::table_text(&config));
    }
    let spinner = progress(&args, workload, n_pes);
    let wall = Instant::now();
    let output = rshmem::run(sim, config, |sh| workloads::run_on_pe(workload, sh))?;
    let wall_s = wall.elapsed().as_secs_f64();
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    let report = output.report;
    let mut failures = Vec::new();
    let mut curve = None;
    for (pe, result) in output.results.into_iter().enumerate() {
        match result {
            Ok(Ok(outcome)) => record(pe as u32, outcome, &mut failures, &mut curve),
            Ok(Err(err)) => failures.push(format!("PE {pe}: {err}")),
            Err(err) => failures.push(format!("PE {pe}: {err}")),
        }
    }
    if let Some(message) = &report.failure {
        failures.push(message.clone());
    }
    let modelled_gbps = (workload.name == "put-bw").then(|| modelled_put_gbps(&topology, &timing));
    if let (Some(points), Some(model)) = (&curve, modelled_gbps) {
        failures.extend(check_curve(points, model));
    }
    if let Some(path) = &args.trace {
        let timeline = report
            .timeline
            .as_ref()
            .context("the simulator recorded no timeline")?;
        std::fs::write(path, timeline.to_chrome_json(&topology))
            .with_context(|| format!("cannot write the trace to {}", path.display()))?;
    }
    let startup_ns = timing.startup_ns;
    let summary = summarise(
        workload,
        &report,
        startup_ns,
        wall_s,
        failures,
        curve,
        modelled_gbps,
    );
    if args.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        print_text(&summary, args.trace.as_deref());
    }
    Ok(if summary.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

impl RunArgs {
    /// The topologies this command line names: the simulated machine of a workload, or with
    /// -n the one of `--sim`.
    pub(crate) fn topologies(&self) -> Vec<&str> {
        match (&self.launch.np, &self.launch.sim) {
            (Some(_), Some(sim)) => vec![sim.as_str()],
            (Some(_), None) => Vec::new(),
            (None, _) => vec![self.machine.topology.as_str()],
        }
    }
}

/// What a simulator for one run of a workload is built from.
pub(crate) struct SimChoice {
    pub(crate) machine: Machine,
    pub(crate) pes: Option<u32>,
    pub(crate) seed: u64,
    pub(crate) semantics: Semantics,
    pub(crate) timeline: bool,
    /// Run the one execution an exploration names instead of a seeded run.
    pub(crate) explore: Option<sim::Explore>,
}

/// Builds the simulator for one run of `workload`.
///
/// # Errors
/// If the topology cannot hold the PEs, or the workload needs more of them.
pub(crate) fn simulator(workload: &Workload, choice: SimChoice) -> anyhow::Result<Sim> {
    let mut builder = Sim::builder(choice.machine)
        .seed(choice.seed)
        .semantics(choice.semantics)
        .timeline(choice.timeline);
    if let Some(explore) = choice.explore {
        builder = builder.explore(explore);
    }
    if let Some(n) = choice.pes {
        builder = builder.pes(n);
    }
    let sim = builder.build()?;
    if sim.n_pes() < workload.min_pes {
        bail!(
            "workload {} needs at least {} PEs; pass --pes {}",
            workload.name,
            workload.min_pes,
            workload.min_pes
        );
    }
    Ok(sim)
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
    }
}

fn print_text(s: &Summary, trace: Option<&std::path::Path>) {
    println!(
        "{} on {} PEs of {} ({}), seed {}: {}",
        s.workload,
        s.pes,
        s.topology,
        s.semantics,
        s.seed,
        if s.ok { "ok" } else { "FAILED" }
    );
    if s.startup_ns > 0 {
        println!(
            "  simulated time   {:.3} us (the GPUs' start-up {:.3} us, then the program {:.3} us)",
            s.sim_time_ns as f64 / 1e3,
            s.startup_ns as f64 / 1e3,
            s.sim_time_ns.saturating_sub(s.startup_ns) as f64 / 1e3
        );
    } else {
        println!("  simulated time   {:.3} us", s.sim_time_ns as f64 / 1e3);
    }
    let c = &s.op_counts;
    println!(
        "  operations       {} (puts {}, gets {}, atomics {}, put_signals {}; fences {}, quiets {}, waits {})",
        s.ops, c.puts, c.gets, c.amos, c.put_signals, c.fences, c.quiets, c.waits
    );
    println!("  trace hash       {}", s.trace_hash);
    println!(
        "  wall time        {:.3} s ({} events, {:.2} M simulated ops/s)",
        s.wall_s,
        s.events,
        s.sim_ops_per_wall_s / 1e6
    );
    println!(
        "  memory           {} KiB simulated GPU memory at peak; process peak {}",
        s.memory_bytes_peak >> 10,
        s.process_rss_bytes_peak
            .map_or("unknown".to_string(), |b| format!("{} MiB", b >> 20))
    );
    if let Some(curve) = &s.curve {
        println!("  {:>12}  {:>10}", "bytes", "GB/s");
        for p in curve {
            println!("  {:>12}  {:>10.2}", p.bytes, p.gbps);
        }
        if let Some(m) = s.modelled_gbps {
            println!("  modelled route bandwidth {m:.2} GB/s");
        }
    }
    if let Some(path) = trace {
        println!(
            "  trace written to {} (open in https://ui.perfetto.dev)",
            path.display()
        );
    }
    for f in &s.failures {
        println!("  failure: {f}");
    }
    if !s.ok {
        println!("  rerun with --seed {} to reproduce", s.seed);
    }
}

/// The most memory this process held at once (Linux `VmHWM`), if the system says.
fn process_rss_bytes_peak() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A spinner on standard error while a run is in progress, for interactive text use only.
fn progress(args: &RunArgs, workload: &Workload, n_pes: u32) -> Option<ProgressBar> {
    if args.json || !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return None;
    }
    let spinner = ProgressBar::new_spinner();
    spinner.set_style(ProgressStyle::with_template("{spinner} {msg} [{elapsed}]").ok()?);
    spinner.set_message(format!("simulating {} on {n_pes} PEs", workload.name));
    spinner.enable_steady_tick(Duration::from_millis(100));
    Some(spinner)
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
