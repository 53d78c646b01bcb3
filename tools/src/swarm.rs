//! `rshmem swarm`: many seeded runs of the built-in workloads over topologies and fault plans,
//! each judged, with the `rshmem run` command that replays every failure.
//!
//! A run passes when every PE's check passes and nothing failed. A run whose plan crashed a PE
//! is expected to fail, and passes when it failed the expected way: the crashed PE's result is
//! its crash, the report names it (and a deadlock report lists it as failed), no PE panicked
//! and no PE computed a wrong result. A crash that came after its PE finished leaves an
//! ordinary run, judged as one.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use sim::{FaultPlan, Machine};

use crate::in_order::{run_in_order, threads};
use crate::run::{self, SimChoice, Tampering};
use crate::run_workload::{PeVerdict, WorkloadRun, run_workload};
use crate::workloads::Params;
use crate::workloads::{self, Workload};

pub(crate) const AFTER_HELP: &str = "Examples:
  rshmem swarm
  rshmem swarm --seeds 100 --workloads all --topologies hgx8,ib-2 \\
      --faults 'none;slow-pe=random;crash=random'
  rshmem swarm --workloads ring,alltoall --faults 'stall=pe2-nvswitch:10us..60us' --seeds 20

Every combination of seed, workload, topology and fault plan is one `rshmem run`; a progress
bar on stderr counts them. Each failure is printed with the command that replays it. A plan
that crashes a PE passes when the run ends in the expected report: the crashed PE named, no
wrong result, no panic. The exit status is 0 when every run passed, 1 when one failed, 2 for
bad arguments. The default (5 plans x 11 workloads x 2 topologies x 64 seeds, 7040 runs) takes
about a minute on two busy cores (30 s of CPU). Fault plans: `rshmem run --help` and
docs/faults.md.";

/// The plans of the default swarm: none, then one of each kind, drawn from the seed.
const DEFAULT_PLANS: &str = "none;slow-pe=random;link=random;stall=random;crash=random";

#[derive(Args, Debug)]
pub(crate) struct SwarmArgs {
    /// Seeds per combination of workload, topology and plan.
    #[arg(long, default_value_t = 64)]
    seeds: u64,
    /// The first seed.
    #[arg(long, default_value_t = 0)]
    first_seed: u64,
    /// Workloads, separated by commas, or `all`: every built-in workload but put-bw (a
    /// benchmark of seconds a run; name it to include it).
    #[arg(long, default_value = "all")]
    workloads: String,
    /// Topologies, separated by commas: presets (hgx8, h200x2, ib-N) or TOML files.
    #[arg(long, default_value = "hgx8,ib-2")]
    topologies: String,
    /// Fault plans, separated by semicolons (each as `rshmem run --faults` takes it; `none`
    /// for none).
    #[arg(long, default_value = DEFAULT_PLANS)]
    faults: String,
    /// How many PEs (default: one per GPU of each topology).
    #[arg(long)]
    pes: Option<u32>,
    /// Runs at once (default: one per CPU).
    #[arg(long)]
    jobs: Option<usize>,
    #[command(flatten)]
    broken: crate::cli::BreakRule,
}

/// One fault plan as written, and parsed.
struct Plan {
    written: String,
    plan: FaultPlan,
}

/// One run of the swarm.
struct Job<'a> {
    workload: &'static Workload,
    topology: &'a str,
    machine: &'a Machine,
    plan: &'a Plan,
    seed: u64,
}

/// What became of one run.
enum Verdict {
    Passed,
    /// A crash ended the run with the expected report.
    CrashReported,
    /// The plan's crash came after its PE finished.
    CrashTooLate,
    Failed(String),
}

pub(crate) fn main(args: SwarmArgs) -> anyhow::Result<ExitCode> {
    let workloads = select_workloads(&args.workloads)?;
    let topologies: Vec<(&str, Machine)> = split_list(&args.topologies, ',')
        .map(|name| Ok((name, sim::topology::load(name)?)))
        .collect::<anyhow::Result<_>>()?;
    let plans: Vec<Plan> = split_list(&args.faults, ';')
        .map(|written| {
            let plan = written
                .parse::<FaultPlan>()
                .with_context(|| format!("--faults: plan {written:?}"))?;
            Ok(Plan {
                written: written.to_string(),
                plan,
            })
        })
        .collect::<anyhow::Result<_>>()?;
    if workloads.is_empty() || topologies.is_empty() || plans.is_empty() || args.seeds == 0 {
        bail!("nothing to run: give at least one workload, topology, plan and seed");
    }
    let config = rshmem::Config::from_env().context("reading the SHMEM_*/RSHMEM_* environment")?;
    let seeds = args.first_seed..args.first_seed.saturating_add(args.seeds);
    let mut jobs = Vec::new();
    for seed in seeds {
        for (topology, machine) in &topologies {
            for &workload in &workloads {
                for plan in &plans {
                    jobs.push(Job {
                        workload,
                        topology,
                        machine,
                        plan,
                        seed,
                    });
                }
            }
        }
    }
    // Check every plan against every machine before the first run, so a typo fails at once.
    for (topology, machine) in &topologies {
        let n_pes = args.pes.unwrap_or(machine.topology.n_gpus());
        for plan in &plans {
            plan.plan
                .check(&machine.topology, n_pes)
                .with_context(|| format!("--faults: plan {:?} on {topology}", plan.written))?;
        }
    }
    let bar = progress(jobs.len() as u64);
    let wall = Instant::now();
    let verdicts = run_all(&jobs, &args, &config, &bar);
    bar.finish_and_clear();
    let wall_s = wall.elapsed().as_secs_f64();
    let mut failed = 0;
    let (mut crashed, mut too_late) = (0, 0);
    for (job, verdict) in jobs.iter().zip(&verdicts) {
        match verdict {
            Verdict::Passed => {}
            Verdict::CrashReported => crashed += 1,
            Verdict::CrashTooLate => too_late += 1,
            Verdict::Failed(why) => {
                failed += 1;
                println!(
                    "FAILED {} on {}, seed {}, faults {:?}",
                    job.workload.name, job.topology, job.seed, job.plan.written
                );
                for line in why.lines() {
                    println!("  {line}");
                }
                println!("  replay: {}", replay_command(job, &args));
            }
        }
    }
    println!(
        "swarm: {} runs ({} workloads x {} topologies x {} plans x {} seeds) in {wall_s:.1} s: \
         {failed} failed; {crashed} ended in the expected crash report, {too_late} had their \
         crash after the PE finished",
        jobs.len(),
        workloads.len(),
        topologies.len(),
        plans.len(),
        args.seeds
    );
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn split_list(list: &str, sep: char) -> impl Iterator<Item = &str> {
    list.split(sep).map(str::trim).filter(|s| !s.is_empty())
}

fn select_workloads(list: &str) -> anyhow::Result<Vec<&'static Workload>> {
    if list.trim() == "all" {
        return Ok(workloads::WORKLOADS
            .iter()
            .filter(|w| w.name != "put-bw")
            .collect());
    }
    split_list(list, ',')
        .map(|name| workloads::lookup(name).map_err(anyhow::Error::from))
        .collect()
}

/// Runs every job on `--jobs` threads, taking them in order; the verdicts are in job order.
fn run_all(
    jobs: &[Job<'_>],
    args: &SwarmArgs,
    config: &rshmem::Config,
    bar: &ProgressBar,
) -> Vec<Verdict> {
    let failed = AtomicUsize::new(0);
    // A PE's panic is caught and judged; the default hook would print each one over the bar.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let verdicts = run_in_order(
        jobs,
        threads(args.jobs),
        |job| run_one(job, args, config.clone()),
        |_, verdict| {
            if matches!(verdict, Verdict::Failed(_)) {
                failed.fetch_add(1, Ordering::Relaxed);
            }
            bar.set_message(format!("{} failed", failed.load(Ordering::Relaxed)));
            bar.inc(1);
        },
    );
    std::panic::set_hook(hook);
    verdicts
}

fn run_one(job: &Job<'_>, args: &SwarmArgs, config: rshmem::Config) -> Verdict {
    let tampering = Tampering {
        plan: job.plan.plan.clone(),
        broken: args.broken.rule,
    };
    let choice = SimChoice {
        machine: job.machine.clone(),
        pes: args.pes,
        seed: job.seed,
        semantics: hw::Semantics::default(),
        timeline: false,
        explore: None,
        drop_payloads_from: None,
        parallel: None,
    };
    let timing = job.machine.timing;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let sim = run::tampered_simulator(job.workload, choice, &tampering)?;
        run_workload(job.workload, &Params::default(), sim, config, &timing)
    }));
    match outcome {
        Ok(Ok(run)) => judge(&run),
        Ok(Err(err)) => Verdict::Failed(format!("the run could not start: {err:#}")),
        Err(panic) => Verdict::Failed(format!(
            "the simulator panicked: {}",
            panic_text(panic.as_ref())
        )),
    }
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_string()
    }
}

/// Judges one run (see the module's docs).
fn judge(run: &WorkloadRun) -> Verdict {
    let summary = &run.summary;
    let crashes = run.injection.iter().flat_map(|i| &i.crashes);
    let planned_crash = crashes.clone().next().is_some();
    let crashed: Vec<u32> = crashes.filter(|c| c.happened).map(|c| c.pe).collect();
    if crashed.is_empty() {
        return if summary.ok {
            if planned_crash {
                Verdict::CrashTooLate
            } else {
                Verdict::Passed
            }
        } else {
            Verdict::Failed(summary.failures.join("\n"))
        };
    }
    let mut problems = Vec::new();
    for (pe, verdict) in run.verdicts.iter().enumerate() {
        let pe = pe as u32;
        match verdict {
            PeVerdict::WrongResult => problems.push(format!("PE {pe} computed a wrong result")),
            PeVerdict::Panicked => problems.push(format!("PE {pe} panicked")),
            PeVerdict::Crashed if !crashed.contains(&pe) => {
                problems.push(format!(
                    "PE {pe} is reported crashed, but no crash was drawn for it"
                ));
            }
            PeVerdict::Passed | PeVerdict::Failed | PeVerdict::Crashed => {}
        }
    }
    for &pe in &crashed {
        if run.verdicts.get(pe as usize) != Some(&PeVerdict::Crashed) {
            problems.push(format!("PE {pe} crashed, but its result is not the crash"));
        }
        let named = format!("PE {pe} crashed at");
        if !summary.failures.iter().any(|f| f.starts_with(&named)) {
            problems.push(format!("the report does not name PE {pe}, which crashed"));
        }
    }
    // A deadlock that follows a crash lists the crashed PE as failed, not live; one that lists
    // no crashed PE came before every crash, and the workload deadlocked on its own. (A later
    // crash may come after the report, as the PEs go on to their teardown.)
    if let Some(failure) = &run.failure
        && failure.starts_with("deadlock")
        && !crashed
            .iter()
            .any(|pe| failure.contains(&format!("PE {pe} failed: crashed at")))
    {
        problems.push("the deadlock report lists no crashed PE as failed".to_string());
    }
    if summary.ok {
        problems.push("the run reports success though a PE crashed".to_string());
    }
    if problems.is_empty() {
        Verdict::CrashReported
    } else {
        problems.push("the run's report:".to_string());
        problems.extend(summary.failures.iter().cloned());
        Verdict::Failed(problems.join("\n"))
    }
}

/// The `rshmem run` command that replays `job`.
fn replay_command(job: &Job<'_>, args: &SwarmArgs) -> String {
    let mut command = format!(
        "rshmem run {} --topology {} --seed {}",
        job.workload.name, job.topology, job.seed
    );
    if let Some(n) = args.pes {
        command.push_str(&format!(" --pes {n}"));
    }
    if !job.plan.plan.is_empty() {
        command.push_str(&format!(" --faults '{}'", job.plan.written));
    }
    if let Some(rule) = args.broken.rule {
        command.push_str(&format!(" --break {}", rule.name()));
    }
    command
}

/// A progress bar on standard error (hidden when it is not a terminal).
fn progress(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template(
        "swarm {bar:30} {pos}/{len} runs, {msg} [{elapsed}, eta {eta}]",
    ) {
        bar.set_style(style);
    }
    bar.set_message("0 failed");
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One real run of `workload` on hgx8 under `spec`.
    fn real_run(workload: &str, spec: &str) -> WorkloadRun {
        let workload = workloads::lookup(workload).unwrap();
        let machine = sim::topology::load("hgx8").unwrap();
        let timing = machine.timing;
        let choice = SimChoice {
            machine,
            pes: None,
            seed: 1,
            semantics: hw::Semantics::default(),
            timeline: false,
            explore: None,
            drop_payloads_from: None,
            parallel: None,
        };
        let tampering = Tampering {
            plan: spec.parse().unwrap(),
            broken: None,
        };
        let sim = run::tampered_simulator(workload, choice, &tampering).unwrap();
        run_workload(
            workload,
            &Params::default(),
            sim,
            rshmem::Config::default(),
            &timing,
        )
        .unwrap()
    }

    fn failed(verdict: Verdict) -> String {
        match verdict {
            Verdict::Failed(why) => why,
            _ => panic!("expected a failure"),
        }
    }

    #[test]
    fn a_crash_with_the_expected_report_passes_and_any_other_ending_fails() {
        assert!(matches!(
            judge(&real_run("ring", "crash=2@30us")),
            Verdict::CrashReported
        ));
        let mut unnamed = real_run("ring", "crash=2@30us");
        unnamed
            .summary
            .failures
            .retain(|f| !f.starts_with("PE 2 crashed"));
        let why = failed(judge(&unnamed));
        assert!(
            why.contains("the report does not name PE 2, which crashed"),
            "{why}"
        );
        let mut wrong = real_run("ring", "crash=2@30us");
        wrong.verdicts[5] = PeVerdict::WrongResult;
        assert!(failed(judge(&wrong)).contains("PE 5 computed a wrong result"));
        let mut panicked = real_run("ring", "crash=2@30us");
        panicked.verdicts[0] = PeVerdict::Panicked;
        assert!(failed(judge(&panicked)).contains("PE 0 panicked"));
        let mut early = real_run("ring", "crash=2@30us");
        let report = early.failure.take().unwrap();
        early.failure = Some(report.replace("PE 2 failed: crashed", "PE 2 waits for"));
        assert!(failed(judge(&early)).contains("the deadlock report lists no crashed PE"));
        let mut alive = real_run("ring", "crash=2@30us");
        alive.verdicts[2] = PeVerdict::Passed;
        assert!(failed(judge(&alive)).contains("PE 2 crashed, but its result is not the crash"));
    }

    #[test]
    fn runs_without_a_crash_pass_only_when_every_check_passes() {
        assert!(matches!(judge(&real_run("ring", "none")), Verdict::Passed));
        assert!(matches!(
            judge(&real_run("ring", "crash=2@10ms")),
            Verdict::CrashTooLate
        ));
        let mut wrong = real_run("ring", "slow-pe=1:3x");
        wrong.summary.ok = false;
        wrong
            .summary
            .failures
            .push("PE 1: check failed: slot 3".into());
        assert!(failed(judge(&wrong)).contains("PE 1: check failed: slot 3"));
    }
}
