//! What the C program tests share: building the library and the launcher, compiling a
//! program with the wrappers, and running a command with a deadline and its output in files.

#![allow(dead_code)]

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The repository's root, from this crate's manifest directory (`runtime/capi`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Fails with the install command when the system C or C++ compiler that the wrappers call is
/// missing: the programs cannot be judged without it.
pub fn require_compilers() {
    for compiler in ["cc", "c++"] {
        let found = Command::new(compiler)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            found,
            "the system compiler `{compiler}` is missing; install it with `apt-get install -y gcc g++`"
        );
    }
}

/// Builds `libshmem.so`/`libshmem.a` and the `rshmem` launcher that the wrappers use.
///
/// Why a nested cargo: `cargo test -p rshmem-capi` builds this crate only as the rlib the test
/// links, not the cdylib and staticlib that C programs link, and never the `tools` package
/// whose `rshmem` binary `oshrun` runs. The outer cargo releases the build directory's lock
/// before it runs tests, so the inner build shares the same `target/` and is quick when warm.
pub fn build_library_and_launcher() {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "-p", "rshmem-capi", "-p", "tools"])
        .current_dir(repo_root())
        .status()
        .expect("cargo could not be started");
    assert!(
        status.success(),
        "`cargo build --release -p rshmem-capi -p tools` failed: {status}"
    );
}

/// A fresh directory for the binaries and outputs of this run.
pub fn scratch_dir() -> PathBuf {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!(
        "rshmem-capi-programs-{}-{nanos}",
        std::process::id()
    ));
    fs::create_dir_all(&dir).expect("cannot create the scratch directory");
    dir
}

/// The end of a text, at most `max` bytes, cut at a character boundary.
pub fn tail(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// How a run ended.
#[derive(Debug)]
pub enum Outcome {
    Exited(ExitStatus),
    /// Killed at its deadline.
    TimedOut,
}

/// A finished run: how it ended and what it wrote.
#[derive(Debug)]
pub struct Run {
    pub outcome: Outcome,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `command` with output to files under `dir` (named by `tag`), killing its process
/// group at the deadline.
pub fn run_with_deadline(mut command: Command, dir: &Path, tag: &str, timeout: Duration) -> Run {
    use std::os::unix::process::CommandExt as _;
    let out_path = dir.join(format!("{tag}.stdout"));
    let err_path = dir.join(format!("{tag}.stderr"));
    let out = File::create(&out_path).expect("cannot create a stdout file");
    let err = File::create(&err_path).expect("cannot create a stderr file");
    // A group of its own, so that the deadline can end the launcher and every rank at once.
    command
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    let mut child = command.spawn().expect("cannot start the command");
    let deadline = Instant::now() + timeout;
    let outcome = loop {
        if let Some(status) = child.try_wait().expect("cannot poll the child") {
            break Outcome::Exited(status);
        }
        if Instant::now() >= deadline {
            // kill(1) with a negative id signals the whole group; no libc, no unsafe.
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = child.wait();
            break Outcome::TimedOut;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        outcome,
        stdout: fs::read_to_string(&out_path).unwrap_or_default(),
        stderr: fs::read_to_string(&err_path).unwrap_or_default(),
    }
}

/// Builds `source` (under `runtime/capi/tests`; `.cpp` with `oshc++`, else `oshcc`) with
/// the extra flags `extra` into `dir`; `Err` is the compiler's output.
pub fn compile_with(
    root: &Path,
    dir: &Path,
    source: &str,
    extra: &[&str],
) -> Result<PathBuf, String> {
    let path = root.join("runtime/capi/tests").join(source);
    let (wrapper, std) = if source.ends_with(".cpp") {
        ("oshc++", "-std=c++17")
    } else {
        ("oshcc", "-std=c11")
    };
    let stem = format!(
        "{}{}",
        source.replace(['/', '.'], "_"),
        extra.concat().replace(['-', '='], "_")
    );
    let binary = dir.join(&stem);
    let mut command = Command::new(root.join("tools/osh/bin").join(wrapper));
    command
        .args([std, "-O1", "-g", "-Wall", "-pthread"])
        .args(extra)
        .arg("-o")
        .arg(&binary)
        .arg(&path);
    let run = run_with_deadline(
        command,
        dir,
        &format!("{stem}.build"),
        Duration::from_secs(120),
    );
    match run.outcome {
        Outcome::Exited(status) if status.success() => Ok(binary),
        Outcome::Exited(status) => Err(format!("{wrapper} {status}:\n{}", tail(&run.stderr, 4000))),
        Outcome::TimedOut => Err(format!("{wrapper} did not finish in 120 s")),
    }
}

/// `oshrun ARGS` (or `rshmem ARGS` when `tool` is "rshmem") under `dir`, output in files named
/// by `tag`; fails the test if it runs past `timeout`.
pub fn run_tool(dir: &Path, tool: &str, args: &[&str], tag: &str, timeout: Duration) -> Run {
    let root = repo_root();
    let path = if tool == "rshmem" {
        root.join("target/release/rshmem")
    } else {
        root.join("tools/osh/bin").join(tool)
    };
    let mut command = Command::new(path);
    command.args(args);
    let run = run_with_deadline(command, dir, tag, timeout);
    assert!(
        !matches!(run.outcome, Outcome::TimedOut),
        "{tool} {args:?} hung"
    );
    run
}

/// The exit code of a run that ended (none if a signal ended it or it timed out).
pub fn exit_code(run: &Run) -> Option<i32> {
    match run.outcome {
        Outcome::Exited(status) => status.code(),
        Outcome::TimedOut => None,
    }
}
