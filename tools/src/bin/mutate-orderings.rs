//! `mutate-orderings`: weakens each memory ordering and each fence of the given source files
//! one at a time, runs test commands against every mutant, and reports which mutants the
//! tests killed. It restores every file it touches (see "Restoring" below).
//!
//! ```text
//! cargo run --release -p tools --bin mutate-orderings -- \
//!     --test 'cargo test --release -p hw && cargo test --release -p tests --test host' \
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

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering as StdOrdering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;

/// Weaken each memory ordering of some files, one at a time, and see whether tests notice.
#[derive(Parser, Debug)]
#[command(name = "mutate-orderings", version)]
struct Args {
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

impl Mutant {
    fn site(&self) -> String {
        format!("{}:{}", self.file.display(), self.line)
    }
}

const STRONG: [&str; 4] = ["SeqCst", "AcqRel", "Release", "Acquire"];

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `text` with comments and the insides of string and character literals replaced by spaces
/// (newlines kept), so that byte offsets and line numbers stay those of `text`.
fn code_only(text: &str) -> String {
    let s = text.as_bytes();
    let mut out = s.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(s.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < s.len() && depth > 0 {
                if s[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if s[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if (rest.starts_with(b"r\"") || rest.starts_with(b"r#"))
            && (i == 0 || !is_ident(s[i - 1]))
        {
            // A raw string: r"..." or r#"..."#, no escapes.
            let hashes = rest[1..].iter().take_while(|&&b| b == b'#').count();
            if rest.get(1 + hashes) != Some(&b'"') {
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            let body = i + 2 + hashes;
            let end = s[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(s.len(), |p| body + p);
            blank(&mut out, body, end);
            i = (end + close.len()).min(s.len());
        } else if rest[0] == b'"' {
            let mut j = i + 1;
            while j < s.len() && s[j] != b'"' {
                j += if s[j] == b'\\' { 2 } else { 1 };
            }
            let end = j.min(s.len());
            blank(&mut out, i + 1, end);
            i = end + 1;
        } else if rest[0] == b'\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let literal_end = if rest.get(1) == Some(&b'\\') {
                rest[2..]
                    .iter()
                    .position(|&b| b == b'\'')
                    .map(|p| i + 2 + p)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (rest.get(1 + ch) == Some(&b'\'')).then_some(i + 1 + ch)
            };
            match literal_end {
                Some(end) => {
                    blank(&mut out, i + 1, end);
                    i = end + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).expect("only whole characters were blanked")
}

/// The index of the bracket that closes the one at `open` (`(`, `[` or `{`), in code text.
fn matching_close(code: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (j, &b) in code.iter().enumerate().skip(open) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}

/// The index of the innermost bracket opened before `at` and still open there.
fn enclosing_open(code: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0usize;
    for j in (0..at).rev() {
        match code[j] {
            b')' | b']' | b'}' => depth += 1,
            b'(' | b'[' | b'{' => {
                if depth == 0 {
                    return Some(j);
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    None
}

/// The identifier that ends right before `at` (after optional whitespace), and where it starts.
fn ident_before(code: &[u8], at: usize) -> (&str, usize) {
    let mut end = at;
    while end > 0 && code[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    let mut start = end;
    while start > 0 && is_ident(code[start - 1]) {
        start -= 1;
    }
    (std::str::from_utf8(&code[start..end]).unwrap_or(""), start)
}

/// Whether a `cfg` predicate can hold only when `test` is set.
fn requires_test(pred: &str) -> bool {
    let pred = pred.trim();
    if pred == "test" {
        return true;
    }
    let (name, args) = match pred.find('(') {
        Some(open) if pred.ends_with(')') => (pred[..open].trim(), &pred[open + 1..pred.len() - 1]),
        _ => return false,
    };
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0usize, 0);
    for (j, c) in args.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&args[from..j]);
                from = j + 1;
            }
            _ => {}
        }
    }
    parts.push(&args[from..]);
    let parts = parts.into_iter().filter(|p| !p.trim().is_empty());
    match name {
        "all" => parts.into_iter().any(requires_test),
        "any" => {
            let parts: Vec<&str> = parts.collect();
            !parts.is_empty() && parts.into_iter().all(requires_test)
        }
        _ => false,
    }
}

/// Byte ranges of items (and whole files, for `#![cfg(..)]`) compiled only for tests.
fn test_only_ranges(code: &str) -> Vec<(usize, usize)> {
    let c = code.as_bytes();
    let mut ranges = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("#").map(|p| from + p) {
        from = at + 1;
        let inner = c.get(at + 1) == Some(&b'!');
        let bracket = at + 1 + usize::from(inner);
        if c.get(bracket) != Some(&b'[') {
            continue;
        }
        let Some(close) = matching_close(c, bracket) else {
            continue;
        };
        let attr = code[bracket + 1..close].trim();
        let Some(pred) = attr
            .strip_prefix("cfg")
            .map(str::trim_start)
            .and_then(|p| p.strip_prefix('('))
            .and_then(|p| p.strip_suffix(')'))
        else {
            continue;
        };
        if !requires_test(pred) {
            continue;
        }
        if inner {
            ranges.push((0, c.len()));
            break;
        }
        // The item: up to its first `;` or its braced body, outside parentheses.
        let mut j = close + 1;
        let mut depth = 0usize;
        let end = loop {
            match c.get(j) {
                None => break c.len(),
                Some(b'(' | b'[') => depth += 1,
                Some(b')' | b']') => depth = depth.saturating_sub(1),
                Some(b';') if depth == 0 => break j + 1,
                Some(b'{') if depth == 0 => break matching_close(c, j).map_or(c.len(), |e| e + 1),
                _ => {}
            }
            j += 1;
        };
        ranges.push((at, end));
        from = end;
    }
    ranges
}

/// Whether the `Ordering::X` ending at `end` (and starting at `start`) is a pattern: an
/// alternative of a match arm (`A | B =>`) or of `matches!(value, A | B)`.
fn is_pattern(code: &[u8], start: usize, end: usize) -> bool {
    let mut j = end;
    loop {
        while j < code.len() && code[j].is_ascii_whitespace() {
            j += 1;
        }
        if code[j..].starts_with(b"=>") {
            return true;
        }
        if code.get(j) == Some(&b'|') && code.get(j + 1) != Some(&b'|') {
            j += 1;
            while j < code.len() && code[j].is_ascii_whitespace() {
                j += 1;
            }
            while j < code.len() && (is_ident(code[j]) || code[j] == b':') {
                j += 1;
            }
            continue;
        }
        break;
    }
    // matches!(value, PATTERN): the site follows the first top-level comma.
    if let Some(open) = enclosing_open(code, start)
        && code[open] == b'('
        && code[..open].ends_with(b"matches!")
    {
        let first_comma =
            (open + 1..start).find(|&k| code[k] == b',' && enclosing_open(code, k) == Some(open));
        return first_comma.is_some();
    }
    false
}

fn find_mutants(file: &Path, text: &str, split_acqrel: bool) -> Vec<Mutant> {
    let code_text = code_only(text);
    let code = code_text.as_bytes();
    let skipped = test_only_ranges(&code_text);
    let in_skipped = |at: usize| skipped.iter().any(|&(s, e)| s <= at && at < e);
    let line_of = |at: usize| text[..at].bytes().filter(|&b| b == b'\n').count() + 1;
    let mut mutants = Vec::new();
    let mut push = |start: usize, end: usize, replacement: String, describe: String| {
        mutants.push(Mutant {
            file: file.to_path_buf(),
            line: line_of(start),
            start,
            end,
            replacement,
            describe,
        });
    };

    for strong in STRONG {
        let needle = format!("Ordering::{strong}");
        let mut from = 0;
        while let Some(at) = code_text[from..].find(&needle).map(|p| from + p) {
            from = at + needle.len();
            let start = at + "Ordering::".len();
            let end = from;
            if (at > 0 && is_ident(code[at - 1]))
                || code.get(end).is_some_and(|&b| is_ident(b))
                || in_skipped(at)
                || is_pattern(code, at, end)
            {
                continue;
            }
            // An argument of a fence call?
            let fence_name = enclosing_open(code, at)
                .filter(|&open| code[open] == b'(')
                .map(|open| ident_before(code, open))
                .filter(|(name, name_at)| {
                    name.ends_with("fence") && {
                        let before = &code[..*name_at];
                        !before.ends_with(b".") && !ident_before(code, *name_at).0.eq("fn")
                    }
                })
                .map(|(name, _)| name.to_string());
            let weaker: &[&str] = match (&fence_name, strong) {
                (Some(_), "SeqCst") => &["AcqRel"],
                (Some(_), "AcqRel") => &["Acquire", "Release"],
                (Some(_), _) => &[],
                (None, "AcqRel") if split_acqrel => &["Relaxed", "Acquire", "Release"],
                (None, _) => &["Relaxed"],
            };
            for w in weaker {
                let describe = match &fence_name {
                    Some(name) => format!("{name}({strong}) -> {name}({w})"),
                    None => format!("{strong} -> {w}"),
                };
                push(start, end, (*w).to_string(), describe);
            }
        }
    }

    // Fence calls: `fence(` whose name is exactly `fence` (so not `compiler_fence` nor a
    // method `.fence()`, nor `fn fence(`), up to the matching parenthesis.
    let mut from = 0;
    while let Some(at) = code_text[from..].find("fence(").map(|p| from + p) {
        from = at + "fence(".len();
        let prev = code[..at].iter().rev().find(|b| !b.is_ascii_whitespace());
        let is_call = !(at > 0 && is_ident(code[at - 1]))
            && prev != Some(&b'.')
            && ident_before(code, at).0 != "fn";
        if !is_call || in_skipped(at) {
            continue;
        }
        let open = at + "fence".len();
        let Some(close) = matching_close(code, open) else {
            continue;
        };
        let call = text[at..=close]
            .split_whitespace()
            .collect::<String>()
            .replace(",)", ")");
        push(at, close + 1, "()".into(), format!("{call} removed"));
    }
    mutants.sort_by_key(|m| m.start);
    mutants
}

// ---- signals: restore on Ctrl-C ----

/// Set by the signal handler; the runner polls it.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
mod signals {
    use super::{INTERRUPTED, StdOrdering};

    pub(super) const SIGTERM: i32 = 15;
    pub(super) const SIGKILL: i32 = 9;

    unsafe extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
        fn kill(pid: i32, sig: i32) -> i32;
    }

    extern "C" fn on_signal(_: i32) {
        // Only an atomic store: async-signal-safe.
        INTERRUPTED.store(true, StdOrdering::SeqCst);
    }

    /// Catches SIGHUP, SIGINT and SIGTERM, so that the runner can restore files and stop.
    pub(super) fn install() {
        for sig in [1, 2, SIGTERM] {
            // SAFETY: `signal` is the C library's; `on_signal` has the handler's C signature
            // and does nothing but store to an atomic, which is async-signal-safe.
            unsafe {
                signal(sig, on_signal as extern "C" fn(i32) as usize);
            }
        }
    }

    /// Sends `sig` to the process group `pgid` (the test command and its children).
    pub(super) fn kill_group(pgid: u32, sig: i32) {
        if let Ok(pgid) = i32::try_from(pgid) {
            // SAFETY: `kill` only sends a signal; a negative pid names our child's own group.
            unsafe {
                kill(-pgid, sig);
            }
        }
    }
}

// ---- running ----

/// How one command run ended.
enum Outcome {
    Passed,
    Failed(String),
    Interrupted,
}

/// Runs `cmd` with `sh -c` in a process group of its own, up to `timeout`; the output goes to
/// `log` (or nowhere). On failure, says why: the failed tests, a build error, a timeout.
fn run_command(cmd: &str, timeout: Duration, log: Option<&Path>) -> anyhow::Result<Outcome> {
    let out_file =
        std::env::temp_dir().join(format!("mutate-orderings-{}.log", std::process::id()));
    let out = fs::File::create(&out_file)?;
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().context("starting sh")?;
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        let interrupted = INTERRUPTED.load(StdOrdering::SeqCst);
        if interrupted || start.elapsed() > timeout {
            #[cfg(unix)]
            {
                signals::kill_group(child.id(), signals::SIGTERM);
                std::thread::sleep(Duration::from_secs(2));
                signals::kill_group(child.id(), signals::SIGKILL);
            }
            let _ = child.kill();
            let _ = child.wait();
            if interrupted {
                return Ok(Outcome::Interrupted);
            }
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let text = fs::read_to_string(&out_file).unwrap_or_default();
    let _ = fs::remove_file(&out_file);
    if let Some(log) = log {
        fs::write(log, &text).with_context(|| format!("writing {}", log.display()))?;
    }
    let Some(status) = status else {
        return Ok(Outcome::Failed(format!("timeout after {}", secs(timeout))));
    };
    if status.success() {
        return Ok(Outcome::Passed);
    }
    Ok(Outcome::Failed(why_failed(&text)))
}

/// A short reason from a failed command's output: the failed tests, or a build error.
fn why_failed(text: &str) -> String {
    let failed: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("test ")?.strip_suffix(" ... FAILED"))
        .collect();
    if !failed.is_empty() {
        return failed.join(", ");
    }
    if text.contains("could not compile") || text.contains("error[E") {
        return "build failed".into();
    }
    if text.contains("SIGABRT") || text.contains("SIGSEGV") {
        // The test that was running: its "test NAME ... " line has no result after it.
        let running = text
            .lines()
            .rev()
            .filter_map(|l| l.strip_prefix("test "))
            .find_map(|l| l.trim_end().strip_suffix(" ..."));
        let what = if text.contains("deadlock") {
            "deadlock, test binary aborted"
        } else {
            "test binary crashed"
        };
        return match running {
            Some(name) => format!("{name}: {what}"),
            None => what.into(),
        };
    }
    "failed".into()
}

fn secs(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// One mutant's result.
struct Row {
    mutant: Mutant,
    /// `Some((command number from 1, reason))` if killed.
    killed_by: Option<(usize, String)>,
    took: Duration,
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

fn run(args: Args) -> anyhow::Result<ExitCode> {
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
    signals::install();
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

/// The Markdown summary: the commands, one row per mutant, the kill rate.
fn summary(commands: &[String], rows: &[Row], total: usize, took: Duration) -> String {
    let mut s = String::new();
    let killed = rows.iter().filter(|r| r.killed_by.is_some()).count();
    let _ = writeln!(
        s,
        "Commands, in order (the first that fails kills the mutant):\n"
    );
    for (c, cmd) in commands.iter().enumerate() {
        let _ = writeln!(s, "{}. `{cmd}`", c + 1);
    }
    let _ = writeln!(
        s,
        "\n| # | site | mutation | result | time |\n| --- | --- | --- | --- | --- |"
    );
    for (n, r) in rows.iter().enumerate() {
        let result = match &r.killed_by {
            Some((c, why)) => format!("killed by {c}: {why}"),
            None => "**SURVIVED**".into(),
        };
        let _ = writeln!(
            s,
            "| {} | `{}` | `{}` | {} | {} |",
            n + 1,
            r.mutant.site(),
            r.mutant.describe,
            result,
            secs(r.took)
        );
    }
    let rate = if rows.is_empty() {
        0.0
    } else {
        100.0 * killed as f64 / rows.len() as f64
    };
    let _ = writeln!(
        s,
        "\n{killed} of {} mutants killed ({rate:.0} %){}, in {}.",
        rows.len(),
        if rows.len() < total {
            format!("; {} of {total} not run (interrupted)", total - rows.len())
        } else {
            String::new()
        },
        secs(took)
    );
    for r in rows.iter().filter(|r| r.killed_by.is_none()) {
        let _ = writeln!(s, "survivor: {}: {}", r.mutant.site(), r.mutant.describe);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(text: &str) -> Vec<(usize, String)> {
        find_mutants(&PathBuf::from("x.rs"), text, false)
            .into_iter()
            .map(|m| (m.line, m.describe))
            .collect()
    }

    fn owned(v: &[(usize, &str)]) -> Vec<(usize, String)> {
        v.iter().map(|&(l, d)| (l, d.to_string())).collect()
    }

    #[test]
    fn finds_orderings_and_fence_calls_but_not_comments_or_methods() {
        let text = "a.store(1, Ordering::Release);\n\
                    // Ordering::SeqCst in a comment\n\
                    fence(Ordering::SeqCst);\n\
                    q.fence()?; compiler_fence(Ordering::Acquire);\n";
        let ms = find_mutants(&PathBuf::from("x.rs"), text, false);
        assert_eq!(
            described(text),
            owned(&[
                (1, "Release -> Relaxed"),
                (3, "fence(Ordering::SeqCst) removed"),
                (3, "fence(SeqCst) -> fence(AcqRel)"),
            ])
        );
        let mut mutated = text.to_string();
        mutated.replace_range(ms[1].start..ms[1].end, &ms[1].replacement);
        assert!(mutated.contains("\n();\n"));
        let mut mutated = text.to_string();
        mutated.replace_range(ms[2].start..ms[2].end, &ms[2].replacement);
        assert!(mutated.contains("\nfence(Ordering::AcqRel);\n"));
    }

    #[test]
    fn skips_code_compiled_only_for_tests() {
        let text = "x.load(Ordering::Acquire);\n\
                    #[cfg(test)]\n\
                    mod tests {\n\
                        fn f() { x.load(Ordering::Acquire); fence(Ordering::SeqCst); }\n\
                    }\n\
                    #[cfg(all(test, not(rshmem_loom)))]\n\
                    mod more { fn g() { x.swap(1, Ordering::AcqRel); } }\n\
                    #[cfg(not(test))]\n\
                    fn h() { x.swap(1, Ordering::AcqRel); }\n\
                    #[cfg(any(test, rshmem_loom))]\n\
                    fn k() { x.swap(1, Ordering::SeqCst); }\n";
        assert_eq!(
            described(text),
            owned(&[
                (1, "Acquire -> Relaxed"),
                (9, "AcqRel -> Relaxed"),
                (11, "SeqCst -> Relaxed"),
            ])
        );
        assert!(requires_test("all(test, not(loom))"));
        assert!(requires_test("any(test, all(test, x))"));
        assert!(!requires_test("not(test)"));
        assert!(!requires_test("any(test, loom)"));
    }

    #[test]
    fn skips_match_patterns_but_not_the_values_they_map_to() {
        let text = "match order {\n\
                        Ordering::AcqRel | Ordering::Acquire => Ordering::Acquire,\n\
                        Ordering::SeqCst => Ordering::SeqCst,\n\
                        _ => Ordering::Relaxed,\n\
                    }\n\
                    let b = matches!(o, Ordering::Release | Ordering::AcqRel);\n\
                    let c = matches!(f(Ordering::Release), Ordering::SeqCst);\n";
        assert_eq!(
            described(text),
            owned(&[
                (2, "Acquire -> Relaxed"),
                (3, "SeqCst -> Relaxed"),
                (7, "Release -> Relaxed"),
            ])
        );
    }

    #[test]
    fn skips_fence_definitions_and_takes_orderings_passed_as_arguments() {
        let text = "fn fence(&self) -> Result<(), E> {\n\
                        fence(Ordering::Release);\n\
                        Ok(())\n\
                    }\n\
                    segment.read(off, buf, Ordering::Acquire);\n\
                    s.amo(\n    off,\n    op,\n    Ordering::AcqRel,\n);\n\
                    std::sync::atomic::fence(\n    Ordering::AcqRel,\n);\n";
        assert_eq!(
            described(text),
            owned(&[
                (2, "fence(Ordering::Release) removed"),
                (5, "Acquire -> Relaxed"),
                (9, "AcqRel -> Relaxed"),
                (11, "fence(Ordering::AcqRel) removed"),
                (12, "fence(AcqRel) -> fence(Acquire)"),
                (12, "fence(AcqRel) -> fence(Release)"),
            ])
        );
    }

    #[test]
    fn splits_acqrel_on_request() {
        let ms = find_mutants(
            &PathBuf::from("x.rs"),
            "x.swap(1, Ordering::AcqRel);\n",
            true,
        );
        let d: Vec<&str> = ms.iter().map(|m| m.describe.as_str()).collect();
        assert_eq!(
            d,
            [
                "AcqRel -> Relaxed",
                "AcqRel -> Acquire",
                "AcqRel -> Release"
            ]
        );
    }

    #[test]
    fn strings_and_block_comments_are_not_code() {
        let text = "let s = \"Ordering::SeqCst fence(x)\"; /* fence(Ordering::SeqCst)\n\
                    Ordering::Acquire */ let r = r#\"Ordering::Release\"#; let c = '\"';\n\
                    x.load(Ordering::Acquire); // the only one\n";
        assert_eq!(described(text), owned(&[(3, "Acquire -> Relaxed")]));
        assert_eq!(code_only(text).len(), text.len());
    }

    #[test]
    fn a_timeout_kills_and_a_failure_names_the_tests() {
        let never = Duration::from_secs(60);
        assert!(matches!(
            run_command("true", never, None).unwrap(),
            Outcome::Passed
        ));
        match run_command("echo 'test a::b ... FAILED'; exit 1", never, None).unwrap() {
            Outcome::Failed(why) => assert_eq!(why, "a::b"),
            _ => panic!("expected a failure"),
        }
        let log = "test a ... ok\ntest b::c ... \ndeadlock; threads = []\n(signal: 6, SIGABRT)\n";
        assert_eq!(why_failed(log), "b::c: deadlock, test binary aborted");
        let t = Instant::now();
        match run_command("sleep 30", Duration::from_millis(200), None).unwrap() {
            Outcome::Failed(why) => assert!(why.starts_with("timeout"), "{why}"),
            _ => panic!("expected a timeout"),
        }
        assert!(t.elapsed() < Duration::from_secs(10));
    }
}
