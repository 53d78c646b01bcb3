//! `litmus-net` as users start it: `rshmem run -n 2 litmus-net` with every operation on
//! libfabric (`RSHMEM_TRANSPORT=ofi`, `FI_PROVIDER="tcp;ofi_rxm"`), over the whole catalogue at
//! a small count; and the checks that it can fail: every outcome reported when the allowed
//! sets are taken as empty, and a hang reported with its test, PE and line.
//!
//! Each test skips, saying why, where libfabric or the `rshmem` launcher is missing (it is
//! built by `cargo build --release -p tools --bin rshmem`, beside this test's binary).

use std::path::PathBuf;
use std::process::{Command, Output};

use litmus::catalogue_dir;

/// Executions per test of the catalogue run: enough to see weak outcomes of store buffering,
/// few enough for a CI run under three minutes on two cores.
const EXECUTIONS: &str = "1000";

/// The `rshmem` launcher built in the same target folder as this test, or why it cannot run.
fn launcher() -> Result<PathBuf, String> {
    if let Err(e) = hw::ofi::probe() {
        return Err(format!("libfabric: {e}"));
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // target/<profile>/deps/net-HASH: the launcher is target/<profile>/rshmem.
    let rshmem = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|profile| profile.join("rshmem"))
        .ok_or("no target folder above the test binary")?;
    if !rshmem.exists() {
        return Err(format!(
            "{} is missing (cargo build --release -p tools --bin rshmem)",
            rshmem.display()
        ));
    }
    Ok(rshmem)
}

/// `rshmem run -n 2 litmus-net ARGS` over `tcp;ofi_rxm`, under a deadline.
fn litmus_net(rshmem: &PathBuf, args: &[&str]) -> Output {
    Command::new("timeout")
        .args(["-k", "5", "170"])
        .arg(rshmem)
        .args(["run", "-n", "2", env!("CARGO_BIN_EXE_litmus-net")])
        .args(args)
        .env("RSHMEM_TRANSPORT", "ofi")
        .env("FI_PROVIDER", "tcp;ofi_rxm")
        .output()
        .expect("the launcher starts")
}

fn printed(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every two-PE test of the catalogue that applies under `os-net`, 1000 executions each over
/// `tcp;ofi_rxm`: no outcome the model forbids, no hang, and store buffering shows its weak
/// outcome (puts are posted, so both loads can miss).
#[test]
fn the_catalogue_passes_over_libfabric_under_rshmem_run() {
    let rshmem = match launcher() {
        Ok(r) => r,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let out = litmus_net(&rshmem, &["--executions", EXECUTIONS]);
    let (stdout, stderr) = printed(&out);
    assert!(
        out.status.success(),
        "{}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    assert!(stdout.contains("forbidden outcomes: **0**"), "{stdout}");
    assert!(stdout.contains("tests that did not finish: 0."), "{stdout}");
    let ran = stdout
        .lines()
        .filter(|l| {
            l.starts_with("| ") && l.split('|').nth(2).is_some_and(|c| c.trim() == EXECUTIONS)
        })
        .count();
    assert!(ran >= 50, "only {ran} tests ran:\n{stdout}");
    let sb = stdout
        .lines()
        .find(|l| l.starts_with("| F1+SB+put+put |"))
        .unwrap_or_else(|| panic!("no store buffering row:\n{stdout}"));
    assert!(sb.contains("(weak)"), "{sb}");
}

/// With every allowed set taken as empty, every outcome of every execution is reported as
/// forbidden, with its test and count, and the run fails.
#[test]
fn every_outcome_outside_the_allowed_set_is_reported() {
    let rshmem = match launcher() {
        Ok(r) => r,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let tests = ["a1-mp-put-put.litmus", "f1-sb-put-put.litmus"].map(|t| catalogue_dir().join(t));
    let mut args = vec!["--executions", "300", "--batch", "100", "--forbid-all"];
    args.extend(tests.iter().map(|t| t.to_str().expect("a UTF-8 path")));
    let out = litmus_net(&rshmem, &args);
    let (stdout, stderr) = printed(&out);
    assert!(!out.status.success(), "the run passed:\n{stdout}\n{stderr}");
    for name in ["A1+MP+put+put", "F1+SB+put+put"] {
        let counted: u64 = stdout
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("FORBIDDEN: {name}: ")))
            .map(|l| {
                let (_, times) = l.split_once(" appeared ").expect("a count");
                let (n, of) = times.split_once(" times of ").expect("a total");
                assert_eq!(of, "300", "{l}");
                n.parse::<u64>().expect("a number")
            })
            .sum();
        assert_eq!(counted, 300, "{name}:\n{stdout}");
    }
}

/// A wait that nothing satisfies is a hang: the run fails, naming the test, the PE and the
/// line, within the wait's deadline.
#[test]
fn a_hang_names_the_test_the_pe_and_the_line() {
    let rshmem = match launcher() {
        Ok(r) => r,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let dir = std::env::temp_dir().join(format!("litmus-net-hang-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("hang.litmus");
    std::fs::write(
        &file,
        "litmus Hang+wait\nsource \"a wait nothing satisfies\"\npes 2\n\nP0:\n  put f@1 = 2\n\
         P1:\n  wait f == 1\n  r0 = ld f\n\nexists (P1:r0 == 1)\n",
    )
    .unwrap();
    let out = litmus_net(
        &rshmem,
        &[
            "--executions",
            "10",
            "--wait-s",
            "1",
            "--keep-hanging",
            file.to_str().unwrap(),
        ],
    );
    std::fs::remove_dir_all(&dir).unwrap();
    let (stdout, stderr) = printed(&out);
    assert!(!out.status.success(), "the run passed:\n{stdout}\n{stderr}");
    assert!(
        stderr.contains("litmus-net: Hang+wait: P1: execution 0: line 8: wait:"),
        "{stderr}"
    );
    assert!(stdout.contains("tests that did not finish: 1."), "{stdout}");
}
