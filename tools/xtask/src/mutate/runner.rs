//! The process runner: runs one test command in a process group of its own, with a timeout,
//! and says why it failed; catches SIGHUP, SIGINT and SIGTERM so the caller can restore the
//! mutated file and stop.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering as StdOrdering};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::report::secs;

/// Set by the signal handler; the runner polls it.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
pub(crate) mod signals {
    use super::{INTERRUPTED, StdOrdering};

    extern "C" fn on_signal(_: libc::c_int) {
        // Only an atomic store: async-signal-safe.
        INTERRUPTED.store(true, StdOrdering::SeqCst);
    }

    /// Catches SIGHUP, SIGINT and SIGTERM, so that the runner can restore files and stop.
    pub(crate) fn install() {
        for sig in [libc::SIGHUP, libc::SIGINT, libc::SIGTERM] {
            // SAFETY: `on_signal` has the handler's C signature and does nothing but store to
            // an atomic, which is async-signal-safe.
            unsafe {
                libc::signal(
                    sig,
                    on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
                );
            }
        }
    }

    /// Sends `sig` to the process group `pgid` (the test command and its children).
    pub(super) fn kill_group(pgid: u32, sig: libc::c_int) {
        if let Ok(pgid) = libc::pid_t::try_from(pgid) {
            // SAFETY: `kill` only sends a signal; a negative pid names our child's own group.
            unsafe {
                libc::kill(-pgid, sig);
            }
        }
    }
}

/// How one command run ended.
pub(crate) enum Outcome {
    Passed,
    Failed(String),
    Interrupted,
}

/// Runs `cmd` with `sh -c` in a process group of its own, up to `timeout`; the output goes to
/// `log` (or nowhere). On failure, says why: the failed tests, a build error, a timeout.
pub(crate) fn run_command(
    cmd: &str,
    timeout: Duration,
    log: Option<&Path>,
) -> anyhow::Result<Outcome> {
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
                signals::kill_group(child.id(), libc::SIGTERM);
                std::thread::sleep(Duration::from_secs(2));
                signals::kill_group(child.id(), libc::SIGKILL);
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

#[cfg(test)]
mod tests {
    use super::*;

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
