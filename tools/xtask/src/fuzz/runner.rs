//! Runs a target over many inputs: each in-process under `catch_unwind` on a worker thread,
//! while this thread is the watchdog that reports an input running past the time limit as a
//! hang, and prints progress.
//!
//! A hang cannot be stopped (a thread cannot be killed), so the target's run ends there: the
//! worker is left behind, and the process exits when `cargo xtask fuzz` returns.
//! A crash that unwinding cannot catch (a stack overflow, an abort) ends the process; the
//! input it ran is then in `TARGET.current` (see [`current_path`]), which `mod.rs` reads.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use super::mutate::{self, MAX_INPUT_BYTES};
use super::rng::Rng;
use super::targets::Target;

/// How one target is fuzzed.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub(crate) inputs: u64,
    pub(crate) seed: u64,
    pub(crate) time_limit: Duration,
    /// Where findings are saved.
    pub(crate) findings_dir: PathBuf,
    /// Progress lines on stderr.
    pub(crate) progress: bool,
}

/// A panic or a hang, with the input that caused it.
#[derive(Clone, Debug)]
pub(crate) struct Finding {
    pub(crate) kind: &'static str,
    pub(crate) message: String,
    pub(crate) input: Vec<u8>,
    /// The saved input, if it could be saved.
    pub(crate) path: Option<PathBuf>,
}

/// What a target's run found.
#[derive(Debug)]
pub(crate) struct Report {
    pub(crate) target: &'static str,
    pub(crate) inputs: u64,
    /// Inputs the reader accepted.
    pub(crate) accepted: u64,
    /// The kinds of error seen ([`super::targets::Refusal`]), with how often each came.
    pub(crate) errors: BTreeMap<String, u64>,
    pub(crate) panics: u64,
    pub(crate) hangs: u64,
    pub(crate) elapsed: Duration,
    /// One finding per panic location, and the hang if there was one.
    pub(crate) findings: Vec<Finding>,
}

impl Report {
    pub(crate) fn summary_line(&self) -> String {
        let seconds = self.elapsed.as_secs_f64();
        format!(
            "fuzz {}: {} inputs ({} accepted), {} distinct errors, {} panics, {} hangs, {:.1} s, \
             {:.0} inputs/s",
            self.target,
            self.inputs,
            self.accepted,
            self.errors.len(),
            self.panics,
            self.hangs,
            seconds,
            self.inputs as f64 / seconds.max(1e-9)
        )
    }
}

/// What the worker and the watchdog share.
#[derive(Default)]
struct Shared {
    /// The input being run, for the watchdog to save when it hangs.
    current: Mutex<Vec<u8>>,
    /// Microseconds since the run began when the current input started; 0 while idle.
    started_us: AtomicU64,
    inputs: AtomicU64,
    accepted: AtomicU64,
    panics: AtomicU64,
    errors: Mutex<BTreeMap<String, u64>>,
    findings: Mutex<Vec<Finding>>,
}

/// Fuzzes `target` with `settings.inputs` inputs drawn from `corpus`.
pub(crate) fn fuzz(target: &'static Target, corpus: Vec<Vec<u8>>, settings: &Settings) -> Report {
    let inputs = settings.inputs;
    let mut rng = Rng::new(settings.seed, target.name);
    let mut corpus = corpus;
    if corpus.is_empty() {
        corpus.push(Vec::new());
    }
    let mut last: Vec<u8> = Vec::new();
    run_watched(target, settings, move |i, last_was_new| {
        // Feedback: an input refused with an error not seen before reached new code, so it
        // joins the corpus (bounded, so that old seeds keep their share).
        if last_was_new && corpus.len() < MAX_CORPUS && last.len() <= MAX_CORPUS_INPUT_BYTES {
            corpus.push(std::mem::take(&mut last));
        }
        if i >= inputs {
            return None;
        }
        last = next_input(target, &mut rng, &corpus);
        Some(last.clone())
    })
}

/// Runs the one input of `path` (`--replay`).
pub(crate) fn replay(target: &'static Target, input: Vec<u8>, settings: &Settings) -> Report {
    let mut input = Some(input);
    run_watched(target, settings, move |_, _| input.take())
}

/// The most inputs the corpus grows to.
const MAX_CORPUS: usize = 4096;

/// The largest input that joins the corpus: larger ones would slow every later mutation, and
/// mutation makes long inputs afresh anyway.
const MAX_CORPUS_INPUT_BYTES: usize = 4096;

/// The next input: a structured one, a corpus entry as it is, or a mutant of either.
fn next_input(target: &Target, rng: &mut Rng, corpus: &[Vec<u8>]) -> Vec<u8> {
    let roll = rng.below(20);
    if roll < 4 {
        return (target.generate)(rng);
    }
    let mut input = if roll < 8 {
        (target.generate)(rng)
    } else {
        rng.pick(corpus).clone()
    };
    if roll == 19 {
        return input;
    }
    let other = rng.pick(corpus);
    mutate::mutate(&mut input, rng, target.dictionary, other, target.separator);
    input
}

/// Runs the inputs `next` yields on a worker thread and watches it.
fn run_watched(
    target: &'static Target,
    settings: &Settings,
    mut next: impl FnMut(u64, bool) -> Option<Vec<u8>> + Send + 'static,
) -> Report {
    install_panic_hook();
    let shared = Arc::new(Shared::default());
    let began = Instant::now();
    let worker_shared = Arc::clone(&shared);
    let findings_dir = settings.findings_dir.clone();
    let worker = std::thread::Builder::new()
        .name(format!("{FUZZ_THREAD_PREFIX}{}", target.name))
        .spawn(move || {
            let shared = worker_shared;
            let mut seen_panics = BTreeSet::new();
            let mut kept = KeptInput::create(&current_path(&findings_dir, target.name));
            let (mut i, mut new_error) = (0, false);
            while let Some(input) = next(i, new_error) {
                i += 1;
                kept.keep(&input);
                new_error = run_one(
                    target,
                    &input,
                    &shared,
                    began,
                    &mut seen_panics,
                    &findings_dir,
                );
            }
        })
        .expect("spawning the fuzz worker thread");

    let mut hangs = 0;
    let mut last_progress = Instant::now();
    let poll = (settings.time_limit / 4).clamp(Duration::from_millis(1), Duration::from_millis(50));
    loop {
        std::thread::sleep(poll);
        if worker.is_finished() {
            // The target's panics are caught; one here is the fuzzer's own, and must be loud.
            if let Err(payload) = worker.join() {
                panic::resume_unwind(payload);
            }
            break;
        }
        let started_us = shared.started_us.load(Ordering::Acquire);
        let now_us = began.elapsed().as_micros() as u64;
        if started_us != 0
            && now_us.saturating_sub(started_us) > settings.time_limit.as_micros() as u64
        {
            hangs += 1;
            let input = shared
                .current
                .lock()
                .expect("no panic holds this lock")
                .clone();
            let message = format!(
                "an input ran longer than the time limit of {} ms (still running after {} ms)",
                settings.time_limit.as_millis(),
                (now_us - started_us) / 1000
            );
            let finding = save(target.name, "hang", message, input, &settings.findings_dir);
            shared
                .findings
                .lock()
                .expect("no panic holds this lock")
                .push(finding);
            break;
        }
        if settings.progress && last_progress.elapsed() >= Duration::from_secs(2) {
            last_progress = Instant::now();
            let done = shared.inputs.load(Ordering::Relaxed);
            eprintln!(
                "fuzz {}: {done}/{} inputs, {} panics, {:.0} inputs/s",
                target.name,
                settings.inputs,
                shared.panics.load(Ordering::Relaxed),
                done as f64 / began.elapsed().as_secs_f64()
            );
        }
    }
    let errors = shared
        .errors
        .lock()
        .expect("no panic holds this lock")
        .clone();
    let findings = shared
        .findings
        .lock()
        .expect("no panic holds this lock")
        .clone();
    Report {
        target: target.name,
        inputs: shared.inputs.load(Ordering::Acquire),
        accepted: shared.accepted.load(Ordering::Acquire),
        errors,
        panics: shared.panics.load(Ordering::Acquire),
        hangs,
        elapsed: began.elapsed(),
        findings,
    }
}

/// Runs one input; true when it was refused with an error not seen before.
fn run_one(
    target: &Target,
    input: &[u8],
    shared: &Shared,
    began: Instant,
    seen_panics: &mut BTreeSet<String>,
    findings_dir: &Path,
) -> bool {
    {
        let mut current = shared.current.lock().expect("no panic holds this lock");
        current.clear();
        current.extend_from_slice(input);
    }
    let started_us = (began.elapsed().as_micros() as u64).max(1);
    shared.started_us.store(started_us, Ordering::Release);
    IN_TARGET.with(|inside| inside.set(true));
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| (target.run)(input)));
    IN_TARGET.with(|inside| inside.set(false));
    shared.started_us.store(0, Ordering::Release);
    shared.inputs.fetch_add(1, Ordering::Relaxed);
    match outcome {
        Ok(Ok(())) => {
            shared.accepted.fetch_add(1, Ordering::Relaxed);
        }
        Ok(Err(refusal)) => {
            let mut errors = shared.errors.lock().expect("no panic holds this lock");
            let count = errors.entry(refusal.class).or_default();
            *count += 1;
            return *count == 1;
        }
        Err(_) => {
            shared.panics.fetch_add(1, Ordering::Relaxed);
            let (location, message) = LAST_PANIC
                .with(|last| last.take())
                .unwrap_or_else(|| ("unknown".to_string(), "a panic".to_string()));
            if seen_panics.insert(location.clone()) {
                let message = format!("panicked at {location}: {message}");
                let finding = save(target.name, "panic", message, input.to_vec(), findings_dir);
                shared
                    .findings
                    .lock()
                    .expect("no panic holds this lock")
                    .push(finding);
            }
        }
    }
    false
}

/// Where the input being run is kept, so that it outlives a crash of the process.
pub(crate) fn current_path(findings_dir: &Path, target: &str) -> PathBuf {
    findings_dir.join(format!("{target}.current"))
}

/// The input being run, written to a file before it runs (one `pwrite` of its length and
/// bytes), because a stack overflow or an abort leaves no chance to save it afterwards.
struct KeptInput {
    file: Option<File>,
    buffer: Vec<u8>,
}

impl KeptInput {
    fn create(path: &Path) -> KeptInput {
        let file = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| File::create(path));
        if let Err(e) = &file {
            eprintln!(
                "fuzz: cannot keep inputs in {} ({e}); a crash will lose its input",
                path.display()
            );
        }
        KeptInput {
            file: file.ok(),
            buffer: Vec::new(),
        }
    }

    fn keep(&mut self, input: &[u8]) {
        let Some(file) = &self.file else { return };
        self.buffer.clear();
        self.buffer
            .extend_from_slice(&(input.len() as u64).to_le_bytes());
        self.buffer.extend_from_slice(input);
        if file.write_all_at(&self.buffer, 0).is_err() {
            self.file = None;
        }
    }
}

/// The input a crashed run kept (see [`KeptInput`]).
pub(crate) fn read_kept(path: &Path) -> std::io::Result<Vec<u8>> {
    let bytes = std::fs::read(path)?;
    let (len, rest) = bytes
        .split_at_checked(8)
        .ok_or(std::io::ErrorKind::UnexpectedEof)?;
    let len = u64::from_le_bytes(len.try_into().expect("8 bytes")) as usize;
    rest.get(..len)
        .map(<[u8]>::to_vec)
        .ok_or_else(|| std::io::ErrorKind::UnexpectedEof.into())
}

/// Saves a finding's input under `dir` (named by its target, kind and content) and prints it
/// with the command that replays it.
pub(crate) fn save(
    target: &str,
    kind: &'static str,
    message: String,
    input: Vec<u8>,
    dir: &Path,
) -> Finding {
    let hash = input.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let path = dir.join(format!("{target}-{kind}-{hash:016x}.input"));
    let saved = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, &input));
    eprintln!("fuzz {target}: {} {message}", kind.to_uppercase());
    let shown = String::from_utf8_lossy(&input[..input.len().min(2000)]).into_owned();
    eprintln!("  input ({} bytes): {shown:?}", input.len());
    let path = match saved {
        Ok(()) => {
            eprintln!(
                "  saved to {}; reproduce: cargo xtask fuzz --target {target} --replay {}",
                path.display(),
                path.display()
            );
            Some(path)
        }
        Err(e) => {
            eprintln!("  could not save it to {}: {e}", path.display());
            None
        }
    };
    debug_assert!(input.len() <= MAX_INPUT_BYTES);
    Finding {
        kind,
        message,
        input,
        path,
    }
}

/// The prefix of worker threads' names.
const FUZZ_THREAD_PREFIX: &str = "fuzz-";

std::thread_local! {
    /// Whether this thread is running a target's code, whose panics are findings.
    static IN_TARGET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The location and message of this thread's last panic.
    static LAST_PANIC: std::cell::Cell<Option<(String, String)>> = const { std::cell::Cell::new(None) };
}

/// Records the panics of the targets' code (a million panics would flood stderr) and passes
/// every other panic, the fuzzer's own included, to the hook that was there before.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !IN_TARGET.with(std::cell::Cell::get) {
                return previous(info);
            }
            let location = info
                .location()
                .map_or_else(|| "unknown".to_string(), ToString::to_string);
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic with no message".to_string());
            LAST_PANIC.with(|last| last.set(Some((location, message))));
        }));
    });
}
