//! `litmus-gpu`: runs litmus tests as GPU kernels, with or without stress, each test's PEs on a
//! seeded random choice of the machine's GPUs, and reports per test the GPUs, the outcomes
//! seen, the weak outcomes the model allows that appeared, and any outcome the model forbids
//! (docs/litmus-on-gpu.md).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Parser, ValueEnum};
use litmus::{
    GpuPlacement, ScError, StressOptions, TableLine, Tally, UNDEFINED, catalogue_dir,
    kernel_source, load_paths, placed_gpus, run_on_gpu_kernel, run_seed, run_stressed_on_gpu,
    sc_outcomes, short_of, show_placements, split_executions, stress_kernel_source, table,
};
use model::litmus::{Config, Litmus, Outcome};
use model::om::allowed_outcomes;

/// How the tests run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Stress {
    /// Many instances a launch, random placement of threads and words, random spins, and
    /// memory stress from the other threads.
    On,
    /// As `on`, without memory stress or pre-stress: placement and timing alone.
    Placement,
    /// The plain kernel: one thread per PE, one instance at a time between barriers.
    Off,
}

/// Which GPUs a test's PEs run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Placement {
    /// Distinct GPUs drawn at random from all the machine's, in random order, from the test's
    /// seed: every GPU and link carries tests.
    Random,
    /// PE i on GPU i (i mod n when PEs outnumber GPUs) for every test, the backend's default.
    Fixed,
}

impl From<Placement> for GpuPlacement {
    fn from(p: Placement) -> Self {
        match p {
            Placement::Random => GpuPlacement::Random,
            Placement::Fixed => GpuPlacement::Fixed,
        }
    }
}

/// Run litmus tests as GPU kernels of the device-side API, with stress, across this machine's
/// GPUs (PEs share a GPU when there are fewer), and report each test's outcomes against the
/// model's `nv-nvl` verdict and sequential consistency.
#[derive(Parser, Debug)]
#[command(name = "litmus-gpu", version, after_help = AFTER_HELP)]
struct Args {
    /// Litmus files or folders (default: the catalogue, or $RSHMEM_LITMUS_DIR).
    paths: Vec<PathBuf>,
    /// Executions per test.
    #[arg(long, default_value_t = 100_000)]
    executions: u64,
    /// How the tests run: on, placement or off.
    #[arg(long, value_enum, default_value_t = Stress::On)]
    stress: Stress,
    /// Instances of a test per launch (stress on or placement).
    #[arg(long, default_value_t = StressOptions::default().instances)]
    instances: u32,
    /// No launch of a test starts after this many seconds (stress on or placement), 0 for no
    /// limit; the row shows the executions done and the summary names the tests cut short.
    #[arg(long, default_value_t = 4.0)]
    time_box_s: f64,
    /// Which GPUs each test's PEs run on: random (seeded, on every GPU of the machine) or fixed
    /// (PE i on GPU i).
    #[arg(long, value_enum, default_value_t = Placement::Random)]
    gpu_placement: Placement,
    /// Placements per test: its executions (and time box) are divided among this many runs,
    /// each on GPUs of its own.
    #[arg(long, default_value_t = 1)]
    gpu_placements: u32,
    /// The seed of the first test; test k uses seed + k.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also write the markdown table here, rewritten after every test.
    #[arg(long)]
    table: Option<PathBuf>,
}

impl Args {
    /// A test's time box, none for `--time-box-s 0`.
    fn time_box(&self) -> Option<Duration> {
        (self.time_box_s > 0.0).then(|| Duration::from_secs_f64(self.time_box_s))
    }
}

const AFTER_HELP: &str = "\
Only tests with an `expect nv-nvl` line run: one host's GPUs are NVLink peers.
An outcome is weak when the model allows it and no sequentially consistent interleaving of
the programs gives it. A forbidden outcome fails the run (exit status 1); so does a test that
could not run. With --gpu-placement random (the default) each test's PEs run on distinct GPUs
drawn from the test's seed, so a seed replays the placement; the table's GPUs column gives, per
run, the GPU of PE 0, PE 1, ... (PEs wrap around the list when they outnumber the GPUs). A test
holding an instruction the GPU kernels (or the SC enumerator) do not know
is listed as not on GPU and skipped; a test with undefined behaviour (an `expect ... undefined`
line) is listed as skipped: no outcome of it is right or wrong.

Example: litmus-gpu --executions 100000 --stress on --table litmus-stress.md
Every test to the full count, across every GPU: litmus-gpu --time-box-s 0 --gpu-placements 4";

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("litmus-gpu: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// A test with what the model allows and what SC gives.
struct Planned {
    test: Litmus,
    allowed: BTreeSet<Outcome>,
    sc: BTreeSet<Outcome>,
}

/// Why a test does not run.
enum Skip {
    /// It holds an instruction the kernels or the SC enumerator do not know.
    NotOnGpu(String),
    /// It has undefined behaviour.
    Undefined,
}

/// A test that does not run, and why.
struct NotRun {
    name: String,
    n_pes: u32,
    skip: Skip,
}

/// `test` ready to run, or why it does not run.
///
/// # Errors
/// If the model fails on a test the kernels know.
/// Why a test that may hang is kept off the GPU.
const MAY_HANG: &str = "it may hang (an `expect ... hangs` line): a wait or spin that is never \
                        satisfied traps the kernel, which ends every later test of the run";

fn plan(test: Litmus, stress: Stress) -> anyhow::Result<Result<Planned, NotRun>> {
    let not_run = |test: &Litmus, skip: Skip| {
        Ok(Err(NotRun {
            name: test.name.clone(),
            n_pes: test.n_pes,
            skip,
        }))
    };
    // A wait or spin that is never satisfied traps the kernel after its timeout, and the trap
    // leaves the context unusable for every later test of the process.
    if test.expect.iter().any(|e| e.hangs) {
        return not_run(&test, Skip::NotOnGpu(MAY_HANG.to_string()));
    }
    // The SC enumerator first: it is what refuses a test with undefined behaviour.
    let sc = match sc_outcomes(&test) {
        Ok(sc) => sc,
        Err(ScError::Undefined { .. }) => return not_run(&test, Skip::Undefined),
        Err(e @ ScError::Unknown { .. }) => return not_run(&test, Skip::NotOnGpu(e.to_string())),
        Err(e) => return Err(e.into()),
    };
    let kernel = match stress {
        Stress::Off => kernel_source(&test).map(drop),
        Stress::On | Stress::Placement => stress_kernel_source(&test).map(drop),
    };
    if let Err(e) = kernel {
        return not_run(&test, Skip::NotOnGpu(e.to_string()));
    }
    let allowed = allowed_outcomes(&test, &Config::NV_NVL)
        .with_context(|| format!("{}: the model", test.name))?
        .outcomes;
    Ok(Ok(Planned { test, allowed, sc }))
}

fn run(args: &Args) -> anyhow::Result<()> {
    if args.executions == 0 {
        bail!("--executions must be at least 1");
    }
    if !(args.time_box_s >= 0.0 && args.time_box_s.is_finite()) {
        bail!("--time-box-s must be a number of seconds, 0 for no limit");
    }
    if args.gpu_placements == 0 {
        bail!("--gpu-placements must be at least 1");
    }
    let machine_gpus = hw::cuda::probe()
        .context("litmus-gpu runs on the CUDA backend, which cannot run here")?
        .gpus
        .len() as u32;
    let paths = if args.paths.is_empty() {
        vec![catalogue_dir()]
    } else {
        args.paths.clone()
    };
    let tests: Vec<Litmus> = load_paths(&paths)
        .context("loading the litmus tests")?
        .into_iter()
        .map(|file| file.test)
        .filter(|test| test.expect.iter().any(|e| e.config == Config::NV_NVL))
        .collect();
    if tests.is_empty() {
        bail!("no test with an `expect nv-nvl` line under {paths:?}");
    }
    let planned: Vec<Result<Planned, NotRun>> = tests
        .into_iter()
        .map(|test| plan(test, args.stress))
        .collect::<anyhow::Result<_>>()?;
    let options = StressOptions {
        instances: args.instances,
        memory_stress: args.stress == Stress::On,
        ..StressOptions::default()
    };
    let started = Instant::now();
    let mut lines = Vec::new();
    for (k, p) in planned.iter().enumerate() {
        let test_started = Instant::now();
        let line = match p {
            Ok(p) => run_one(args, &options, machine_gpus, p, args.seed + k as u64),
            Err(n) => match &n.skip {
                Skip::NotOnGpu(reason) => TableLine::NotOnGpu {
                    name: n.name.clone(),
                    n_pes: n.n_pes,
                    reason: reason.clone(),
                },
                Skip::Undefined => TableLine::Undefined {
                    name: n.name.clone(),
                    n_pes: n.n_pes,
                },
            },
        };
        let name = match p {
            Ok(p) => &p.test.name,
            Err(n) => &n.name,
        };
        eprintln!(
            "[{}/{}] {name}: {} ({:.1} s)",
            k + 1,
            planned.len(),
            progress(&line),
            test_started.elapsed().as_secs_f64()
        );
        lines.push(line);
        if let Some(path) = &args.table {
            let text = document(args, machine_gpus, &lines, started.elapsed());
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    let text = document(args, machine_gpus, &lines, started.elapsed());
    print!("{text}");
    let forbidden: Vec<String> = lines
        .iter()
        .filter_map(|l| match l {
            TableLine::Ran(t) if !t.forbidden().is_empty() => Some(t.test.name.clone()),
            _ => None,
        })
        .collect();
    let failed = lines
        .iter()
        .filter(|l| matches!(l, TableLine::Failed { .. }))
        .count();
    if !forbidden.is_empty() {
        bail!(
            "outcomes the model forbids appeared in {} (seed {})",
            forbidden.join(", "),
            args.seed
        );
    }
    if failed > 0 {
        bail!("{failed} tests did not run; the table says why");
    }
    Ok(())
}

/// Runs one planned test under `args`, its executions and time box divided among its
/// placements (run `r` on `placed_gpus(.., seed, r)`, stressed from `run_seed(seed, r)`), and
/// tallies it.
fn run_one<'a>(
    args: &Args,
    options: &StressOptions,
    machine_gpus: u32,
    p: &'a Planned,
    seed: u64,
) -> TableLine<'a> {
    let runs = split_executions(args.executions, args.gpu_placements);
    let time_box = match args.time_box() {
        None => Duration::MAX,
        Some(t) => t / runs.len() as u32,
    };
    let mut counts = BTreeMap::new();
    let mut gpus = Vec::new();
    for (run, executions) in (0..).zip(runs) {
        let placed = placed_gpus(
            args.gpu_placement.into(),
            p.test.n_pes,
            machine_gpus,
            seed,
            run,
        );
        let seed = run_seed(seed, run);
        let result = match args.stress {
            Stress::Off => u32::try_from(executions)
                .context("--executions with --stress off must fit 32 bits")
                .and_then(|n| Ok(run_on_gpu_kernel(&p.test, n, seed, Some(&placed))?)),
            Stress::On | Stress::Placement => {
                run_stressed_on_gpu(&p.test, options, executions, seed, time_box, Some(&placed))
                    .map(|run| run.counts)
                    .map_err(anyhow::Error::from)
            }
        };
        gpus.push(placed);
        match result {
            Ok(run_counts) => {
                for (outcome, n) in run_counts {
                    *counts.entry(outcome).or_default() += n;
                }
            }
            Err(e) => {
                return TableLine::Failed {
                    name: p.test.name.clone(),
                    n_pes: p.test.n_pes,
                    gpus,
                    error: format!("{e:#}"),
                };
            }
        }
    }
    TableLine::Ran(Tally {
        test: &p.test,
        gpus,
        counts,
        allowed: p.allowed.clone(),
        sc: p.sc.clone(),
    })
}

/// One test's progress line.
fn progress(line: &TableLine) -> String {
    match line {
        TableLine::Ran(t) => format!(
            "on GPUs {}, {} executions, weak {}/{}, forbidden {}",
            show_placements(&t.gpus),
            t.executions(),
            t.weak_seen().len(),
            t.weak().len(),
            t.forbidden().len()
        ),
        TableLine::Failed { error, .. } => format!("did not run: {error}"),
        TableLine::NotOnGpu { reason, .. } => format!("not on GPU: {reason}"),
        TableLine::Undefined { .. } => UNDEFINED.into(),
    }
}

/// The table under lines that say how it was made and which tests stopped short of the count.
fn document(args: &Args, machine_gpus: u32, lines: &[TableLine], elapsed: Duration) -> String {
    let how = match args.stress {
        Stress::Off => "stress off (the plain kernel: one thread per PE, barrier-aligned)".into(),
        Stress::On | Stress::Placement => format!(
            "stress {} ({} instances a launch, {})",
            if args.stress == Stress::On {
                "on"
            } else {
                "placement (no memory stress)"
            },
            args.instances,
            match args.time_box() {
                None => "no time box".to_string(),
                Some(_) => format!("time box {} s a test", args.time_box_s),
            }
        ),
    };
    let gpus = match args.gpu_placement {
        Placement::Random => format!(
            "GPU placement random over the machine's {machine_gpus} GPUs, {} a test",
            args.gpu_placements
        ),
        Placement::Fixed => format!("GPU placement fixed (PE i on GPU i mod {machine_gpus})"),
    };
    let short = short_of(lines, args.executions);
    let reached = if short.is_empty() {
        format!(
            "Every test that ran reached the {} executions asked.",
            args.executions
        )
    } else {
        let named: Vec<String> = short.iter().map(|(t, n)| format!("{t} ({n})")).collect();
        format!(
            "**{} tests stopped short of the {} executions asked** at the time box \
             (`--time-box-s 0` for none): {}.",
            short.len(),
            args.executions,
            named.join(", ")
        )
    };
    format!(
        "{} tests, {how}, {gpus}, {} executions asked per test, seed {}; {:.0} s in all.\n\
         {reached}\n\n{}",
        lines.len(),
        args.executions,
        args.seed,
        elapsed.as_secs_f64(),
        table(lines)
    )
}
