//! Every conformance body on the simulator: three topologies (NVLink pair, NVSwitch, two
//! InfiniBand hosts) times four seeds each.

use conformance::conformance;

conformance::conformance_tests!(conformance);

/// The harness can fail: a body whose promise does not hold is reported with its seed.
#[test]
fn a_broken_promise_is_reported_with_the_seed() {
    let err = conformance::run_on_sim("h200x2", 5, |sh| {
        if sh.my_pe() == 1 {
            return Err(conformance::BodyError::Violated("on purpose".into()));
        }
        Ok(())
    })
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("seed 5") && err.contains("PE 1: violated: on purpose"),
        "{err}"
    );
}
