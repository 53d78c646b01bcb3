//! The model on small programs whose outcome sets are known by hand.

use std::collections::BTreeSet;

use super::*;
use crate::litmus::{Hang, Modifier, Outcome, parse};

fn outcomes(body: &str, config: &Config) -> ModelResult {
    let text = format!("litmus t\nsource \"unit\"\n{body}");
    let test = parse("t.litmus", &text).unwrap_or_else(|e| panic!("{e}"));
    allowed_outcomes(&test, config).unwrap()
}

fn set(outcomes: &[&[u64]]) -> BTreeSet<Outcome> {
    outcomes.iter().map(|o| Outcome(o.to_vec())).collect()
}

fn hang(blocked: &[(u32, u32)]) -> Hang {
    Hang {
        blocked: blocked.to_vec(),
    }
}

#[test]
fn a_wait_never_satisfied_is_a_hang_not_an_outcome() {
    // The test's lines: 1 litmus, 2 source, 3 pes, 4 P0:, 5 the wait.
    let r = outcomes(
        "pes 1\nP0:\n  wait x == 1\nexists (x@0 == 0)\n",
        &Config::NV_NVL,
    );
    assert!(r.outcomes.is_empty());
    assert_eq!(r.hangs, [hang(&[(0, 5)])].into());
}

#[test]
fn a_barrier_some_pe_never_reaches_is_a_hang_of_that_pe_only() {
    let r = outcomes(
        "pes 2\nP0:\n  barrier_all\nexists (x@0 == 0)\n",
        &Config::NV_IB,
    );
    assert!(r.outcomes.is_empty());
    assert_eq!(r.hangs, [hang(&[(0, 5)])].into());
}

#[test]
fn a_test_that_may_hang_has_outcomes_and_hangs() {
    // P1 waits for 1 but P0's 2 may land last (no fence) before P1 sees the 1: some
    // executions end (with either value last), some block at P1's wait (line 8).
    let body = "pes 2\nP0:\n  put x@1 = 1\n  put x@1 = 2\nP1:\n  wait x == 1\nexists (x@1 == 2)\n";
    let r = outcomes(body, &Config::NV_NVL);
    assert_eq!(r.outcomes, set(&[&[1], &[2]]));
    assert_eq!(r.hangs, [hang(&[(1, 8)])].into());
}

#[test]
fn outcomes_list_registers_then_words() {
    // Two fetch-adds without a fence: either order under NVSHMEM (R7), program order under
    // OpenSHMEM. The final word is 2 either way.
    let body = "pes 2\nP0:\n  r0 = fetch_inc x@1\n  r1 = fetch_inc x@1\nexists (x@1 == 2)\n";
    assert_eq!(
        outcomes(body, &Config::NV_NVL).outcomes,
        set(&[&[0, 1, 2], &[1, 0, 2]])
    );
    assert_eq!(outcomes(body, &Config::OS).outcomes, set(&[&[0, 1, 2]]));
}

#[test]
fn a_register_operand_waits_for_its_fetch() {
    // The put reads r0, so it is issued after the get is performed (R7 dependency).
    let body = "pes 2\ninit x@1 = 7\nP0:\n  r0 = g x@1\n  put y@1 = r0\nexists (y@1 == 7)\n";
    assert_eq!(outcomes(body, &Config::NV_IB).outcomes, set(&[&[7, 7]]));
}

#[test]
fn pending_writes_are_visible_at_the_end() {
    // Over InfiniBand the put stays pending at P1 (R8), but final memory shows it.
    let body = "pes 2\nP0:\n  put x@1 = 1\nP1:\n  r0 = ld x\nexists (x@1 == 1)\n";
    assert_eq!(
        outcomes(body, &Config::NV_IB).outcomes,
        set(&[&[0, 1], &[1, 1]])
    );
}

#[test]
fn a_get_over_infiniband_flushes_pending_writes_only_under_pcie_read_flush() {
    // After quiet the put is delivered, possibly still pending at P1. By default the get
    // reads what P1 sees (R8 promises nothing more); under `pcie-read-flush` the get pushes
    // the pending write ahead of itself.
    let body = "pes 2\nP0:\n  put x@1 = 1\n  quiet\n  r0 = g x@1\nexists (P0:r0 == 1)\n";
    assert_eq!(outcomes(body, &Config::NV_IB).outcomes, set(&[&[0], &[1]]));
    let flush = Config::NV_IB.with(Modifier::PcieReadFlush);
    assert_eq!(outcomes(body, &flush).outcomes, set(&[&[1]]));
}

#[test]
fn an_atomic_over_infiniband_pends_but_reads_the_newest_value() {
    // Two adds over InfiniBand: atomic with each other (R6) whatever is visible, so the
    // final word is 2; P1's load may see 0, 1 or 2 since the updates pend (R8).
    let body = "pes 2\nP0:\n  add x@1 1\n  quiet\n  add x@1 1\n  quiet\nP1:\n  r0 = ld x\nexists (x@1 == 2)\n";
    assert_eq!(
        outcomes(body, &Config::NV_IB).outcomes,
        set(&[&[0, 2], &[1, 2], &[2, 2]])
    );
}

#[test]
fn an_openshmem_signal_set_may_be_lost_against_a_signal_add_but_adds_are_not() {
    // R11 (OpenSHMEM): signal updates are atomic only against the same operator. P0's ADD may read 0,
    // P1's SET land, then the ADD write 1: the SET is lost.
    let set_add = "pes 3\nP0:\n  put_signal x@2 = 1, s ADD 1\nP1:\n  put_signal y@2 = 1, s SET 5\nexists (s@2 == 1)\n";
    assert_eq!(
        outcomes(set_add, &Config::OS).outcomes,
        set(&[&[1], &[5], &[6]])
    );
    // NVSHMEM: signal operations are atomic with each other whatever the operator.
    assert_eq!(
        outcomes(set_add, &Config::NV_NVL).outcomes,
        set(&[&[5], &[6]])
    );
    let add_add = "pes 3\nP0:\n  put_signal x@2 = 1, s ADD 1\nP1:\n  put_signal y@2 = 1, s ADD 1\nexists (s@2 == 2)\n";
    assert_eq!(outcomes(add_add, &Config::OS).outcomes, set(&[&[2]]));
}

#[test]
fn nbi_unfenced_lets_a_put_nbi_pass_a_fence() {
    let body = "pes 2\nP0:\n  put_nbi x@1 = 1\n  fence\n  put f@1 = 1\nP1:\n  wait f == 1\n  r0 = ld x\nexists (P1:r0 == 0)\n";
    assert_eq!(outcomes(body, &Config::NV_NVL).outcomes, set(&[&[1]]));
    let unfenced = Config::NV_NVL.with(Modifier::NbiUnfenced);
    assert_eq!(outcomes(body, &unfenced).outcomes, set(&[&[0], &[1]]));
}

#[test]
fn ib_coherent_keeps_a_later_nvlink_write_last() {
    // P0's put over InfiniBand is complete (quiet) before P1, told by P0, puts over NVLink
    // to the same word. By default the pending InfiniBand write may land last; under
    // `ib-coherent` the NVLink write queues behind it.
    let body = "pes 3\nP0:\n  put x@2 = 1\n  quiet\n  put f@1 = 1\nP1:\n  wait f == 1\n  put x@2 = 2\nexists (x@2 == 1)\n";
    let mix = Config::nv_mix(vec![0, 1, 1]);
    assert_eq!(outcomes(body, &mix).outcomes, set(&[&[1], &[2]]));
    let coherent = mix.with(Modifier::IbCoherent);
    assert_eq!(outcomes(body, &coherent).outcomes, set(&[&[2]]));
}

#[test]
fn compare_swap_uses_the_old_value() {
    let body = "pes 1\ninit x@0 = 3\nP0:\n  r0 = compare_swap x@0 3 9\n  r1 = compare_swap x@0 3 5\n  fence\nexists (x@0 == 9)\n";
    let r = outcomes(body, &Config::OS);
    assert_eq!(r.outcomes, set(&[&[3, 9, 9]]));
}

#[test]
fn a_config_for_other_pes_is_an_error() {
    let test = parse(
        "t",
        "litmus t\nsource \"s\"\npes 2\nP0:\n  fence\nexists (x@0 == 0)\n",
    )
    .unwrap();
    let err = allowed_outcomes(&test, &Config::nv_mix(vec![0])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "configuration nv-mix(0) does not place exactly 2 PEs"
    );
}

#[test]
fn over_the_network_a_put_may_pass_a_later_atomic_unless_a_fence_separates_them() {
    // The provider delivers a posted put and a later atomic in either order; the fence waits
    // for the put.
    let body = "pes 2\nP0:\n  put x@1 = 1\n  set f@1 = 1\nP1:\n  wait f == 1\n  r0 = ld x\nexists (P1:r0 == 0)\n";
    assert_eq!(outcomes(body, &Config::OS_NET).outcomes, set(&[&[0], &[1]]));
    let fenced = body.replace("  set f@1 = 1", "  fence\n  set f@1 = 1");
    assert_eq!(outcomes(&fenced, &Config::OS_NET).outcomes, set(&[&[1]]));
}

#[test]
fn over_the_network_an_update_is_posted_and_a_fetch_completes_at_issue() {
    // An atomic that fetches nothing is posted, as a put is: the put after it may land first,
    // as under `os`.
    let update = "pes 2\nP0:\n  set x@1 = 1\n  put f@1 = 1\nP1:\n  wait f == 1\n  r0 = ld x\nexists (P1:r0 == 0)\n";
    assert_eq!(outcomes(update, &Config::OS).outcomes, set(&[&[0], &[1]]));
    assert_eq!(
        outcomes(update, &Config::OS_NET).outcomes,
        set(&[&[0], &[1]])
    );
    // A fetching one completes before the next operation: its value cannot see an update made
    // after the fenced put that follows it (catalogue A16).
    let fetch = "pes 3\nP0:\n  r0 = fetch_nbi y@2\n  fence\n  put f@1 = 1\nP1:\n  wait f == 1\n  set y@2 = 1\nexists (P0:r0 == 1)\n";
    assert_eq!(outcomes(fetch, &Config::OS).outcomes, set(&[&[0], &[1]]));
    assert_eq!(outcomes(fetch, &Config::OS_NET).outcomes, set(&[&[0]]));
}

#[test]
fn over_the_network_a_fence_orders_puts_to_different_targets() {
    // The process backend's fence waits for every put of the queue, whatever its target.
    let body = "pes 3\nP0:\n  put x@1 = 1\n  fence\n  put y@2 = 1\nP2:\n  wait y == 1\n  r0 = get x@1\nexists (P2:r0 == 0)\n";
    assert_eq!(outcomes(body, &Config::OS).outcomes, set(&[&[0], &[1]]));
    assert_eq!(outcomes(body, &Config::OS_NET).outcomes, set(&[&[1]]));
}

#[test]
fn over_the_network_a_signal_add_is_one_atomic_and_waits_for_earlier_puts() {
    let set_add = "pes 3\nP0:\n  put_signal x@2 = 1, s ADD 1\nP1:\n  put_signal y@2 = 1, s SET 5\nexists (s@2 == 1)\n";
    assert_eq!(
        outcomes(set_add, &Config::OS_NET).outcomes,
        set(&[&[5], &[6]])
    );
    // The earlier put to the signal's PE is delivered before the signal, fence or not.
    let earlier = "pes 2\nP0:\n  put x@1 = 1\n  put_signal y@1 = 1, s SET 1\nP1:\n  wait s == 1\n  r0 = ld x\nexists (P1:r0 == 0)\n";
    assert_eq!(outcomes(earlier, &Config::OS).outcomes, set(&[&[0], &[1]]));
    assert_eq!(outcomes(earlier, &Config::OS_NET).outcomes, set(&[&[1]]));
}

#[test]
fn a_load_of_another_pe_does_not_apply_over_the_network() {
    let text = "litmus t\nsource \"unit\"\npes 2\nP0:\n  r0 = ld x@1\nexists (P0:r0 == 0)\n";
    let test = parse("t.litmus", text).unwrap();
    let err = allowed_outcomes(&test, &Config::OS_NET).unwrap_err();
    assert!(
        matches!(&err, ModelError::DoesNotApply(d) if d.line == 5 && d.what.contains("libfabric")),
        "{err}"
    );
    assert!(allowed_outcomes(&test, &Config::OS).is_ok());
}
