//! The checker can fail: with each rule of the simulator broken on purpose, some check of the
//! catalogue must mismatch. The test prints which checks caught each broken rule.

use std::path::PathBuf;

use sim::Fault;
use tests::litmus::{check_all, load_paths};

fn caught_by(fault: Fault) -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("litmus");
    let files = load_paths(&[dir]).expect("the catalogue parses");
    files
        .iter()
        .flat_map(|f| {
            check_all(&f.test, &[fault])
                .into_iter()
                .filter(|c| !c.matches())
                .map(|c| format!("{} [{}]", f.test.name, c.config))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn every_broken_rule_is_caught() {
    let mut uncaught = Vec::new();
    for fault in [
        Fault::FenceIgnored,
        Fault::QuietSkipsNbiPuts,
        Fault::NoIbPending,
        Fault::WaitSkipsConsistency,
        Fault::SignalBeforeData,
    ] {
        let caught = caught_by(fault);
        eprintln!(
            "{fault:?}: caught by {} checks: {}",
            caught.len(),
            caught.join(", ")
        );
        if caught.is_empty() {
            uncaught.push(format!("{fault:?}"));
        }
    }
    assert!(
        uncaught.is_empty(),
        "no check caught: {}",
        uncaught.join(", ")
    );
}
