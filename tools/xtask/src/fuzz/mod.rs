//! `cargo xtask fuzz`: generated and mutated inputs for every reader of untrusted text (the
//! topology file, litmus files, the configuration's environment, the `rshmem` command line),
//! each run in-process under `catch_unwind` with a watchdog for hangs (docs/fuzzing.md).
//!
//! - `targets/`: what is fuzzed, each target's seed corpus, generator and real code.
//! - `mutate.rs`: byte-, token- and line-level mutation; `rng.rs` the seeded stream.
//! - `runner.rs`: the worker and its watchdog, findings and the summary.

mod mutate;
mod rng;
mod runner;
mod targets;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args as ClapArgs;

use runner::{Report, Settings};
use targets::Target;

/// `cargo xtask fuzz` arguments.
#[derive(ClapArgs, Debug)]
#[command(after_help = "Examples:
  cargo xtask fuzz --target all --inputs 1000000
  cargo xtask fuzz --target litmus --seed 7
  cargo xtask fuzz --target topology --replay target/fuzz/topology-panic-0123456789abcdef.input

A panic or a hang is saved under target/fuzz/ and printed with the command that replays it.
The exit status is 0 when no target panicked or hung, 1 when one did, and 2 for bad arguments.")]
pub(crate) struct Args {
    /// What to fuzz: topology, litmus, config, cli, or all.
    #[arg(long, default_value = "all", value_parser = ["all", "topology", "litmus", "config", "cli"])]
    target: String,
    /// Inputs per target.
    #[arg(long, default_value_t = 100_000)]
    inputs: u64,
    /// The seed of every choice; the same seed gives the same inputs.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// An input running longer than this is reported as a hang.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..))]
    time_limit_ms: u64,
    /// Run the one input saved in FILE (a finding) instead of fuzzing; needs --target.
    #[arg(long, value_name = "FILE")]
    replay: Option<PathBuf>,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let root = crate::tidy::repository_root();
    // Canonical, so that the replay commands printed are short and work from anywhere.
    let root = root.canonicalize().unwrap_or(root);
    let settings = Settings {
        inputs: args.inputs,
        seed: args.seed,
        time_limit: Duration::from_millis(args.time_limit_ms),
        findings_dir: root.join("target/fuzz"),
        progress: true,
    };
    let chosen: Vec<&'static Target> = match targets::by_name(&args.target) {
        Some(target) => vec![target],
        None => targets::TARGETS.to_vec(),
    };
    if let Some(path) = &args.replay {
        let [target] = chosen[..] else {
            anyhow::bail!(
                "--replay needs the target the input is for: --target topology|litmus|config|cli"
            );
        };
        let input = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let report = runner::replay(target, input.clone(), &settings);
        return Ok(replay_outcome(target, &input, &report));
    }
    if std::env::var_os(WORKER_VAR).is_none() {
        return supervise(args, &chosen, &settings);
    }
    let mut failed = false;
    for target in chosen {
        let corpus = (target.corpus)(&root)
            .with_context(|| format!("reading the seed corpus of {}", target.name))?;
        eprintln!(
            "fuzz {}: {} inputs from a corpus of {} (seed {})",
            target.name,
            settings.inputs,
            corpus.len(),
            settings.seed
        );
        let report = runner::fuzz(target, corpus, &settings);
        failed |= report.panics > 0 || report.hangs > 0;
        println!("{}", report.summary_line());
        for finding in &report.findings {
            let saved = finding
                .path
                .as_ref()
                .map_or("not saved".into(), |p| p.display().to_string());
            println!(
                "  {} ({} bytes, {saved}): {}",
                finding.kind,
                finding.input.len(),
                finding.message
            );
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Set in the environment of the process that fuzzes one target.
const WORKER_VAR: &str = "RSHMEM_FUZZ_WORKER";

/// Fuzzes each target in a process of its own (this program again), so that a crash that
/// unwinding cannot catch (a stack overflow, an abort) is reported with its input, and the
/// other targets still run.
fn supervise(
    args: &Args,
    chosen: &[&'static Target],
    settings: &Settings,
) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe().context("finding this program to run each target")?;
    let mut failed = false;
    for target in chosen {
        let kept = runner::current_path(&settings.findings_dir, target.name);
        // A kept input from an earlier run must not be taken for this run's.
        std::fs::remove_file(&kept).ok();
        let status = std::process::Command::new(&exe)
            .args(["fuzz", "--target", target.name])
            .args([
                "--inputs",
                &args.inputs.to_string(),
                "--seed",
                &args.seed.to_string(),
            ])
            .args(["--time-limit-ms", &args.time_limit_ms.to_string()])
            .env(WORKER_VAR, "1")
            .status()
            .with_context(|| format!("running {}", exe.display()))?;
        match status.code() {
            Some(0) => {}
            Some(1) => failed = true,
            Some(_) => anyhow::bail!("fuzzing {} failed ({status})", target.name),
            None => {
                failed = true;
                let message = format!("the process died ({status}) on this input");
                match runner::read_kept(&kept) {
                    Ok(input) => {
                        runner::save(target.name, "crash", message, input, &settings.findings_dir);
                    }
                    Err(e) => eprintln!(
                        "fuzz {}: {message}; its input is lost ({}: {e})",
                        target.name,
                        kept.display()
                    ),
                }
                println!("fuzz {}: crashed ({status})", target.name);
            }
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Prints what the replayed input did: the reader's own message when it refused the input.
fn replay_outcome(target: &Target, input: &[u8], report: &Report) -> ExitCode {
    if !report.findings.is_empty() {
        return ExitCode::from(1);
    }
    // The watched run found no panic and no hang, so running it again here is safe.
    match (target.run)(input) {
        Ok(()) => println!("accepted"),
        Err(refusal) => println!("refused: {}", refusal.message),
    }
    ExitCode::SUCCESS
}
