//! The SC outcomes of the catalogue's tests of the format's second edition.

use std::collections::BTreeSet;

use model::litmus::Litmus;

use super::{ScError, sc_outcomes};
use crate::{catalogue_dir, load_paths};

fn catalogue_test(file: &str) -> Litmus {
    load_paths(&[catalogue_dir().join(file)])
        .expect("the test loads")
        .remove(0)
        .test
}

/// The SC outcomes of the catalogue test `file`, as the format writes them.
fn sc(file: &str) -> Vec<String> {
    let test = catalogue_test(file);
    let observables = test.observables();
    let outcomes: BTreeSet<_> = sc_outcomes(&test).unwrap_or_else(|e| panic!("{e}"));
    outcomes
        .iter()
        .map(|o| test.show_outcome(&observables, o))
        .collect()
}

/// `signal_fetch` reads the signal; once it reads the signal, the data came before.
#[test]
fn signal_fetch_reads_the_signal() {
    assert_eq!(
        sc("g1-mp-put-fence-ps-signal-fetch.litmus"),
        ["P1:r0=0; P1:r1=0", "P1:r0=0; P1:r1=1", "P1:r0=1; P1:r1=1"]
    );
}

/// `test` gives 1 when the word holds, else 0.
#[test]
fn test_reads_zero_or_one() {
    assert_eq!(sc("g2b-test-may-fail.litmus"), ["P1:r0=0", "P1:r0=1"]);
    assert_eq!(
        sc("g2-mp-put-fence-put-test.litmus"),
        ["P1:r0=0; P1:r1=0", "P1:r0=0; P1:r1=1", "P1:r0=1; P1:r1=1"]
    );
}

/// `wait_all` waits for both flags, written after the data.
#[test]
fn wait_all_awaits_every_word() {
    assert_eq!(sc("g3-mp-put-fence-puts-wait-all.litmus"), ["P1:r0=1"]);
}

/// `wait_any` returns the first word that holds: x is written before y, so under SC it is
/// always x; index 1 is weak.
#[test]
fn wait_any_awaits_some_word() {
    assert_eq!(sc("g4-put-put-wait-any.litmus"), ["P1:r0=0"]);
}

/// `test_any` gives the index of the word that holds, or -1 as the 64-bit word of all ones.
#[test]
fn test_any_reads_an_index_or_minus_one() {
    assert_eq!(
        sc("g5-put-test-any.litmus"),
        ["P1:r0=1", &format!("P1:r0={}", u64::MAX)]
    );
}

/// `pe_quiet` is no step; a team's rendezvous waits for its members only (P2 is outside).
#[test]
fn pe_quiet_and_teams_order_under_sc() {
    assert_eq!(sc("g6b-mp-put-pe-quiet-other-put.litmus"), ["P1:r0=1"]);
    assert_eq!(sc("g7-mp-put-team-barrier.litmus"), ["P1:r0=1"]);
    assert_eq!(sc("g7b-mp-put-team-sync.litmus"), ["P1:r0=1"]);
}

/// A spin reads the value it awaited, and then the data written before the flag.
#[test]
fn spins_await_the_value() {
    assert_eq!(
        sc("g8-mp-put-quiet-set-spin-fetch.litmus"),
        ["P1:r0=1; P1:r1=1"]
    );
    assert_eq!(sc("g8b-mp-put-set-spin-g.litmus"), ["P1:r0=1; P1:r1=1"]);
}

/// A peer's `st` and `ld` write and read the peer's word.
#[test]
fn peer_loads_and_stores_act_on_the_peers_word() {
    assert_eq!(sc("g9-mp-st-fence-st-peer.litmus"), ["P1:r0=1"]);
    assert_eq!(sc("g9b-ld-peer.litmus"), ["P0:r0=0", "P0:r0=5"]);
}

/// An array's put writes its words in order, one step each: once the last word is seen,
/// the first is too.
#[test]
fn array_puts_write_each_word() {
    assert_eq!(sc("g10-put-array-words.litmus"), ["P1:r0=1"]);
    assert_eq!(
        sc("g10b-mp-put-array-fence-put.litmus"),
        ["P1:r0=1; P1:r1=1"]
    );
}

/// A register operand is the register's value when the instruction runs.
#[test]
fn register_operands_are_read_when_used() {
    assert_eq!(sc("g11-register-operand-wait.litmus"), ["P1:r1=2; P1:r2=2"]);
}

/// A 32-bit add wraps in the low half and never carries into the high one.
#[test]
fn thirty_two_bit_atomics_act_on_the_low_half() {
    assert_eq!(
        sc("g14-add32-low-half.litmus"),
        ["P1:r0=0; x@1=2", "P1:r0=4294967295; x@1=2"]
    );
}

/// A test with undefined behaviour has no SC outcomes to enumerate.
#[test]
fn undefined_behaviour_is_not_enumerated() {
    for file in [
        "g12-ub-nbi-source-reuse.litmus",
        "g13-ub-mixed-width-atomics.litmus",
    ] {
        let test = catalogue_test(file);
        assert!(
            matches!(sc_outcomes(&test), Err(ScError::Undefined { .. })),
            "{file}"
        );
    }
}
