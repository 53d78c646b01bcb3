//! `rshmem run`: a built-in workload on the simulator, checked, with a report.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use hw::{Launcher, Semantics};
use indicatif::{ProgressBar, ProgressStyle};
use sim::{Fault, FaultPlan, Machine, Sim};

use crate::launch::{self, LaunchArgs};
use crate::run_workload::{Summary, run_workload};
use crate::sim_program::{self, SimRequest};
use crate::workloads::{self, Workload};

pub(crate) const AFTER_HELP: &str = "Examples:
  rshmem run ring --pes 8 --topology hgx8 --seed 1
  rshmem run put-bw --pes 2 --topology h200x2 --json
  rshmem run alltoall --pes 1024 --topology ib-128 --trace trace.json

The exit status is 0 when every PE's check passed, 1 when a check failed, the run
deadlocked or a PE crashed, and 2 for bad arguments. --trace writes Chrome trace-event
JSON: open it in https://ui.perfetto.dev or chrome://tracing (one track per PE and per
link direction).

Faults (--faults SPEC; docs/faults.md): items separated by commas, each part may be
`random` or left out (drawn from the seed, so the seed still replays the run):
  slow-pe=PE:Fx          PE's own time (issue, fences, polls, compute) takes F times as long
  link=LINKS:SCALE       SCALE is Fx (speed: bandwidth x F, latency / F), bw=Fx or lat=Fx
  stall=LINKS:FROM..TO   the links carry nothing from FROM to TO (simulated time)
  crash=PE@TIME          PE stops for good at TIME; the report names it and every wait
LINKS is all, a link kind (nvlink, pcie, ib), a node kind (nvswitch, nic, ...), a node
name (node0.nic2; see `rshmem topo`), peN (PE N's GPU), or A-B for the links between two
of those. Times: 50us, 1.5ms, 200ns. Random times fall in the 100 us after start-up.
  rshmem run alltoall --topology ib-2 --seed 3 --faults 'slow-pe=3:4x, link=nvlink:0.25x'
  rshmem run ring --seed 1 --faults 'stall=pe2-nvswitch:10us..60us, crash=2@50us'
  rshmem run reduce --topology ib-2 --seed 9 --faults crash=random

Launcher mode (-n N): start N processes of PROGRAM on this machine instead of simulating.
  rshmem run -n 2 ./target/release/examples/hello
  rshmem run -n 4 --timeout-s 60 my-prog --size 1m
Every argument after PROGRAM is PROGRAM's (put -- before PROGRAM if it starts with -). Each
rank gets RSHMEM_RANK, RSHMEM_N_RANKS and RSHMEM_BOOTSTRAP_SOCKET (the bootstrap socket). When a
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
    /// deepep-ll, deepep-normal, put-bw, msg-rate, flag-nofence or flag-fence. With -n: the
    /// program to start, a path or a name looked up in PATH.
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
    /// Inject faults: slow PEs, slow or stalled links, crashed PEs (see below and
    /// docs/faults.md), or `none`.
    #[arg(long, value_name = "SPEC")]
    faults: Option<FaultPlan>,
    #[command(flatten)]
    broken: crate::cli::BreakRule,
    /// The MoE layer of the deepep-* workloads, as tokens=N,hidden=BYTES,topk=K,experts=E
    /// (each optional; default tokens=16,hidden=64,topk=8 and two experts per PE; DeepEP's
    /// low-latency benchmark is tokens=128,hidden=7168,topk=8,experts=256, its normal
    /// kernels' tokens=4096 of the same).
    #[arg(long, value_name = "SHAPE")]
    moe: Option<workloads::MoeShape>,
    /// Puts of at least SIZE bytes (k, m, g suffixes) carry only their size, not their
    /// bytes: no copy and no memory for them. A read of what such a put wrote stops the run
    /// with an error, so only for programs that never read back their large puts (every
    /// built-in workload checks what it received, and fails). docs/sim-memory.md
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg)]
    drop_payloads_from: Option<u64>,
    /// Split the run into N partitions of whole hosts that run side by side
    /// (docs/sim-parallel.md): another run than without, the same for any --threads. Needs
    /// at least N hosts (an ib-N topology); refused with --faults, --break and --trace.
    #[arg(long, value_name = "N")]
    partitions: Option<u32>,
    /// Threads that run the partitions (default: one per core, at most one per partition),
    /// beside the network's: only how fast.
    #[arg(long, value_name = "N", requires = "partitions")]
    threads: Option<u32>,
}

/// A size with an optional k, m, g or t suffix (powers of 1024), as `rshmem info` reads them.
fn parse_size_arg(raw: &str) -> Result<u64, String> {
    rshmem::config::parse_size(raw)
        .ok_or_else(|| format!("{raw:?} is not a size: digits with an optional k, m, g or t"))
}

pub(crate) fn main(args: RunArgs) -> anyhow::Result<ExitCode> {
    if let Some(n_ranks) = args.launch.np {
        if args.drop_payloads_from.is_some() {
            bail!(
                "--drop-payloads-from applies to the built-in workloads only: a program started \
                 with -n reads its memory through its address, where no read of dropped bytes \
                 could be caught"
            );
        }
        if args.partitions.is_some() {
            bail!(
                "--partitions applies to the built-in workloads only; drop -n to run one \
                 (`rshmem run alltoall --pes 1024 --topology ib-128 --partitions 2`)"
            );
        }
        if args.faults.is_some() || args.broken.rule.is_some() {
            bail!(
                "--faults and --break apply to the built-in workloads only; drop -n to run one \
                 (`rshmem run ring --faults crash=random`)"
            );
        }
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
    let tampering = Tampering {
        plan: args.faults.clone().unwrap_or_default(),
        broken: args.broken.rule,
    };
    let choice = SimChoice {
        machine,
        pes: args.machine.pes,
        seed: args.seed.unwrap_or(0),
        semantics: args.machine.semantics,
        timeline: args.trace.is_some(),
        explore: None,
        drop_payloads_from: args.drop_payloads_from,
        parallel: args.partitions.map(|parts| (parts, args.threads)),
    };
    let sim = tampered_simulator(workload, choice, &tampering)?;
    let n_pes = sim.n_pes();
    let params = workloads::Params {
        moe: args.moe.unwrap_or_default(),
    };
    if args.moe.is_some() && !workload.name.starts_with("deepep") {
        bail!(
            "--moe shapes the deepep-* workloads only, not {}",
            workload.name
        );
    }
    params.moe.check(n_pes).map_err(anyhow::Error::msg)?;
    let config = rshmem::Config::from_env().context("reading the SHMEM_*/RSHMEM_* environment")?;
    if config.info {
        // Why stderr: stdout may be the --json object.
        eprint!("{}", crate::info::table_text(&config));
    }
    let spinner = progress(&args, workload, n_pes);
    let run = run_workload(workload, &params, sim, config, &timing)?;
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    if let Some(path) = &args.trace {
        let timeline = run
            .timeline
            .as_ref()
            .context("the simulator recorded no timeline")?;
        std::fs::write(path, timeline.to_chrome_json(&run.topology))
            .with_context(|| format!("cannot write the trace to {}", path.display()))?;
    }
    let summary = &run.summary;
    if args.json {
        println!("{}", serde_json::to_string(summary)?);
    } else {
        let mut replay = String::new();
        if let Some(plan) = args.faults.as_ref().filter(|p| !p.is_empty()) {
            replay.push_str(&format!(" --faults '{plan}'"));
        }
        if let Some(rule) = args.broken.rule {
            replay.push_str(&format!(" --break {}", rule.name()));
        }
        print_text(summary, args.trace.as_deref(), &replay);
    }
    Ok(if summary.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// What a run changes of its machine on purpose.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tampering {
    /// Injected faults (docs/faults.md): the machine misbehaves as hardware can.
    pub(crate) plan: FaultPlan,
    /// A broken ordering rule (test-only): the simulator is no longer a legal machine.
    pub(crate) broken: Option<Fault>,
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
    /// Puts of at least this many bytes carry only their size
    /// ([`sim::SimBuilder::drop_payloads_from`]).
    pub(crate) drop_payloads_from: Option<u64>,
    /// Partitions, and the threads that run them ([`sim::SimBuilder::partitions`]).
    pub(crate) parallel: Option<(u32, Option<u32>)>,
}

/// Builds the simulator for one run of `workload`.
///
/// # Errors
/// If the topology cannot hold the PEs, or the workload needs more of them.
pub(crate) fn simulator(workload: &Workload, choice: SimChoice) -> anyhow::Result<Sim> {
    tampered_simulator(workload, choice, &Tampering::default())
}

/// Builds the simulator for one run of `workload`, with `tampering`'s faults.
///
/// # Errors
/// As [`simulator`], and if the fault plan names a PE or link the run lacks.
pub(crate) fn tampered_simulator(
    workload: &Workload,
    choice: SimChoice,
    tampering: &Tampering,
) -> anyhow::Result<Sim> {
    let n_pes = choice.pes.unwrap_or(choice.machine.topology.n_gpus());
    if n_pes <= choice.machine.topology.n_gpus() {
        tampering
            .plan
            .check(&choice.machine.topology, n_pes)
            .context("--faults")?;
    }
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
    if let Some(bytes) = choice.drop_payloads_from {
        builder = builder.drop_payloads_from(bytes);
    }
    if let Some(rule) = tampering.broken {
        builder = builder.fault(rule);
    }
    if let Some((parts, threads)) = choice.parallel {
        builder = builder.partitions(parts);
        if let Some(threads) = threads {
            builder = builder.threads(threads);
        }
    }
    let sim = builder.inject(tampering.plan.clone()).build()?;
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

/// `replay` is what the command line needs beside the seed to replay the run.
fn print_text(s: &Summary, trace: Option<&std::path::Path>, replay: &str) {
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
    if let Some(faults) = &s.faults {
        println!("  faults           {faults}");
    }
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
    for phase in &s.phases {
        println!(
            "  phase {:<10} {:.3} us on average, {:.3} us on the slowest PE",
            phase.name,
            phase.mean_ns as f64 / 1e3,
            phase.max_ns as f64 / 1e3
        );
    }
    for note in &s.notes {
        println!("  note: {note}");
    }
    for f in &s.failures {
        println!("  failure: {f}");
    }
    if !s.ok {
        println!("  rerun with --seed {}{replay} to reproduce", s.seed);
    }
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
