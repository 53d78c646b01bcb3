//! `rshmem litmus` as a user runs it.

use std::path::PathBuf;
use std::process::{Command, Output};

fn rshmem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rshmem"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn catalogue(file: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/litmus/catalogue")
        .join(file)
        .display()
        .to_string()
}

fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

#[test]
fn json_reports_every_configuration_and_each_outcome_replays() {
    let file = catalogue("f1-sb-put-put.litmus");
    let out = rshmem(&["litmus", &file, "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let checks = json_lines(&out);
    assert_eq!(checks.len(), 5, "nv-nvl, nv-ib, nv-mix, os and os-net");
    for check in &checks {
        assert_eq!(check["verdict"], "match");
        assert!(check["executions"].as_u64().unwrap() > 1);
        assert!(check["seconds"].as_f64().unwrap() >= 0.0);
    }
    // Store buffering without a fence: every one of the four outcomes shows, and each one's
    // choice string gives that outcome again.
    let nv_ib = checks.iter().find(|c| c["config"] == "nv-ib").unwrap();
    let observed = nv_ib["observed"].as_array().unwrap();
    assert_eq!(observed.len(), 4);
    for o in observed {
        let replay = o["replay"].as_str().unwrap();
        let out = rshmem(&["litmus", &file, "--config", "nv-ib", "--replay", replay]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let want = format!(
            "outcome {}  (allowed by the model)",
            o["outcome"].as_str().unwrap()
        );
        assert!(text.contains(&want), "replay {replay}: {text}");
    }
}

#[test]
fn a_broken_fence_is_caught_by_a_fenced_test_and_not_by_an_unfenced_one() {
    let fenced = catalogue("a2-mp-put-fence-put.litmus");
    let out = rshmem(&["litmus", &fenced, "--break", "fence-ignored"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("broken rule fence-ignored: caught by 5 of 5 checks"),
        "{text}"
    );

    let unfenced = catalogue("a1-mp-put-put.litmus");
    let out = rshmem(&["litmus", &unfenced, "--break", "fence-ignored"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn bad_input_is_named() {
    let file = catalogue("f1-sb-put-put.litmus");
    let out = rshmem(&["litmus", &file, "--config", "nv-bogus", "--replay", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no `expect` line for configuration"));

    let bad = std::env::temp_dir().join(format!("rshmem-bad-{}.litmus", std::process::id()));
    std::fs::write(&bad, "litmus Bad\npes 2\nP0:\n  frobnicate x@1\n").unwrap();
    let out = rshmem(&["litmus", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(":4:3: unknown instruction"),
        "the error names line and column: {err}"
    );
    assert_eq!(
        err.matches("unknown instruction").count(),
        1,
        "said once: {err}"
    );
    std::fs::remove_file(bad).ok();

    // A device is refused before it is read: reading /dev/zero would never end.
    let out = rshmem(&["litmus", "/dev/zero"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/dev/zero is not a litmus file"));
}

#[test]
fn tests_checked_side_by_side_report_what_one_at_a_time_does_in_the_same_order() {
    let files: Vec<String> = [
        "f1-sb-put-put.litmus",
        "a1-mp-put-put.litmus",
        "a2-mp-put-fence-put.litmus",
    ]
    .iter()
    .map(|f| catalogue(f))
    .collect();
    let run = |jobs: &str| {
        let mut args = vec!["litmus", "--json", "--jobs", jobs];
        args.extend(files.iter().map(String::as_str));
        let out = rshmem(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut checks = json_lines(&out);
        for check in &mut checks {
            check.as_object_mut().unwrap().remove("seconds");
        }
        checks
    };
    let alone = run("1");
    assert!(alone.len() >= 3 * 4, "{} checks", alone.len());
    assert_eq!(alone, run("3"));
}
