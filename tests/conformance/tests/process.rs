//! Every conformance body on the process backend (one OS process per PE, `hw::process`) with
//! 2 and 4 PEs: the test binary runs itself as the ranks of each run (`conformance::process`).
//! Every body of the suite makes sense here (streams are the runtime's, atomics CPU atomics,
//! the heap a sparse memfd), so none is skipped.

conformance::conformance_tests!(conformance::process::process_conformance);

/// The harness can fail: a body whose promise does not hold on one PE fails that rank, and
/// the test reports the rank's output.
#[test]
fn a_broken_promise_is_reported() {
    use conformance::BodyError;
    use conformance::process::{is_rank, process_conformance};
    let broken = |sh: &rshmem::Shmem<hw::process::ProcessBackend>| {
        if sh.my_pe() == 1 {
            return Err(BodyError::Violated("on purpose".into()));
        }
        Ok(())
    };
    if is_rank() {
        process_conformance(broken);
        return;
    }
    let payload = std::panic::catch_unwind(|| process_conformance(broken)).unwrap_err();
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.contains("rank 1 ended with") && message.contains("violated: on purpose"),
        "{message}"
    );
    assert!(!message.contains("rank 0 ended with"), "{message}");
}
