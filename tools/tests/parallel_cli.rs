//! `rshmem run --partitions` as a user runs it (docs/sim-parallel.md): the workloads keep
//! their results, and the run is the same for any number of threads.

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

/// One run's `--json` object.
fn run_json(workload: &str, pes: u32, topology: &str, extra: &[&str]) -> serde_json::Value {
    let pes = pes.to_string();
    let mut args = vec![
        "run",
        workload,
        "--pes",
        &pes,
        "--topology",
        topology,
        "--seed",
        "5",
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = rshmem(&args);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{args:?}: {}{}", text(&out.stdout), text(&out.stderr)))
}

/// Every kind of operation crosses partitions in these (puts, gets, atomics, puts with
/// signal, the bootstrap exchange, barriers); each workload checks what it received. The
/// trace hash covers every issue, delivery and completion, so equal hashes are equal runs.
#[test]
fn partitions_keep_results_and_threads_change_nothing() {
    for workload in ["alltoall", "reduce", "deepep-ll", "msg-rate", "ring"] {
        let one = run_json(
            workload,
            32,
            "ib-4",
            &["--partitions", "2", "--threads", "1"],
        );
        let two = run_json(
            workload,
            32,
            "ib-4",
            &["--partitions", "2", "--threads", "2"],
        );
        assert_eq!(one["ok"], true, "{workload} on one thread: {one}");
        assert_eq!(two["ok"], true, "{workload} on two threads: {two}");
        for field in ["trace_hash", "sim_time_ns", "events", "ops"] {
            assert_eq!(one[field], two[field], "{workload}: {field}");
        }
        let whole = run_json(workload, 32, "ib-4", &[]);
        assert_eq!(whole["ops"], one["ops"], "{workload}: the same program");
        assert_ne!(
            whole["trace_hash"], one["trace_hash"],
            "{workload}: partitions draw their own chances, so the run is another"
        );
    }
    // The default, a thread per core.
    let one = run_json(
        "alltoall",
        32,
        "ib-4",
        &["--partitions", "2", "--threads", "1"],
    );
    let default = run_json("alltoall", 32, "ib-4", &["--partitions", "2"]);
    assert_eq!(one["trace_hash"], default["trace_hash"]);
    // Uneven: three partitions of four hosts, on two threads and on three.
    let two = run_json(
        "alltoall",
        32,
        "ib-4",
        &["--partitions", "3", "--threads", "2"],
    );
    let three = run_json(
        "alltoall",
        32,
        "ib-4",
        &["--partitions", "3", "--threads", "3"],
    );
    assert_eq!(two["ok"], true, "{two}");
    assert_eq!(two["trace_hash"], three["trace_hash"]);
}

/// What cannot be split is refused, saying why and what to do.
#[test]
fn what_cannot_be_split_is_refused_with_the_reason() {
    let cases: [(&[&str], &str); 3] = [
        (
            &["run", "ring", "--topology", "hgx8", "--partitions", "2"],
            "at least 2 hosts",
        ),
        (
            &[
                "run",
                "ring",
                "--topology",
                "ib-2",
                "--partitions",
                "2",
                "--trace",
                "/dev/null",
            ],
            "a timeline is drawn from one world",
        ),
        (
            &[
                "run",
                "ring",
                "--topology",
                "ib-2",
                "--partitions",
                "2",
                "--faults",
                "slow-pe=1:2x",
            ],
            "injected faults",
        ),
    ];
    for (args, reason) in cases {
        let out = rshmem(args);
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{args:?} ran");
        assert!(err.contains(reason), "{args:?}: {err}");
        assert!(
            err.contains("without partitions") || err.contains("fewer"),
            "{err}"
        );
    }
}
