//! The model on small programs whose outcome sets are known by hand.

use std::collections::BTreeSet;

use super::*;
use crate::litmus::{Outcome, parse};

fn outcomes(body: &str, config: &Config) -> ModelResult {
    let text = format!("litmus t\nsource \"unit\"\n{body}");
    let test = parse("t.litmus", &text).unwrap_or_else(|e| panic!("{e}"));
    allowed_outcomes(&test, config).unwrap()
}

fn set(outcomes: &[&[u64]]) -> BTreeSet<Outcome> {
    outcomes.iter().map(|o| Outcome(o.to_vec())).collect()
}

#[test]
fn a_wait_never_satisfied_is_a_deadlock_not_an_outcome() {
    let r = outcomes(
        "pes 1\nP0:\n  wait x == 1\nexists (x@0 == 0)\n",
        &Config::NvNvl,
    );
    assert!(r.outcomes.is_empty());
    assert_eq!(r.deadlocks, 1);
}

#[test]
fn a_barrier_some_pe_never_reaches_is_a_deadlock() {
    let r = outcomes(
        "pes 2\nP0:\n  barrier_all\nexists (x@0 == 0)\n",
        &Config::NvIb,
    );
    assert!(r.outcomes.is_empty());
    assert_eq!(r.deadlocks, 1);
}

#[test]
fn outcomes_list_registers_then_words() {
    // Two fetch-adds without a fence: either order under NVSHMEM (R7), program order under
    // OpenSHMEM. The final word is 2 either way.
    let body = "pes 2\nP0:\n  r0 = fetch_inc x@1\n  r1 = fetch_inc x@1\nexists (x@1 == 2)\n";
    assert_eq!(
        outcomes(body, &Config::NvNvl).outcomes,
        set(&[&[0, 1, 2], &[1, 0, 2]])
    );
    assert_eq!(outcomes(body, &Config::Os).outcomes, set(&[&[0, 1, 2]]));
}

#[test]
fn a_register_operand_waits_for_its_fetch() {
    // The put reads r0, so it is issued after the get is performed (R7 dependency).
    let body = "pes 2\ninit x@1 = 7\nP0:\n  r0 = g x@1\n  put y@1 = r0\nexists (y@1 == 7)\n";
    assert_eq!(outcomes(body, &Config::NvIb).outcomes, set(&[&[7, 7]]));
}

#[test]
fn pending_writes_are_visible_at_the_end() {
    // Over InfiniBand the put stays pending at P1 (R8), but final memory shows it.
    let body = "pes 2\nP0:\n  put x@1 = 1\nP1:\n  r0 = ld x\nexists (x@1 == 1)\n";
    assert_eq!(
        outcomes(body, &Config::NvIb).outcomes,
        set(&[&[0, 1], &[1, 1]])
    );
}

#[test]
fn a_get_over_infiniband_flushes_pending_writes() {
    // After quiet the put is delivered, possibly still pending at P1; the get over
    // InfiniBand pushes it ahead of itself, so it always reads the new value.
    let body = "pes 2\nP0:\n  put x@1 = 1\n  quiet\n  r0 = g x@1\nexists (P0:r0 == 1)\n";
    assert_eq!(outcomes(body, &Config::NvIb).outcomes, set(&[&[1]]));
}

#[test]
fn compare_swap_uses_the_old_value() {
    let body = "pes 1\ninit x@0 = 3\nP0:\n  r0 = compare_swap x@0 3 9\n  r1 = compare_swap x@0 3 5\n  fence\nexists (x@0 == 9)\n";
    let r = outcomes(body, &Config::Os);
    assert_eq!(r.outcomes, set(&[&[3, 9, 9]]));
}

#[test]
fn a_config_for_other_pes_is_an_error() {
    let test = parse(
        "t",
        "litmus t\nsource \"s\"\npes 2\nP0:\n  fence\nexists (x@0 == 0)\n",
    )
    .unwrap();
    let err = allowed_outcomes(&test, &Config::NvMix { hosts: vec![0] }).unwrap_err();
    assert_eq!(
        err.to_string(),
        "configuration nv-mix(0) does not place exactly 2 PEs"
    );
}
