//! `rshmem run --faults` and `rshmem swarm` as a user runs them (docs/faults.md).

use std::process::{Command, Output};

fn rshmem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rshmem"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn run_json(workload: &str, topology: &str, seed: u64, faults: &str) -> serde_json::Value {
    let seed = seed.to_string();
    let args = [
        "run",
        workload,
        "--topology",
        topology,
        "--seed",
        &seed,
        "--faults",
        faults,
        "--json",
    ];
    let out = rshmem(&args);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{args:?}: {}{}", text(&out.stdout), text(&out.stderr)))
}

/// The workloads check their own results; under slowdowns and stalls every check passes, on
/// every seed and topology tried, and the faults do change the run.
#[test]
fn workloads_keep_their_results_under_slowdowns_and_stalls() {
    let plans = [
        "slow-pe=random, link=random, stall=random",
        "slow-pe=1:6x, link=all:0.2x, stall=all:20us..70us",
    ];
    for workload in [
        "alltoall",
        "reduce",
        "moe-dispatch",
        "msg-rate",
        "flag-fence",
    ] {
        for topology in ["hgx8", "ib-2"] {
            for seed in 0..3 {
                let plain = run_json(workload, topology, seed, "none");
                assert_eq!(plain["ok"], true, "{workload} {topology} {seed}");
                for plan in plans {
                    let faulty = run_json(workload, topology, seed, plan);
                    assert_eq!(
                        faulty["ok"], true,
                        "{workload} on {topology}, seed {seed}, faults {plan}: {}",
                        faulty["failures"]
                    );
                    assert_ne!(faulty["trace_hash"], plain["trace_hash"]);
                    assert!(
                        faulty["faults"]
                            .as_str()
                            .is_some_and(|f| !f.contains("random"))
                    );
                }
            }
        }
    }
}

#[test]
fn a_seed_replays_a_run_with_faults_to_the_same_trace_hash() {
    let plan = "slow-pe=random, stall=random, crash=random";
    for seed in [4, 5] {
        let a = run_json("alltoall", "ib-2", seed, plan);
        let b = run_json("alltoall", "ib-2", seed, plan);
        assert_eq!(a["trace_hash"], b["trace_hash"]);
        assert_eq!(a["faults"], b["faults"]);
        assert_eq!(a["failures"], b["failures"]);
    }
}

#[test]
fn a_crash_fails_the_run_with_a_report_naming_the_crashed_pe() {
    let out = rshmem(&[
        "run",
        "ring",
        "--topology",
        "hgx8",
        "--seed",
        "1",
        "--faults",
        "crash=2@30us",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let failures: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("  failure: "))
        .collect();
    assert_eq!(failures[0], "PE 2 crashed at 30us (injected)", "{stdout}");
    assert!(
        stdout.contains("  PE 2 failed: crashed at 30us (injected)"),
        "{stdout}"
    );
    for pe in [0, 1, 3, 4, 5, 6, 7] {
        assert!(
            stdout.contains(&format!("  PE {pe} waits for ")),
            "PE {pe}'s wait named: {stdout}"
        );
    }
    assert!(
        stdout.contains("rerun with --seed 1 --faults 'crash=2@30us' to reproduce"),
        "{stdout}"
    );
}

#[test]
fn bad_fault_specs_fail_with_a_message_that_names_the_fix() {
    let cases = [
        (
            "crash=9@50us",
            "PE 9 does not exist: this run has 8 PEs (0 to 7)",
        ),
        (
            "stall=gpu2-nic:10us..60us",
            "no link or node \"gpu2-nic\" in topology \"hgx8\"",
        ),
        ("stall=nvlink:10us..6Ous", "\"6Ous\" is not a time"),
        ("slow-pe=3:fast", "\"fast\" is not a factor"),
        ("wobble=3", "unknown fault \"wobble\""),
    ];
    for (spec, expected) in cases {
        let out = rshmem(&["run", "ring", "--topology", "hgx8", "--faults", spec]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{spec}: {stderr}");
        assert!(stderr.contains(expected), "{spec}: {stderr}");
        assert!(!stderr.contains("panicked"), "{spec}: {stderr}");
    }
    let out = rshmem(&["run", "-n", "2", "--faults", "crash=1", "true"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--faults and --break apply to the built-in workloads only")
    );
    let help = text(&rshmem(&["run", "--help"]).stdout);
    for part in [
        "slow-pe=PE:Fx",
        "stall=LINKS:FROM..TO",
        "crash=PE@TIME",
        "docs/faults.md",
    ] {
        assert!(help.contains(part), "run --help explains {part}");
    }
}

#[test]
fn swarm_passes_correct_workloads_under_every_kind_of_fault() {
    let out = rshmem(&[
        "swarm",
        "--seeds",
        "3",
        "--workloads",
        "ring,alltoall,broadcast",
        "--topologies",
        "hgx8,ib-2",
        "--faults",
        "none;slow-pe=random,link=random;stall=random;crash=random",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("swarm: 72 runs (3 workloads x 2 topologies x 4 plans x 3 seeds)"),
        "{stdout}"
    );
    assert!(stdout.contains("0 failed"), "{stdout}");
    let crashed = stdout
        .split("failed; ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse::<u32>().ok())
        .expect("the summary counts the crash reports");
    assert!(
        crashed > 0,
        "some random crashes land while PEs run: {stdout}"
    );
}

/// A broken ordering rule makes moe-dispatch read data before it arrived: the swarm must report
/// it, with a command that replays the failure.
#[test]
fn swarm_finds_a_planted_failure_and_prints_the_command_that_replays_it() {
    let out = rshmem(&[
        "swarm",
        "--seeds",
        "2",
        "--workloads",
        "ring,moe-dispatch",
        "--topologies",
        "hgx8",
        "--faults",
        "none;slow-pe=random",
        "--break",
        "signal-before-data",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let failed: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("FAILED "))
        .collect();
    assert!(!failed.is_empty(), "{stdout}");
    assert!(
        failed
            .iter()
            .all(|l| l.starts_with("FAILED moe-dispatch on hgx8")),
        "only the workload that notices fails: {stdout}"
    );
    assert!(stdout.contains("check failed"), "{stdout}");
    let replay = stdout
        .lines()
        .find_map(|l| l.strip_prefix("  replay: rshmem "))
        .expect("a replay command");
    assert!(replay.contains("--break signal-before-data"), "{replay}");
    let args = shell_words(replay);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let again = rshmem(&args);
    assert_eq!(
        again.status.code(),
        Some(1),
        "the replay fails too: {replay}"
    );
    assert!(text(&again.stdout).contains("check failed"));
}

/// Splits a command line of words and single-quoted strings, as the swarm writes them.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut rest = line.trim();
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('\'') {
            let end = quoted.find('\'').expect("a closing quote");
            words.push(quoted[..end].to_string());
            rest = quoted[end + 1..].trim_start();
        } else {
            let end = rest.find(' ').unwrap_or(rest.len());
            words.push(rest[..end].to_string());
            rest = rest[end..].trim_start();
        }
    }
    words
}
