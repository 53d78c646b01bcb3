//! `rshmem check`: a built-in workload under many seeds on the simulator wrapped in the race
//! detector (`rshmem::check`), with each distinct race reported once.

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use rshmem::check::{Race, RaceAccess, run_checked};
use serde::Serialize;

use crate::in_order::{run_in_order, threads};
use crate::run::{MachineArgs, SimChoice, simulator};
use crate::workloads::{self, Workload};

pub(crate) const AFTER_HELP: &str = "Examples:
  rshmem check flag-nofence
  rshmem check ring --runs 100 --pes 8 --topology hgx8
  rshmem check reduce --semantics openshmem-1.5 --json
  rshmem check flag-nofence --schedule delays --depth 2

Run i uses seed FIRST+i: for the simulator's random timing, or with --schedule delays to
pick which --depth events are late (PCT-style; a first run with everything on time counts
the events). Two accesses by different PEs to the same bytes race when at least
one writes, they are not both atomics, and no rule (fence, quiet, wait, barrier, ...) orders
them; docs/check.md lists the rules. Each race is printed once, with the first seed that
showed it and the command that replays that run. The exit status is 0 when no run had a race
or failed its own check, 1 otherwise, and 2 for bad arguments.";

/// Delays a late event may have, in rounds (1 or 2; see `sim::explore`).
pub(crate) const DELAY_ROUNDS: u32 = 3;

#[derive(Args, Debug)]
pub(crate) struct CheckArgs {
    /// The workload (see `rshmem run --help`), or with -n the program (built by `oshcc
    /// -rshmem-check`, so that its own loads and stores are seen).
    #[arg(value_name = "WORKLOAD|PROGRAM")]
    pub(crate) workload: String,
    /// With -n: the program's arguments, passed on as given.
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub(crate) args: Vec<String>,
    /// Check PROGRAM, an OpenSHMEM program, on N simulated PEs (one process per run).
    #[arg(short = 'n', long = "np", value_name = "N", conflicts_with = "pes")]
    pub(crate) np: Option<u32>,
    /// How many runs, each with the next seed.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) runs: u64,
    #[command(flatten)]
    pub(crate) machine: MachineArgs,
    /// The seed of the first run.
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// How runs differ: `seeded` (the simulator's random timing, from the seed) or `delays`
    /// (everything on time except --depth events made late at random positions, PCT-style).
    #[arg(long, default_value = "seeded", value_parser = ["seeded", "delays"])]
    pub(crate) schedule: String,
    /// With --schedule delays: how many events each run makes late.
    #[arg(long, default_value_t = 3)]
    pub(crate) depth: u32,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Runs at once (default: one per CPU; built-in workloads only). Each run is
    /// deterministic on its own thread, so the report is the same with any number.
    #[arg(long, value_name = "N")]
    pub(crate) jobs: Option<usize>,
}

/// One distinct race over all runs.
#[derive(Debug)]
struct Found {
    race: Race,
    /// The first seed that showed it.
    seed: u64,
    /// How many runs showed it.
    runs: u64,
}

#[derive(Serialize, Debug)]
struct Summary {
    workload: String,
    pes: u32,
    topology: String,
    semantics: &'static str,
    /// `seeded`, or `delays(DEPTH)`.
    schedule: String,
    first_seed: u64,
    runs: u64,
    ok: bool,
    races: Vec<RaceJson>,
    failures: Vec<FailureJson>,
}

#[derive(Serialize, Debug)]
struct RaceJson {
    first: AccessJson,
    second: AccessJson,
    conflict_offset: u64,
    seed: u64,
    runs_with_race: u64,
    replay: String,
    /// Why the first is not ordered before the second.
    why: String,
}

#[derive(Serialize, Debug)]
struct AccessJson {
    pe: u32,
    kind: &'static str,
    target: u32,
    offset: u64,
    bytes: u64,
    epoch: u64,
    /// The kernel thread that made it, for races between the threads of a launch.
    #[serde(skip_serializing_if = "Option::is_none")]
    thread: Option<String>,
}

impl AccessJson {
    fn new(access: RaceAccess, epoch: u64) -> AccessJson {
        AccessJson {
            pe: access.pe,
            kind: access.kind.name(),
            target: access.target,
            offset: access.offset,
            bytes: access.len_bytes,
            epoch,
            thread: access.thread.map(|thread| thread.to_string()),
        }
    }
}

#[derive(Serialize, Debug)]
struct FailureJson {
    seed: u64,
    message: String,
}

pub(crate) fn main(args: CheckArgs) -> anyhow::Result<ExitCode> {
    if let Some(n_pes) = args.np {
        if args.jobs.is_some() {
            anyhow::bail!(
                "--jobs runs the built-in workloads' runs side by side; a program's runs (-n) \
                 are processes checked one after another: drop --jobs"
            );
        }
        return crate::check_program::main(&args, n_pes);
    }
    let workload = workloads::lookup(&args.workload)?;
    let machine = sim::topology::load(&args.machine.topology)?;
    let config = rshmem::Config::from_env().context("reading the SHMEM_*/RSHMEM_* environment")?;
    let bar = progress(&args, workload);
    let mut found: BTreeMap<(RaceAccess, RaceAccess), Found> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut n_pes = 0;
    let choice = |seed, explore| SimChoice {
        machine: machine.clone(),
        pes: args.machine.pes,
        seed,
        semantics: args.machine.semantics,
        timeline: false,
        explore,
        drop_payloads_from: None,
        parallel: None,
    };
    // With delays, the on-time run says how many choices there are to make late.
    let n_choices = if args.schedule == "delays" {
        let sim = simulator(workload, choice(0, Some(sim::Explore::default())))?;
        let output = rshmem::run(sim, config.clone(), |sh| {
            workloads::run_on_pe(workload, &workloads::Params::default(), sh)
        })?;
        output.report.choices
    } else {
        0
    };
    let seeds: Vec<u64> = (args.seed..args.seed.saturating_add(args.runs)).collect();
    let runs = run_in_order(
        &seeds,
        threads(args.jobs),
        |&seed| {
            let explore = (args.schedule == "delays").then(|| {
                let prefix = sim::explore::random_delays(seed, n_choices, args.depth, DELAY_ROUNDS);
                sim::Explore {
                    rounds: DELAY_ROUNDS,
                    ..sim::Explore::new(prefix)
                }
            });
            let sim = simulator(workload, choice(seed, explore))?;
            let n_pes = hw::Launcher::n_pes(&sim);
            let (output, races) = run_checked(sim, config.clone(), |sh| {
                workloads::run_on_pe(workload, &workloads::Params::default(), sh)
            })?;
            anyhow::Ok((n_pes, output, races))
        },
        |_, _| bar.inc(1),
    );
    // Folded in seed order, whichever thread ran each.
    for (&seed, run) in seeds.iter().zip(runs) {
        let (pes, output, races) = run?;
        n_pes = pes;
        for race in races {
            found
                .entry(race.site())
                .and_modify(|f| f.runs += 1)
                .or_insert(Found {
                    race,
                    seed,
                    runs: 1,
                });
        }
        for (pe, result) in output.results.into_iter().enumerate() {
            let message = match result {
                Ok(Ok(outcome)) if outcome.ok => continue,
                Ok(Ok(outcome)) => format!("PE {pe}: check failed: {}", outcome.detail),
                Ok(Err(err)) => format!("PE {pe}: {err}"),
                Err(err) => format!("PE {pe}: {err}"),
            };
            failures.push(FailureJson { seed, message });
        }
        if let Some(message) = output.report.failure {
            failures.push(FailureJson { seed, message });
        }
    }
    bar.finish_and_clear();
    // Races in the order of their first seed, then as found.
    let mut found: Vec<Found> = found.into_values().collect();
    found.sort_by_key(|f| f.seed);
    let summary = Summary {
        workload: workload.name.to_string(),
        pes: n_pes,
        topology: args.machine.topology.clone(),
        semantics: args.machine.semantics.name(),
        schedule: if args.schedule == "delays" {
            format!("delays({})", args.depth)
        } else {
            args.schedule.clone()
        },
        first_seed: args.seed,
        runs: args.runs,
        ok: found.is_empty() && failures.is_empty(),
        races: found
            .iter()
            .map(|f| RaceJson {
                first: AccessJson::new(f.race.first, f.race.first_epoch),
                second: AccessJson::new(f.race.second, f.race.second_epoch),
                conflict_offset: f.race.conflict_offset,
                seed: f.seed,
                runs_with_race: f.runs,
                replay: replay(&args, n_pes, f.seed),
                why: f.race.cause.to_string(),
            })
            .collect(),
        failures,
    };
    if args.json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        print_text(&summary);
    }
    Ok(if summary.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The command that repeats the run with `seed`.
fn replay(args: &CheckArgs, n_pes: u32, seed: u64) -> String {
    let delays = if args.schedule == "delays" {
        format!(" --schedule delays --depth {}", args.depth)
    } else {
        String::new()
    };
    format!(
        "rshmem check {} --runs 1 --seed {seed} --pes {n_pes} --topology {} --semantics {}{delays}",
        args.workload,
        args.machine.topology,
        args.machine.semantics.name()
    )
}

fn print_text(s: &Summary) {
    let last_seed = s.first_seed.saturating_add(s.runs - 1);
    let races = match s.races.len() {
        0 => "no races".to_string(),
        1 => "1 race".to_string(),
        n => format!("{n} races"),
    };
    println!(
        "{}: {} {} run{} (seeds {} to {last_seed}) on {} PEs of {} ({}): {races}",
        s.workload,
        s.runs,
        s.schedule,
        if s.runs == 1 { "" } else { "s" },
        s.first_seed,
        s.pes,
        s.topology,
        s.semantics
    );
    for (i, r) in s.races.iter().enumerate() {
        println!(
            "race {} on PE {}'s byte {:#x}, in {} of {} runs, first with seed {}:",
            i + 1,
            r.first.target,
            r.conflict_offset,
            r.runs_with_race,
            s.runs,
            r.seed
        );
        println!("  first:  {}", describe(&r.first));
        println!("  second: {}", describe(&r.second));
        println!("  {}", r.why);
        println!("  replay: {}", r.replay);
    }
    for f in &s.failures {
        println!("failure with seed {}: {}", f.seed, f.message);
    }
}

fn describe(a: &AccessJson) -> String {
    let whose = if a.target == a.pe {
        "its own memory".to_string()
    } else {
        format!("PE {}", a.target)
    };
    let by = a
        .thread
        .as_ref()
        .map_or_else(String::new, |thread| format!(" by {thread}"));
    format!(
        "PE {} {} of {} B at offset {:#x} on {whose}{by} (epoch {})",
        a.pe, a.kind, a.bytes, a.offset, a.epoch
    )
}

/// A progress bar over the runs on standard error, for interactive text use only.
fn progress(args: &CheckArgs, workload: &Workload) -> ProgressBar {
    if args.json || !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(args.runs);
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} runs  {msg} [{elapsed}]")
    {
        bar.set_style(style);
    }
    bar.set_message(format!("checking {}", workload.name));
    bar
}
