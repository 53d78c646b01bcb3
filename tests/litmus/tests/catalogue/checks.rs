//! Every (test, configuration) check of the catalogue must match: the simulator's exhaustive
//! outcomes equal the model's, and the observation is the expected one.

use litmus::check_all;

use super::catalogue;

#[test]
fn the_catalogue_is_large_enough() {
    let files = catalogue();
    let checks: usize = files.iter().map(|f| f.test.expect.len()).sum();
    assert!(files.len() >= 40, "{} tests", files.len());
    assert!(checks >= 150, "{checks} checks");
}

#[test]
fn every_check_of_the_catalogue_matches() {
    let mut failures = Vec::new();
    for file in catalogue() {
        for check in check_all(&file.test, &[]) {
            if !check.matches() {
                failures.push(format!(
                    "{} [{}] ({}):\n    {}",
                    file.test.name,
                    check.config,
                    file.path.display(),
                    check.problems.join("\n    ")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
