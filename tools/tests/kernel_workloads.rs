//! The NVSHMEM guide's examples as built-in kernel workloads (docs/kernels.md): each passes its own
//! check with `--json` on 8 PEs of hgx8 and 64 PEs of ib-8 (docs/kernels.md), on odd
//! PE counts, and moves the data it should (one transfer per scoped call).

use std::process::Command;

use tools::workloads::MoeShape;

/// The kernel workloads, in the order `rshmem run --help` lists them.
const KERNEL_WORKLOADS: [&str; 9] = [
    "ring",
    "reduce",
    "alltoall",
    "broadcast",
    "fcollect",
    "matmul",
    "moe-dispatch",
    "deepep-ll",
    "deepep-normal",
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
    phases_are(&reports[7], &["dispatch", "combine"]);
    // deepep-normal on one node: over NVLink only, each token once to each PE with one of
    // its experts (a put) and each PE's sum once back (a put-with-signal); the notify's two
    // all-to-alls put once per pair of PEs each, and each PE tells each PE how many tokens
    // it sent there (a put-with-signal).
    let traffic = two_hop_traffic(n as u32, 8, &MoeShape::default());
    assert_eq!(traffic.over_ib, 0);
    assert_eq!(
        counts("deepep-normal")["put_signals"],
        traffic.over_nvlink + n * n
    );
    assert_eq!(
        counts("deepep-normal")["puts"],
        2 * n * n + traffic.over_nvlink
    );
    phases_are(&reports[8], &["notify", "dispatch", "combine"]);
}

/// `report` has the phases `names`, in order, each with a time.
fn phases_are(report: &serde_json::Value, names: &[&str]) {
    let phases = report["phases"].as_array().expect("phases reported");
    let got: Vec<_> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(got, names);
    assert!(phases.iter().all(|p| p["mean_ns"].as_u64().unwrap() > 0
        && p["max_ns"].as_u64().unwrap() >= p["mean_ns"].as_u64().unwrap()));
}

/// The transfers of deepep-normal's tokens on `n_pes` PEs, `pes_per_node` a host.
struct TwoHopTraffic {
    /// (token, node) pairs for nodes other than the token's: once each over InfiniBand.
    over_ib: u64,
    /// (token, PE) pairs for PEs that hold one of the token's experts: once each over NVLink.
    over_nvlink: u64,
}

/// What deepep-normal must move, from the routing alone: a token crosses InfiniBand once per
/// other node it has experts on (not once per expert), and NVLink once per PE holding them.
fn two_hop_traffic(n_pes: u32, pes_per_node: u32, shape: &MoeShape) -> TwoHopTraffic {
    let per_pe = shape.experts_per_pe(n_pes);
    let mut traffic = TwoHopTraffic {
        over_ib: 0,
        over_nvlink: 0,
    };
    for pe in 0..n_pes {
        for token in 0..shape.tokens {
            let mut pes: Vec<u32> = shape
                .route(pe, token, n_pes)
                .iter()
                .map(|expert| expert / per_pe)
                .collect();
            pes.sort_unstable();
            pes.dedup();
            let mut nodes: Vec<u32> = pes.iter().map(|p| p / pes_per_node).collect();
            nodes.dedup();
            traffic.over_nvlink += pes.len() as u64;
            traffic.over_ib += nodes.iter().filter(|&&n| n != pe / pes_per_node).count() as u64;
        }
    }
    traffic
}

/// deepep-normal with DeepEP's shape on two nodes moves exactly what two hops each way must:
/// every put-with-signal and every byte is a token's message or an answer, and a token for
/// another node crosses InfiniBand once for that node, however many experts it has there.
#[test]
fn deepep_normal_crosses_infiniband_once_per_token_and_node() {
    let (n, words, top_k) = (16, 7168 / 8, 8);
    let shape: MoeShape = "tokens=64,hidden=7168,topk=8,experts=256".parse().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rshmem"))
        .args([
            "run",
            "deepep-normal",
            "--pes",
            "16",
            "--topology",
            "ib-2",
            "--json",
        ])
        .args(["--moe", "tokens=64,hidden=7168,topk=8,experts=256"])
        .output()
        .expect("the binary runs");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["ok"], true, "{v}");
    let traffic = two_hop_traffic(n, 8, &shape);
    let messages = traffic.over_ib + traffic.over_nvlink;
    assert!(
        traffic.over_ib < 64 * 8 * u64::from(n),
        "once a node is fewer than once an expert, so the counts below tell them apart"
    );
    // Put-with-signals: a token to the other node's forwarder, a PE's answers to a token
    // back to its forwarder, and once all is sent, the counts to each PE of the node (8
    // each) and to each source on the other node (1 each). Puts: the notify's two all-to-alls
    // (one put per pair of PEs each), the forwards to the PEs that hold the experts, the
    // node's sums back.
    let told = u64::from(n) * (8 + 1);
    assert_eq!(v["op_counts"]["put_signals"], messages + told);
    assert_eq!(v["op_counts"]["puts"], u64::from(2 * n * n) + messages);
    // A message is the token, where its answer goes (2 words) and its top-k experts; an
    // answer is a token's size; the counts a PE sends a PE are, per channel of 4, one for the
    // node and one per PE of it (8), 32-bit; the second all-to-all carries, per pair, where
    // each channel's region starts and the four buffer sizes, a word each; a count told after
    // the dispatch or the combine is a word.
    let message_bytes = (words + 2 + top_k) * 8;
    let notify_bytes = u64::from(n * n) * (4 * (1 + 8) * 4 + (4 + 4) * 8);
    let bytes = messages * (message_bytes + words * 8) + notify_bytes + told * 8;
    assert_eq!(v["op_counts"]["bytes_put"], bytes);
}

/// A simulator that breaks an ordering rule deepep-normal relies on (a signal seen before its
/// data, a fence that does not order the tokens before the counts, a wait that does not make
/// InfiniBand writes visible) makes it fail, not pass.
#[test]
fn deepep_normal_fails_when_an_ordering_rule_is_broken() {
    for rule in [
        "signal-before-data",
        "fence-ignored",
        "wait-skips-consistency",
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_rshmem"))
            .args(["run", "deepep-normal", "--pes", "16", "--topology", "ib-2"])
            .args(["--break", rule])
            .output()
            .expect("the binary runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "--break {rule}: {stdout}");
        assert!(stdout.contains("FAILED"), "--break {rule}: {stdout}");
    }
}

/// `--moe` shapes the deepep workloads: DeepEP's low-latency benchmark's shape on two nodes
/// moves 128 tokens to 8 experts each way, deepep-normal takes it too, and a shape that does
/// not fit says how to fix it.
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
    for workload in ["deepep-ll", "deepep-normal"] {
        let out = Command::new(env!("CARGO_BIN_EXE_rshmem"))
            .args(["run", workload, "--pes", "8", "--moe", "experts=12"])
            .output()
            .expect("the binary runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("try experts=16"),
            "{workload}: {err}"
        );
    }
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
