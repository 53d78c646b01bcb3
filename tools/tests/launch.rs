//! `rshmem run -n N PROGRAM`: the launcher as a user runs it.
//!
//! The ranks are small shell programs, and, for the bootstrap end to end, this test binary
//! itself: run with `--exact child_rank` under the launcher, its `child_rank` test acts as a
//! rank (outside the launcher it does nothing).

use std::process::{Command, Output};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use hw::bootstrap::{BootstrapClient, BootstrapEnv, BootstrapError};

/// Which behaviour `child_rank` plays, when the launcher runs this binary as a rank.
const MODE_VAR: &str = "RSHMEM_LAUNCH_TEST_MODE";

/// One launch at a time: the launcher kills the other ranks 2 s after one fails, and on a
/// 2-core machine several launches side by side can starve a rank for that long, so a test
/// that checks what the other ranks printed would see them killed first.
static ONE_LAUNCH: Mutex<()> = Mutex::new(());

fn launch(command: &mut Command) -> Output {
    let _one = ONE_LAUNCH.lock().unwrap_or_else(PoisonError::into_inner);
    command.output().expect("the binary runs")
}

fn rshmem(args: &[&str]) -> Output {
    launch(Command::new(env!("CARGO_BIN_EXE_rshmem")).args(args))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_rank_gets_its_rank_the_rank_count_and_a_private_socket_path() {
    let script = r#"test "$RSHMEM_N_RANKS" = 3 || exit 10
case "$RSHMEM_RANK" in 0|1|2) ;; *) exit 11;; esac
dir=$(dirname "$RSHMEM_BOOTSTRAP_SOCKET")
test -d "$dir" || exit 12
test "$(stat -c %a "$dir")" = 700 || exit 13
echo "rank $RSHMEM_RANK"
"#;
    let out = rshmem(&["run", "-n", "3", "/bin/sh", "-c", script]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let mut lines: Vec<&str> = text.lines().map(str::trim).collect();
    lines.sort_unstable();
    assert_eq!(lines, ["rank 0", "rank 1", "rank 2"]);
}

#[test]
fn arguments_after_the_program_are_the_programs_even_where_rshmem_run_has_that_option() {
    let out = rshmem(&[
        "run",
        "-n",
        "1",
        "/bin/echo",
        "--seed",
        "3",
        "--json",
        "-n",
        "2",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "--seed 3 --json -n 2");
    let out = rshmem(&["run", "--np=2", "--", "/bin/echo", "--pes", "x"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).lines().collect::<Vec<_>>(),
        ["--pes x", "--pes x"]
    );
}

#[test]
fn the_exit_status_is_zero_only_if_every_rank_exits_zero() {
    let out = rshmem(&["run", "-n", "2", "/bin/sh", "-c", "exit 0"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = rshmem(&[
        "run",
        "-n",
        "3",
        "/bin/sh",
        "-c",
        r#"test "$RSHMEM_RANK" = 2 && exit 7; exit 0"#,
    ]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("rank 2 exited with status 7"),
        "{}",
        stderr(&out)
    );
    let out = rshmem(&["run", "-n", "1", "/bin/sh", "-c", "kill -SEGV $$"]);
    assert_eq!(out.status.code(), Some(128 + 11), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("rank 0 was killed by signal 11 (SIGSEGV)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_failed_rank_gets_the_others_killed_quickly_and_is_named() {
    let start = Instant::now();
    // `exec` so that the killed process is the sleep itself, not a shell above it.
    let out = rshmem(&[
        "run",
        "-n",
        "3",
        "/bin/sh",
        "-c",
        r#"if [ "$RSHMEM_RANK" = 1 ]; then exit 3; fi; exec sleep 30"#,
    ]);
    let elapsed = start.elapsed();
    let err = stderr(&out);
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}: {err}");
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("rank 1 exited with status 3"), "{err}");
    assert!(
        err.contains("rank 0 was killed by the launcher 2 s after rank 1 failed"),
        "{err}"
    );
    assert!(
        err.contains("1 of 3 ranks failed, 2 killed by the launcher"),
        "{err}"
    );
}

#[test]
fn timeout_s_kills_every_rank() {
    let start = Instant::now();
    let out = rshmem(&[
        "run",
        "-n",
        "2",
        "--timeout-s",
        "1",
        "/bin/sh",
        "-c",
        "exec sleep 30",
    ]);
    assert!(start.elapsed() < Duration::from_secs(10));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--timeout-s 1 passed"),
        "{}",
        stderr(&out)
    );
}

/// `rshmem args` exits with status 2 and says `says` on stderr.
fn refused(args: &[&str], says: &str) {
    let out = rshmem(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
}

#[test]
fn bad_launches_are_clear_errors() {
    refused(&["run", "-n", "0", "/bin/true"], "at least one process");
    refused(
        &["run", "-n", "2", "no-such-program-rshmem"],
        "not found in PATH",
    );
    refused(&["run", "-n", "2", "ring"], "built-in workload");
    refused(
        &["run", "-n", "2", "--seed", "1", "/bin/true"],
        "need --sim TOPOLOGY",
    );
    refused(&["run", "hello", "--timeout-s", "5"], "--timeout-s");
    refused(&["run", "hello", "extra"], "pass -n N");
}

#[test]
fn the_simulator_mode_still_runs_workloads() {
    let out = rshmem(&["run", "hello", "--pes", "2", "--topology", "h200x2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("hello on 2 PEs of h200x2"),
        "{}",
        stdout(&out)
    );
}

/// Runs this test binary's `child_rank` as each rank.
fn launch_self(n: &str, mode: &str) -> Output {
    let me = std::env::current_exe().expect("the test binary's path");
    launch(
        Command::new(env!("CARGO_BIN_EXE_rshmem"))
            .args(["run", "-n", n])
            .arg(me)
            .args(["--exact", "child_rank", "--nocapture", "--test-threads=1"])
            .env(MODE_VAR, mode),
    )
}

#[test]
fn ranks_exchange_bytes_through_the_launchers_bootstrap() {
    let out = launch_self("3", "exchange");
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    for rank in 0..3 {
        assert!(
            stdout(&out).contains(&format!("rank {rank} of 3 saw [0, 1, 2]")),
            "{}",
            stdout(&out)
        );
    }
}

#[test]
fn a_rank_that_exits_during_the_bootstrap_is_named_by_the_others() {
    let start = Instant::now();
    let out = launch_self("3", "rank-1-exits");
    assert!(start.elapsed() < Duration::from_secs(10));
    let (out_text, err) = (stdout(&out), stderr(&out));
    // Rank 1 exits 3 and the others 4 within a poll of each other: any of them may be the
    // first the launcher sees.
    assert!(
        matches!(out.status.code(), Some(3 | 4)),
        "{out_text}\n{err}"
    );
    assert!(err.contains("rank 1 exited with status 3"), "{err}");
    // The bootstrap tells the waiting ranks, and the launcher, who left.
    assert!(out_text.contains("rank 0: PeerLost [1]"), "{out_text}");
    assert!(out_text.contains("rank 2: PeerLost [1]"), "{out_text}");
    assert!(err.contains("rank 1 left"), "{err}");
}

#[test]
fn a_global_exit_ends_every_rank_at_once_with_its_status() {
    for status in [5, 0] {
        let start = Instant::now();
        let out = launch_self("3", &format!("global-exit-{status}"));
        let (elapsed, err) = (start.elapsed(), stderr(&out));
        assert_eq!(out.status.code(), Some(status), "{err}");
        assert!(
            err.contains(&format!("rank 1 called shmem_global_exit({status})")),
            "{err}"
        );
        // The others sleep for 30 s: they were killed, without the failure's grace period.
        assert!(!err.contains("2 s after"), "{err}");
        assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}: {err}");
    }
}

/// A rank of the launcher tests above; nothing outside the launcher.
#[test]
fn child_rank() {
    let Some(mode) = std::env::var_os(MODE_VAR) else {
        return;
    };
    let env = BootstrapEnv::from_env()
        .expect("the launcher's environment is well formed")
        .expect("the launcher set it");
    let deadline = Instant::now() + Duration::from_secs(20);
    let connected = BootstrapClient::connect(&env, deadline);
    if mode == "rank-1-exits" && env.rank == 1 {
        std::process::exit(3);
    }
    // A rank slowed down may connect after rank 1 left: the server tells it so at once.
    let mut client = match connected {
        Ok(client) => client,
        Err(BootstrapError::PeerLost { waited_for }) => {
            println!("rank {}: PeerLost {waited_for:?}", env.rank);
            std::process::exit(4);
        }
        Err(e) => panic!("rank {}: connect: {e}", env.rank),
    };
    if let Some(status) = mode.to_str().and_then(|m| m.strip_prefix("global-exit-")) {
        // Rank 1 ends the job; the others wait to be killed, never reaching a collective.
        if env.rank == 1 {
            let status: i32 = status.parse().expect("a status");
            client.global_exit(status).expect("global exit sent");
            std::process::exit(status);
        }
        std::thread::sleep(Duration::from_secs(30));
        std::process::exit(6);
    }
    match client.allgather(&[env.rank as u8], deadline) {
        Ok(all) => {
            let seen: Vec<u8> = all.into_iter().flatten().collect();
            println!("rank {} of {} saw {seen:?}", env.rank, env.n_ranks);
        }
        Err(BootstrapError::PeerLost { waited_for }) => {
            println!("rank {}: PeerLost {waited_for:?}", env.rank);
            std::process::exit(4);
        }
        Err(e) => panic!("rank {}: {e}", env.rank),
    }
}
