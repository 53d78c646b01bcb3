//! `rshmem litmus`: run litmus tests against the model and an exhaustive exploration of the
//! simulator, and print a table (or JSON lines).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use litmus::{Check, LitmusFile, check_all, load_paths, replay};
use model::litmus::{Litmus, Observation, Outcome};
use serde::Serialize;
use sim::Fault;

use crate::in_order::{run_in_order, threads};

pub(crate) const AFTER_HELP: &str = "Examples:
  rshmem litmus tests/litmus/catalogue
  rshmem litmus tests/litmus/catalogue/a2-mp-put-fence-put.litmus --json
  rshmem litmus tests/litmus/catalogue --break fence-ignored
  rshmem litmus tests/litmus/catalogue/f1-sb-put-put.litmus --config nv-ib --replay 1.0.2 --trace sb.json

Each test is checked under every configuration it has an `expect` line for. A check matches
when the outcomes the simulator can produce (every execution, by depth-first search over its
choices) equal the outcomes the model allows, and the condition's observation over them is
the expected one. Executions that block forever are hangs (the PEs blocked and the lines they
are blocked at, column `hangs`): the two sets of hangs must be equal too, and a test whose
executions may hang says `hangs` on its `expect` line. Every simulator outcome and hang comes
with a choice string that replays it.
The exit status is 0 when every check matches, 1 otherwise, 2 for bad files or arguments.
With --replay, one execution is run again from its choice string (the `replay` of an
outcome in --json, or the witness a mismatch prints) and its outcome printed; --trace
writes its timeline as a Chrome/Perfetto trace.
With --break, the simulator runs with a deliberately broken rule; the status is 0 when some
check caught it. The format: docs/litmus-format.md.";

#[derive(Args, Debug)]
pub(crate) struct LitmusArgs {
    /// Litmus files, or folders searched recursively for *.litmus.
    #[arg(required = true, value_name = "PATHS")]
    paths: Vec<PathBuf>,
    /// Print one JSON object per (test, configuration) check instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    broken: crate::cli::BreakRule,
    /// Run the one execution this choice string names (needs one test and --config).
    #[arg(long, value_name = "CHOICES", requires = "config")]
    replay: Option<sim::Choices>,
    /// The configuration to replay under, as the test's `expect` line writes it.
    #[arg(long, value_name = "CONFIG", requires = "replay")]
    config: Option<String>,
    /// With --replay: write the execution's timeline as a Chrome/Perfetto trace.
    #[arg(long, value_name = "FILE", requires = "replay")]
    trace: Option<PathBuf>,
    /// Tests checked at once (default: one per CPU). Each check is exhaustive and alone on
    /// its thread, so the results, their order and the executions counted are the same with
    /// any number; only the wall time and each check's seconds change.
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
}

#[derive(Serialize)]
struct CheckJson<'a> {
    name: &'a str,
    file: String,
    config: String,
    verdict: &'static str,
    expected: String,
    model_derived: bool,
    observed_observation: Option<String>,
    observed: Vec<OutcomeJson>,
    model: Vec<String>,
    model_states: u64,
    /// Ways the simulator's executions blocked forever, each with a replay.
    observed_hangs: Vec<OutcomeJson>,
    /// Ways the model's executions block forever.
    model_hangs: Vec<String>,
    executions: u64,
    seconds: f64,
    problems: &'a [String],
}

#[derive(Serialize)]
struct OutcomeJson {
    outcome: String,
    replay: String,
}

fn observation(o: Option<Observation>) -> String {
    o.map_or("-".into(), |o| format!("{o:?}").to_lowercase())
}

pub(crate) fn main(args: LitmusArgs) -> anyhow::Result<ExitCode> {
    let files = load_paths(&args.paths)?;
    let faults: Vec<Fault> = args.broken.rule.into_iter().collect();
    if let (Some(choices), Some(config)) = (&args.replay, &args.config) {
        let [file] = files.as_slice() else {
            bail!(
                "--replay runs one execution of one test, but the paths name {} tests",
                files.len()
            );
        };
        return replay_one(file, config, &faults, choices, args.trace.as_deref());
    }
    let n_checks: usize = files.iter().map(|f| f.test.expect.len()).sum();
    if n_checks == 0 {
        bail!("none of the tests has an `expect` line, so there is nothing to check");
    }
    let bar = if args.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(n_checks as u64).with_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} checks  {msg}")
                .expect("the template is valid"),
        )
    };
    let checked = run_in_order(
        &files,
        threads(args.jobs),
        |file| check_all(&file.test, &faults),
        |file, checks| {
            bar.set_message(file.test.name.clone());
            bar.inc(checks.len() as u64);
        },
    );
    let results: Vec<(&LitmusFile, Vec<Check>)> = files.iter().zip(checked).collect();
    bar.finish_and_clear();

    let mismatched: Vec<String> = results
        .iter()
        .flat_map(|(f, checks)| {
            checks
                .iter()
                .filter(|c| !c.matches())
                .map(|c| format!("{} [{}]", f.test.name, c.config))
        })
        .collect();
    if args.json {
        for (file, checks) in &results {
            for c in checks {
                println!("{}", serde_json::to_string(&json(file, c))?);
            }
        }
    } else {
        print_table(&results);
    }
    let total_s: f64 = results.iter().flat_map(|(_, c)| c).map(|c| c.seconds).sum();
    if let Some(fault) = args.broken.rule {
        if !args.json {
            println!(
                "broken rule {}: caught by {} of {n_checks} checks{}{}",
                fault.name(),
                mismatched.len(),
                if mismatched.is_empty() { "" } else { ": " },
                mismatched.join(", ")
            );
        }
        return Ok(if mismatched.is_empty() {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        });
    }
    if !args.json {
        println!(
            "{} tests, {n_checks} checks, {} match, {} mismatch, {total_s:.2} s",
            files.len(),
            n_checks - mismatched.len(),
            mismatched.len()
        );
    }
    Ok(if mismatched.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn json<'a>(file: &'a LitmusFile, c: &'a Check) -> CheckJson<'a> {
    let test = &file.test;
    let observables = test.observables();
    let show = |o: &Outcome| test.show_outcome(&observables, o);
    CheckJson {
        name: &test.name,
        file: file.path.display().to_string(),
        config: c.config.to_string(),
        verdict: if c.matches() { "match" } else { "mismatch" },
        expected: observation(Some(c.expected)),
        model_derived: c.model_derived,
        observed_observation: c.sim_observation(test).map(|o| observation(Some(o))),
        observed: c
            .sim
            .outcomes
            .iter()
            .map(|(o, replay)| OutcomeJson {
                outcome: show(o),
                replay: replay.clone(),
            })
            .collect(),
        model: c
            .model
            .as_ref()
            .map(|m| m.iter().map(show).collect())
            .unwrap_or_default(),
        model_states: c.model_states,
        observed_hangs: c
            .sim
            .hangs
            .iter()
            .map(|(h, replay)| OutcomeJson {
                outcome: h.to_string(),
                replay: replay.clone(),
            })
            .collect(),
        model_hangs: c.model_hangs.iter().map(ToString::to_string).collect(),
        executions: c.sim.executions,
        seconds: c.seconds,
        problems: &c.problems,
    }
}

fn print_table(results: &[(&LitmusFile, Vec<Check>)]) {
    let name_w = results
        .iter()
        .map(|(f, _)| f.test.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    println!(
        "{:name_w$}  {:28}  {:15}  {:15}  {:>8}  {:>5}  {:>10}  {:>8}  verdict",
        "test", "config", "expected", "observed", "outcomes", "hangs", "executions", "time"
    );
    for (file, checks) in results {
        let test: &Litmus = &file.test;
        for c in checks {
            let hangs = |h: bool| if h { " hangs" } else { "" };
            let expected = format!(
                "{}{}{}",
                observation(Some(c.expected)),
                hangs(c.expects_hangs),
                if c.model_derived { "*" } else { "" }
            );
            let observed = format!(
                "{}{}",
                observation(c.sim_observation(test)),
                hangs(!c.sim.hangs.is_empty())
            );
            println!(
                "{:name_w$}  {:28}  {:15}  {:15}  {:>8}  {:>5}  {:>10}  {:>6.0}ms  {}",
                test.name,
                c.config.to_string(),
                expected,
                observed,
                c.sim.outcomes.len(),
                c.sim.hangs.len(),
                c.sim.executions,
                c.seconds * 1e3,
                if c.matches() { "match" } else { "MISMATCH" }
            );
            if let Err(undefined @ model::om::ModelError::Undefined(_)) = &c.model
                && c.matches()
            {
                println!("{:name_w$}    - {undefined} (not explored)", "");
            }
            for p in &c.problems {
                println!("{:name_w$}    - {p}", "");
            }
        }
    }
    println!("(* = verdict derived from the implementation reading, marked `(model)`)");
}

/// `--replay`: runs one execution and prints its outcome and whether the model allows it.
fn replay_one(
    file: &LitmusFile,
    config_name: &str,
    faults: &[Fault],
    choices: &sim::Choices,
    trace: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let test = &file.test;
    let Some(config) = test
        .expect
        .iter()
        .map(|e| &e.config)
        .find(|c| c.to_string() == config_name)
    else {
        let known: Vec<String> = test.expect.iter().map(|e| e.config.to_string()).collect();
        bail!(
            "{} has no `expect` line for configuration `{config_name}`; it has: {}",
            test.name,
            known.join(", ")
        );
    };
    let replayed = replay(test, config, faults, choices, trace.is_some())?;
    println!("{} [{config}] choices {choices}", test.name);
    match &replayed.outcome {
        Ok(o) => println!(
            "  outcome {}  ({} by the model)",
            test.show_outcome(&test.observables(), &o.outcome),
            if o.allowed { "allowed" } else { "FORBIDDEN" }
        ),
        Err(failure) => match litmus::hang_of(failure) {
            Some(hang) => {
                let allowed = model::om::allowed_outcomes(test, config)
                    .is_ok_and(|m| m.hangs.contains(&hang));
                println!(
                    "  {hang}  ({} by the model)",
                    if allowed { "allowed" } else { "FORBIDDEN" }
                );
            }
            None => println!("  no outcome: {failure}"),
        },
    }
    println!(
        "  simulated time {} ns, {} events, {} choices",
        replayed.report.sim_time_ns, replayed.report.events, replayed.report.choices
    );
    if let (Some(path), Some(chrome_trace)) = (trace, &replayed.chrome_trace) {
        std::fs::write(path, chrome_trace)
            .with_context(|| format!("cannot write the trace to {}", path.display()))?;
        println!(
            "  trace written to {} (open in https://ui.perfetto.dev)",
            path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
