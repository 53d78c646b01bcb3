//! The checker can fail: with each rule of the simulator broken on purpose, some check of the
//! catalogue must mismatch. The test prints which checks caught each broken rule.

use litmus::check_all;
use sim::Fault;

use super::catalogue;

fn caught_by(fault: Fault) -> Vec<String> {
    catalogue()
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
    for fault in Fault::ALL {
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
