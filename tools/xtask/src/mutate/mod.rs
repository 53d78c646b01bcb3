//! `cargo xtask mutate-orderings`: weakens each memory ordering and each fence of the given source files
//! one at a time, runs test commands against every mutant, and reports which mutants the
//! tests killed. It restores every file it touches (see "Restoring" below).
//!
//! ```text
//! cargo xtask mutate-orderings \
//!     --test 'cargo test --release -p hw && cargo test --release -p conformance --test conformance host::' \
//!     --test 'RUSTFLAGS="--cfg rshmem_shuttle" CARGO_TARGET_DIR=target/shuttle cargo test --release -p hw --test shuttle' \
//!     --test 'RUSTFLAGS="--cfg rshmem_loom" CARGO_TARGET_DIR=target/loom cargo test --release -p hw --test loom -- --test-threads=1' \
//!     --report mutation-report.md \
//!     hw/src/host/*.rs hw/src/sync.rs
//! ```
//!
//! # Mutants
//!
//! A mutant is one weakening at one site:
//!
//! - `Ordering::Release`, `Acquire`, `AcqRel` or `SeqCst` written as a value (an argument of
//!   an atomic access, an argument passed on to a function that takes an ordering, an
//!   initialiser, the value side `=> Ordering::X` of a match arm) becomes `Relaxed`; with
//!   `--split-acqrel`, an `AcqRel` also becomes `Acquire` and `Release` (two more mutants).
//! - The argument of a fence call (`fence(..)`, `compiler_fence(..)`) is weakened only to
//!   another valid fence ordering: `SeqCst` becomes `AcqRel`, `AcqRel` becomes `Acquire` and
//!   `Release`. A `Relaxed` fence panics at run time, so that "weakening" would be a crash,
//!   not a weaker program.
//! - A `fence(..)` call (not `compiler_fence`, not a method `.fence()`) is removed.
//!
//! Not mutated: comments and string literals; code in items under a `#[cfg(..)]` that needs
//! `test` (`#[cfg(test)] mod tests`, `#[cfg(all(test, ..))]`: unit tests are not the code
//! under test); match-arm patterns (`Ordering::AcqRel | Ordering::Acquire => ..`) and
//! `matches!` patterns, which compare orderings rather than order anything; the definition
//! `fn fence(`. Match guards (`Ordering::X if ..`) are not recognised as patterns.
//!
//! # Running
//!
//! Every `--test` command is a `sh -c` command line, run in order for each mutant; the first
//! that fails (or does not build, or runs past `--timeout`) kills the mutant and the rest are
//! skipped, so put the cheap ones first. A mutant that passes them all SURVIVED and needs an
//! explanation: the ordering is not needed, a test is missing, or the checker cannot see it.
//! Before the mutants, the commands run once on the unmodified files (skip with
//! `--no-baseline`); if that fails, nothing else runs. A progress line per mutant gives the
//! elapsed time; the summary table (site, mutation, what killed it) ends the output and, with
//! `--report FILE`, is written as Markdown.
//!
//! # Restoring
//!
//! A mutated file is restored right after its commands finish, before their result is
//! looked at. While a mutant is applied its original is also saved beside it as
//! `FILE.mutate-orig`. Ctrl-C (SIGINT), SIGTERM and SIGHUP are caught: the running command's
//! process group is killed, the file restored and the partial summary printed. Only SIGKILL
//! or a power cut can leave a mutant behind; then the next run of the tool (with the same
//! files, `--list` included) restores it from `FILE.mutate-orig` before doing anything else.

mod mutants;
mod report;
mod runner;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use mutants::find_mutants;
use report::{Row, secs, summary};
use runner::{Outcome, run_command};

/// Weaken each memory ordering of some files, one at a time, and see whether tests notice.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// A shell command that must fail for a mutant to count as killed. Repeat for several:
    /// they run in order and the first that fails kills the mutant (put cheap ones first).
    #[arg(long, value_name = "COMMAND", required_unless_present = "list")]
    test: Vec<String>,
    /// Print the mutants without running anything.
    #[arg(long)]
    list: bool,
    /// Also weaken each `AcqRel` value to `Acquire` and to `Release`.
    #[arg(long)]
    split_acqrel: bool,
    /// Run only the mutants whose `FILE:LINE: MUTATION` contains one of these strings.
    #[arg(long, value_name = "TEXT")]
    only: Vec<String>,
    /// Seconds one command may run before it is killed (a timeout kills the mutant: a hang).
    #[arg(long, value_name = "SECONDS", default_value_t = 1200)]
    timeout: u64,
    /// Do not run the commands on the unmodified files first.
    #[arg(long)]
    no_baseline: bool,
    /// Write the summary table as Markdown to this file.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Keep each command's output per mutant in this folder.
    #[arg(long, value_name = "DIR")]
    log_dir: Option<PathBuf>,
    /// Source files to mutate.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// The path where `file`'s original is kept while a mutant of it is applied.
fn backup_of(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".mutate-orig");
    PathBuf::from(name)
}

/// Puts back an original left behind by a killed earlier run.
fn recover(file: &Path) -> anyhow::Result<()> {
    let backup = backup_of(file);
    if backup.exists() {
        eprintln!(
            "restoring {} from {} (left by an interrupted run)",
            file.display(),
            backup.display()
        );
        fs::copy(&backup, file).with_context(|| format!("restoring {}", file.display()))?;
        fs::remove_file(&backup)?;
    }
    Ok(())
}

/// Runs the mutation check; the exit status says whether every mutant was killed.
pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut originals = Vec::new();
    let mut mutants = Vec::new();
    for file in &args.files {
        recover(file)?;
        let text =
            fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        mutants.extend(find_mutants(file, &text, args.split_acqrel));
        originals.push((file.clone(), text));
    }
    if !args.only.is_empty() {
        mutants.retain(|m| {
            let name = format!("{}: {}", m.site(), m.describe);
            args.only.iter().any(|o| name.contains(o.as_str()))
        });
    }
    if mutants.is_empty() {
        bail!("no orderings or fences to weaken in the given files");
    }
    if args.list {
        for m in &mutants {
            println!("{}: {}", m.site(), m.describe);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(dir) = &args.log_dir {
        fs::create_dir_all(dir)?;
    }
    #[cfg(unix)]
    runner::signals::install();
    let timeout = Duration::from_secs(args.timeout);
    let started = Instant::now();
    let log = |n: &str, c: usize| {
        args.log_dir
            .as_ref()
            .map(|d| d.join(format!("{n}-cmd{c}.log")))
    };

    if !args.no_baseline {
        for (c, cmd) in args.test.iter().enumerate() {
            let t = Instant::now();
            println!("baseline: command {} ...", c + 1);
            match run_command(cmd, timeout, log("baseline", c + 1).as_deref())? {
                Outcome::Passed => println!(
                    "baseline: command {} passed in {}",
                    c + 1,
                    secs(t.elapsed())
                ),
                Outcome::Failed(why) => {
                    bail!("command {} fails without any mutant ({why}): {cmd}", c + 1)
                }
                Outcome::Interrupted => bail!("interrupted during the baseline"),
            }
        }
    }

    let mut rows: Vec<Row> = Vec::new();
    let mut interrupted = false;
    'mutants: for (n, m) in mutants.iter().enumerate() {
        let original = &originals
            .iter()
            .find(|(f, _)| f == &m.file)
            .expect("every mutant comes from a read file")
            .1;
        let mut mutated = original.clone();
        mutated.replace_range(m.start..m.end, &m.replacement);
        let backup = backup_of(&m.file);
        fs::write(&backup, original).with_context(|| format!("saving {}", backup.display()))?;
        fs::write(&m.file, &mutated)?;
        let t = Instant::now();
        println!(
            "[{}/{}] {}: {} ...",
            n + 1,
            mutants.len(),
            m.site(),
            m.describe
        );
        let mut killed_by = None;
        let mut result = Ok(());
        for (c, cmd) in args.test.iter().enumerate() {
            match run_command(
                cmd,
                timeout,
                log(&format!("m{:02}", n + 1), c + 1).as_deref(),
            ) {
                Ok(Outcome::Passed) => {}
                Ok(Outcome::Failed(why)) => {
                    killed_by = Some((c + 1, why));
                    break;
                }
                Ok(Outcome::Interrupted) => {
                    interrupted = true;
                    break;
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        // Restore before looking at the result, so that no error path leaves a mutant behind.
        fs::write(&m.file, original).with_context(|| format!("restoring {}", m.file.display()))?;
        fs::remove_file(&backup)?;
        result?;
        if interrupted {
            println!("interrupted: {} restored; stopping", m.file.display());
            break 'mutants;
        }
        let took = t.elapsed();
        println!(
            "[{}/{}] {}: {}: {} in {} (elapsed {})",
            n + 1,
            mutants.len(),
            m.site(),
            m.describe,
            match &killed_by {
                Some((c, why)) => format!("killed by command {c} ({why})"),
                None => "SURVIVED".into(),
            },
            secs(took),
            secs(started.elapsed())
        );
        rows.push(Row {
            mutant: m.clone(),
            killed_by,
            took,
        });
    }

    let table = summary(&args.test, &rows, mutants.len(), started.elapsed());
    println!("\n{table}");
    if let Some(report) = &args.report {
        fs::write(report, &table).with_context(|| format!("writing {}", report.display()))?;
    }
    Ok(if interrupted {
        ExitCode::from(130)
    } else if rows.iter().all(|r| r.killed_by.is_some()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
