//! `mutate-orderings`: weakens each memory ordering and each fence of the given source files
//! one at a time, runs a test command against every mutant, and reports which mutants the
//! tests killed. It restores every file it touches, also when interrupted by a failing step.
//!
//! ```text
//! cargo run -p tools --bin mutate-orderings -- \
//!     --test 'RUSTFLAGS="--cfg rshmem_loom" cargo test --release -p hw --test loom' \
//!     hw/src/host/*.rs hw/src/sync.rs
//! ```
//!
//! A mutant is one site: `Ordering::Release`, `Acquire`, `AcqRel` or `SeqCst` rewritten to
//! `Relaxed`, or a `fence(...)` call removed. A mutant whose test command fails (or whose
//! build fails) is killed; one whose test passes survives and needs an explanation: either
//! the ordering is not needed, or a test is missing.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};
use clap::Parser;

/// Weaken each memory ordering of some files, one at a time, and see whether tests notice.
#[derive(Parser, Debug)]
#[command(name = "mutate-orderings", version)]
struct Args {
    /// The shell command that must fail for a mutant to count as killed.
    #[arg(long, value_name = "COMMAND")]
    test: String,
    /// Print the mutants without running anything.
    #[arg(long)]
    list: bool,
    /// Source files to mutate.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

/// One weakening at one place.
#[derive(Debug, Clone)]
struct Mutant {
    file: PathBuf,
    line: usize,
    /// Byte range in the file's text that is replaced.
    start: usize,
    end: usize,
    replacement: String,
    describe: String,
}

const STRONG: [&str; 4] = ["SeqCst", "AcqRel", "Release", "Acquire"];

fn find_mutants(file: &Path, text: &str) -> Vec<Mutant> {
    let mut mutants = Vec::new();
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for strong in STRONG {
            let needle = format!("Ordering::{strong}");
            let mut from = 0;
            while let Some(at) = code[from..].find(&needle) {
                let start = offset + from + at + "Ordering::".len();
                mutants.push(Mutant {
                    file: file.to_path_buf(),
                    line: i + 1,
                    start,
                    end: start + strong.len(),
                    replacement: "Relaxed".into(),
                    describe: format!("{strong} -> Relaxed"),
                });
                from += at + needle.len();
            }
        }
        // A fence call: `fence(` not preceded by an identifier character (so not `compiler_fence`
        // or a method named `..._fence`), up to its closing parenthesis on the same line.
        let mut from = 0;
        while let Some(at) = code[from..].find("fence(") {
            let abs = from + at;
            let prev = code[..abs].chars().next_back();
            let is_call = !prev.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.');
            if let (true, Some(close)) = (is_call, code[abs..].find(')')) {
                let start = offset + abs;
                let end = offset + abs + close + 1;
                mutants.push(Mutant {
                    file: file.to_path_buf(),
                    line: i + 1,
                    start,
                    end,
                    replacement: "()".into(),
                    describe: format!("{} removed", &code[abs..abs + close + 1]),
                });
            }
            from = abs + "fence(".len();
        }
        offset += line.len();
    }
    mutants
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut originals = Vec::new();
    let mut mutants = Vec::new();
    for file in &args.files {
        let text =
            fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        mutants.extend(find_mutants(file, &text));
        originals.push((file.clone(), text));
    }
    if mutants.is_empty() {
        bail!("no orderings or fences found in the given files");
    }
    if args.list {
        for m in &mutants {
            println!("{}:{}: {}", m.file.display(), m.line, m.describe);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut survivors = Vec::new();
    for (n, m) in mutants.iter().enumerate() {
        let original = &originals
            .iter()
            .find(|(f, _)| f == &m.file)
            .expect("every mutant comes from a read file")
            .1;
        let mut mutated = original.clone();
        mutated.replace_range(m.start..m.end, &m.replacement);
        fs::write(&m.file, &mutated)?;
        let status = Command::new("sh").arg("-c").arg(&args.test).output();
        // Restore before looking at the result, so that no error path leaves a mutant behind.
        fs::write(&m.file, original)?;
        let killed = !status.context("running the test command")?.status.success();
        println!(
            "[{}/{}] {}:{}: {}: {}",
            n + 1,
            mutants.len(),
            m.file.display(),
            m.line,
            m.describe,
            if killed { "killed" } else { "SURVIVED" }
        );
        if !killed {
            survivors.push(m.clone());
        }
    }
    let killed = mutants.len() - survivors.len();
    println!(
        "{killed} of {} mutants killed ({:.0} %)",
        mutants.len(),
        100.0 * killed as f64 / mutants.len() as f64
    );
    for m in &survivors {
        println!("survivor: {}:{}: {}", m.file.display(), m.line, m.describe);
    }
    Ok(if survivors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_orderings_and_fence_calls_but_not_comments_or_methods() {
        let text = "a.store(1, Ordering::Release);\n\
                    // Ordering::SeqCst in a comment\n\
                    fence(Ordering::SeqCst);\n\
                    q.fence()?; compiler_fence(Ordering::Acquire);\n";
        let ms = find_mutants(&PathBuf::from("x.rs"), text);
        let described: Vec<(usize, &str)> =
            ms.iter().map(|m| (m.line, m.describe.as_str())).collect();
        assert_eq!(
            described,
            vec![
                (1, "Release -> Relaxed"),
                (3, "SeqCst -> Relaxed"),
                (3, "fence(Ordering::SeqCst) removed"),
                (4, "Acquire -> Relaxed"),
            ]
        );
        let mut mutated = text.to_string();
        mutated.replace_range(ms[2].start..ms[2].end, &ms[2].replacement);
        assert!(mutated.contains("\n();\n"));
    }
}
