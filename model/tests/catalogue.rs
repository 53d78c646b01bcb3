//! The model against the expected verdicts of the litmus catalogue (tests/litmus/catalogue): every
//! (test, configuration) observation of the model must be the one the file expects, and the
//! model finds executions that block forever exactly where the file says `hangs`. Where a file's verdict departs from the research catalogue it came from,
//! tests/litmus/catalogue/README.md says why.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use model::litmus::parse;
use model::om::check_expectations;

fn catalogue_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/litmus/catalogue");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "litmus"))
        .collect();
    files.sort();
    files
}

#[test]
fn the_model_gives_every_expected_verdict() {
    let mut failures = Vec::new();
    let mut slowest = (Duration::ZERO, String::new());
    let files = catalogue_files();
    assert!(!files.is_empty(), "no catalogue found");
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable");
        let test = parse(&path.display().to_string(), &text).unwrap_or_else(|e| panic!("{e}"));
        let started = Instant::now();
        let checks = check_expectations(&test).unwrap_or_else(|e| panic!("{}: {e}", test.name));
        let elapsed = started.elapsed();
        if elapsed > slowest.0 {
            slowest = (elapsed, test.name.clone());
        }
        for check in checks {
            if !check.agrees() {
                failures.push(format!(
                    "{} [{}]: expected {:?}{}, model says {:?} ({} outcomes, {} hangs)",
                    test.name,
                    check.config,
                    check.expected,
                    if check.expects_hangs { " hangs" } else { "" },
                    check.model,
                    check.result.outcomes.len(),
                    check.result.hangs.len()
                ));
            }
        }
    }
    // Speed is measured by `rshmem litmus` (BENCHMARKS.md), not asserted here.
    eprintln!("slowest test: {} ({:?})", slowest.1, slowest.0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
