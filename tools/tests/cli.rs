//! The `rshmem` binary as a user runs it.

use std::path::PathBuf;
use std::process::{Command, Output};

fn rshmem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rshmem"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = rshmem(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rshmem-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn ring_on_hgx8_is_ok_and_its_trace_hash_is_stable() {
    let args = [
        "run",
        "ring",
        "--pes",
        "8",
        "--topology",
        "hgx8",
        "--seed",
        "1",
        "--json",
    ];
    let a = json(&args);
    let b = json(&args);
    assert_eq!(a["ok"], true);
    assert_eq!(a["trace_hash"], b["trace_hash"]);
    for key in [
        "workload",
        "pes",
        "topology",
        "seed",
        "sim_time_ns",
        "startup_ns",
        "ops",
        "wall_s",
    ] {
        assert!(a.get(key).is_some(), "missing {key}");
    }
    assert_eq!(a["pes"], 8);
    assert_eq!(a["seed"], 1);
}

#[test]
fn put_bw_rises_and_reaches_the_modelled_nv18_bandwidth() {
    let v = json(&[
        "run",
        "put-bw",
        "--pes",
        "2",
        "--topology",
        "h200x2",
        "--json",
    ]);
    assert_eq!(v["ok"], true, "{v}");
    let curve = v["curve"].as_array().unwrap();
    assert_eq!(curve.first().unwrap()["bytes"], 8);
    let last = curve.last().unwrap();
    assert_eq!(last["bytes"], 256u64 << 20);
    let gbps = last["gbps"].as_f64().unwrap();
    // The model: the slower of the NV18 link and the GPU's own copy rate for large puts.
    let h200x2 = sim::topology::presets::preset("h200x2").unwrap();
    let link = h200x2
        .topology
        .link(hw::topology::LinkId(0))
        .bandwidth_bytes_per_s;
    let mover = h200x2.timing.copy.device.asymptotic_bytes_per_s().unwrap();
    let model = link.min(mover) as f64 / 1e9;
    assert!((gbps - model).abs() / model < 0.05, "{gbps} vs {model}");
    assert_eq!(v["modelled_gbps"].as_f64().unwrap(), model, "{v}");
    // The calibrated start-up is part of the simulated time, and said apart.
    let startup_ns = h200x2.timing.startup_ns;
    assert_eq!(v["startup_ns"], startup_ns, "{v}");
    assert!(v["sim_time_ns"].as_u64().unwrap() > startup_ns, "{v}");
    assert!(curve.first().unwrap()["gbps"].as_f64().unwrap() < gbps / 10.0);
}

#[test]
fn alltoall_on_1024_pes_of_ib_128_is_ok() {
    let v = json(&[
        "run",
        "alltoall",
        "--pes",
        "1024",
        "--topology",
        "ib-128",
        "--json",
    ]);
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["op_counts"]["puts"], 1024 * 1024);
}

#[test]
fn every_workload_checks_out_on_small_topologies() {
    for workload in ["hello", "ring", "reduce", "alltoall", "msg-rate"] {
        for (topology, pes) in [("h200x2", "2"), ("hgx8", "5"), ("ib-2", "16")] {
            let v = json(&[
                "run",
                workload,
                "--pes",
                pes,
                "--topology",
                topology,
                "--json",
            ]);
            assert_eq!(v["ok"], true, "{workload} on {topology}: {v}");
        }
    }
}

#[test]
fn bad_arguments_fail_with_a_message_that_names_the_fix() {
    let cases: [(&[&str], &str); 5] = [
        (&["run", "nope"], "unknown workload \"nope\""),
        (&["run", "ring", "--topology", "nope"], "h200x2"),
        (
            &["run", "ring", "--topology", "hgx8", "--pes", "9"],
            "has 8 GPUs",
        ),
        (&["run", "ring", "--pes", "0"], "at least one PE"),
        (&["run", "put-bw", "--pes", "1"], "--pes 2"),
    ];
    for (args, needle) in cases {
        let out = rshmem(args);
        assert!(!out.status.success(), "{args:?} succeeded");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

#[test]
fn a_malformed_topology_file_names_its_line() {
    let path = scratch("bad.toml");
    std::fs::write(&path, "name = \"x\"\n[[node]]\nname = \"g0\"\nkind = \"gpu\"\n[[link]]\na = \"g0\"\nb = \"g9\"\nkind = \"nvlink\"\nlatency_ns = 1\ngbps = 1\n").unwrap();
    let out = rshmem(&["run", "ring", "--topology", path.to_str().unwrap()]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.toml:7:"), "{stderr}");
}

#[test]
fn trace_and_drawings_are_written() {
    let trace = scratch("trace.json");
    let v = json(&[
        "run",
        "ring",
        "--pes",
        "4",
        "--topology",
        "hgx8",
        "--trace",
        trace.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(v["ok"], true);
    let parsed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let events = parsed["traceEvents"].as_array().unwrap();
    assert!(
        events.iter().any(|e| e["ph"] == "X" && e["pid"] == 1),
        "PE spans"
    );
    assert!(
        events.iter().any(|e| e["ph"] == "X" && e["pid"] == 2),
        "link spans"
    );

    let (dot, svg) = (scratch("t.dot"), scratch("t.svg"));
    let out = rshmem(&[
        "topo",
        "ib-2",
        "--dot",
        dot.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("16"));
    assert!(
        std::fs::read_to_string(&dot).unwrap().contains("digraph")
            || std::fs::read_to_string(&dot).unwrap().contains("graph")
    );
    assert!(
        std::fs::read_to_string(&svg)
            .unwrap()
            .trim_end()
            .ends_with("</svg>")
    );
}

#[test]
fn check_finds_the_race_of_a_flag_put_without_a_fence() {
    let out = rshmem(&["check", "flag-nofence"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("1 race"), "{text}");
    assert!(text.contains("first:  PE 0 put of 128 B"), "{text}");
    assert!(text.contains("second: PE 1 local read of 128 B"), "{text}");
    assert!(
        text.contains("replay: rshmem check flag-nofence --runs 1 --seed 0 --pes 8"),
        "{text}"
    );
}

#[test]
fn check_finds_no_race_once_the_fence_is_there() {
    let out = rshmem(&["check", "flag-fence"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("no races"), "{text}");
}

#[test]
fn check_json_names_both_operations_and_the_seed() {
    let out = rshmem(&[
        "check",
        "flag-nofence",
        "--runs",
        "3",
        "--seed",
        "5",
        "--pes",
        "2",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["workload"], "flag-nofence");
    assert_eq!(v["runs"], 3);
    let race = &v["races"][0];
    assert_eq!(race["first"]["pe"], 0);
    assert_eq!(race["first"]["kind"], "put");
    assert_eq!(race["first"]["target"], 1);
    assert_eq!(race["second"]["pe"], 1);
    assert_eq!(race["second"]["kind"], "local read");
    assert_eq!(race["seed"], 5);
    assert_eq!(race["runs_with_race"], 3);
}

#[test]
fn check_with_random_delays_finds_the_race_and_replays_it() {
    let args = [
        "--schedule",
        "delays",
        "--depth",
        "2",
        "--runs",
        "4",
        "--pes",
        "2",
    ];
    let out = rshmem(&[&["check", "flag-nofence"][..], &args[..]].concat());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("4 delays(2) runs"), "{text}");
    assert!(text.contains("--schedule delays --depth 2"), "{text}");

    let out = rshmem(&[&["check", "flag-fence"][..], &args[..]].concat());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("no races"), "{text}");
}

#[test]
fn check_rejects_an_unknown_workload_with_status_2() {
    let out = rshmem(&["check", "no-such-workload"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("flag-nofence"));
}

#[test]
fn calibrate_help_says_what_it_fits_and_how() {
    let out = rshmem(&["calibrate", "--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "--measured <RAW_FILE>",
        "--preset <PRESET|FILE>",
        "[default: h200x2]",
        "--out <FILE.toml>",
        "--table",
        "--svg <FILE.svg>",
        "poll_ns, fence_ns and release_ns",
        "the copy curve of each mover",
        "Every metric of the bench is modelled",
        "rshmem bench --raw bench.raw",
    ] {
        assert!(text.contains(needle), "{needle:?} in {text}");
    }
}

#[test]
fn calibrate_refuses_what_it_cannot_fit_naming_the_file_and_line() {
    let bad = scratch("bad.raw");
    std::fs::write(&bad, "init_ms=140.0\np_pingpong half_rtt_us=slow\n").unwrap();
    let partial = scratch("partial.raw");
    std::fs::write(&partial, "p_pingpong half_rtt_us=1.2\n").unwrap();
    let wide = scratch("wide.raw");
    std::fs::write(&wide, "broadcast_in_kernel pes=16 bytes=8 us=9.0\n").unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["calibrate", "--measured", "no/such.raw"],
            "cannot read the measured bench lines no/such.raw",
        ),
        (
            &["calibrate", "--measured", bad.to_str().unwrap()],
            "bad.raw: line 2: \"p_pingpong half_rtt_us=slow\" is not",
        ),
        (
            &["calibrate", "--measured", partial.to_str().unwrap()],
            "partial.raw lacks 41 of the metrics the simulator models: init_ms, malloc_1GiB_ms, ",
        ),
        (
            &[
                "calibrate",
                "--measured",
                partial.to_str().unwrap(),
                "--preset",
                "hgx8",
            ],
            "partial.raw has no lines of the collective benchmark",
        ),
        (
            &[
                "calibrate",
                "--measured",
                wide.to_str().unwrap(),
                "--preset",
                "hgx8",
            ],
            "wide.raw:1: broadcast_in_kernel 16 PEs 8 B us was measured on 16 PEs",
        ),
    ];
    for (args, needle) in cases {
        let out = rshmem(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

#[test]
fn bench_collectives_refuses_one_pe_and_says_what_it_needs() {
    let out = rshmem(&["bench", "--collectives", "--pes", "4,1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a collective needs 2 PEs or more"), "{err}");
    let help = String::from_utf8_lossy(&rshmem(&["bench", "--help"]).stdout).into_owned();
    assert!(help.contains("--collectives measures"), "{help}");
    if hw::cuda::probe().is_ok() {
        return; // With CUDA the command would measure.
    }
    let out = rshmem(&["bench", "--collectives", "--share-gpus"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: rshmem bench --collectives measures the CUDA backend: "),
        "{err}"
    );
}

#[test]
fn dropped_payloads_stop_a_workload_that_reads_them_back_with_one_message() {
    let out = rshmem(&[
        "run",
        "alltoall",
        "--pes",
        "8",
        "--drop-payloads-from",
        "64",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let failures: Vec<&str> = summary["failures"]
        .as_array()
        .expect("failures")
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    // Once for the run, not again for every PE it unwound.
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].contains("a put of at least 64 bytes wrote without its bytes")
            && failures[0].contains("--drop-payloads-from"),
        "{failures:?}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The same workload keeps puts below the size, and checks out.
    let kept = json(&[
        "run",
        "alltoall",
        "--pes",
        "8",
        "--drop-payloads-from",
        "1k",
        "--json",
    ]);
    assert_eq!(kept["ok"], true);
    let bad = rshmem(&["run", "alltoall", "--drop-payloads-from", "64x"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a size"));
    let program = rshmem(&["run", "-n", "2", "--drop-payloads-from", "1k", "./prog"]);
    assert_eq!(program.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&program.stderr).contains("built-in workloads only"));
}

#[test]
fn check_reports_the_same_with_its_runs_side_by_side_or_one_at_a_time() {
    let run = |jobs: &str| {
        let out = rshmem(&[
            "check",
            "flag-nofence",
            "--runs",
            "8",
            "--pes",
            "4",
            "--schedule",
            "delays",
            "--json",
            "--jobs",
            jobs,
        ]);
        assert_eq!(out.status.code(), Some(1));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("one JSON object")
    };
    let alone = run("1");
    assert!(!alone["races"].as_array().unwrap().is_empty());
    assert_eq!(alone, run("3"));
    let out = rshmem(&["check", "-n", "2", "--jobs", "2", "./prog"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("drop --jobs"));
}
