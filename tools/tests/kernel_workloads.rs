//! The NVSHMEM guide's examples as built-in kernel workloads (docs/kernels.md): each passes its own
//! check with `--json` on 8 PEs of hgx8 and 64 PEs of ib-8 (docs/kernels.md), on odd
//! PE counts, and moves the data it should (one transfer per scoped call).

use std::process::Command;

/// The kernel workloads, in the order `rshmem run --help` lists them.
const KERNEL_WORKLOADS: [&str; 8] = [
    "ring",
    "reduce",
    "alltoall",
    "broadcast",
    "fcollect",
    "matmul",
    "moe-dispatch",
    "deepep-ll",
];

/// `rshmem run WORKLOAD --pes N --topology T --json`, parsed; panics unless it exits 0.
fn run(workload: &str, pes: u32, topology: &str) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_rshmem"))
        .args([
            "run",
            workload,
            "--pes",
            &pes.to_string(),
            "--topology",
            topology,
            "--json",
        ])
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "{workload} on {pes} PEs of {topology}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// Every kernel workload on `pes` PEs of `topology` reports ok; returns each one's report.
fn all_ok(pes: u32, topology: &str) -> Vec<serde_json::Value> {
    KERNEL_WORKLOADS
        .iter()
        .map(|workload| {
            let v = run(workload, pes, topology);
            assert_eq!(v["ok"], true, "{workload} on {pes} PEs of {topology}: {v}");
            assert_eq!(v["workload"], *workload);
            assert_eq!(v["pes"], pes);
            assert!(v["sim_time_ns"].as_u64().unwrap() > 0, "{v}");
            v
        })
        .collect()
}

#[test]
fn every_kernel_workload_is_ok_on_8_pes_of_hgx8() {
    all_ok(8, "hgx8");
}

#[test]
fn every_kernel_workload_is_ok_on_64_pes_of_ib_8() {
    all_ok(64, "ib-8");
}

#[test]
fn every_kernel_workload_is_ok_on_odd_pe_counts() {
    all_ok(1, "h200x2");
    all_ok(5, "hgx8");
}

#[test]
fn kernel_workloads_move_one_transfer_per_scoped_call() {
    let n: u64 = 8;
    let reports = all_ok(8, "hgx8");
    let counts = |name: &str| {
        let at = KERNEL_WORKLOADS.iter().position(|w| *w == name).unwrap();
        reports[at]["op_counts"].clone()
    };
    // ring: one p per thread (64 per PE).
    assert_eq!(counts("ring")["puts"], 64 * n);
    // alltoall and fcollect: one put per PE from each PE's block, whatever its threads.
    assert_eq!(counts("alltoall")["puts"], n * n);
    assert_eq!(counts("fcollect")["puts"], n * n);
    // broadcast: the root puts to every PE, twice.
    assert_eq!(counts("broadcast")["puts"], 2 * n);
    // reduce: one get of every PE's partial sums per PE.
    assert_eq!(counts("reduce")["gets"], n * n);
    // matmul: one g per multiply: rows (2 per PE) x columns (32) x shared dimension (32).
    assert_eq!(counts("matmul")["gets"], 2 * 32 * 32 * n);
    // moe-dispatch: one put_nbi_warp per token and expert (16 tokens, top 2), one
    // put-with-signal of counts per pair of PEs.
    assert_eq!(counts("moe-dispatch")["puts"], 16 * 2 * n);
    assert_eq!(counts("moe-dispatch")["put_signals"], n * n);
    // deepep-ll: one put_nbi_warp per token and expert each way (16 tokens, top 8 of 16
    // experts), one put-with-signal of counts per pair of PEs each way.
    assert_eq!(counts("deepep-ll")["puts"], 2 * 16 * 8 * n);
    assert_eq!(counts("deepep-ll")["put_signals"], 2 * n * n);
    let phases = reports[7]["phases"]
        .as_array()
        .expect("deepep-ll reports its phases");
    let names: Vec<_> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["dispatch", "combine"]);
    assert!(phases.iter().all(|p| p["mean_ns"].as_u64().unwrap() > 0
        && p["max_ns"].as_u64().unwrap() >= p["mean_ns"].as_u64().unwrap()));
}

/// `--moe` shapes the deepep workloads: DeepEP's low-latency benchmark's shape on two nodes
/// moves 128 tokens to 8 experts each way, and a shape that does not fit says how to fix it.
#[test]
fn the_moe_shape_is_taken_and_checked() {
    let out = Command::new(env!("CARGO_BIN_EXE_rshmem"))
        .args([
            "run",
            "deepep-ll",
            "--pes",
            "16",
            "--topology",
            "ib-2",
            "--json",
        ])
        .args(["--moe", "tokens=128,hidden=7168,topk=8,experts=256"])
        .output()
        .expect("the binary runs");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["op_counts"]["puts"], 2 * 128 * 8 * 16);
    let bytes_put = v["op_counts"]["bytes_put"].as_u64().unwrap();
    assert!(bytes_put >= 2 * 128 * 8 * 16 * 7168, "{v}");
    let out = Command::new(env!("CARGO_BIN_EXE_rshmem"))
        .args(["run", "deepep-ll", "--pes", "8", "--moe", "experts=12"])
        .output()
        .expect("the binary runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("try experts=16"),
        "{err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_rshmem"))
        .args(["run", "ring", "--pes", "8", "--moe", "tokens=4"])
        .output()
        .expect("the binary runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("deepep-* workloads only"),
        "{err}"
    );
}
