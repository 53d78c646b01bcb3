//! The model on the forms of the litmus format's second edition (docs/litmus-format.md): each
//! test states what the rules allow and checks the model's outcome set, not a verdict only.

use std::collections::BTreeSet;

use model::litmus::{Config, Outcome, does_not_apply, parse, undefined_behaviour};
use model::om::{ModelError, allowed_outcomes};

fn outcomes(text: &str, config: &Config) -> BTreeSet<Vec<u64>> {
    let test = parse("t.litmus", text).unwrap_or_else(|e| panic!("{e}"));
    allowed_outcomes(&test, config)
        .unwrap_or_else(|e| panic!("{e}"))
        .outcomes
        .into_iter()
        .map(|Outcome(values)| values)
        .collect()
}

fn set(values: &[&[u64]]) -> BTreeSet<Vec<u64>> {
    values.iter().map(|v| v.to_vec()).collect()
}

const HEAD: &str = "litmus t\nsource \"s\"\n";

#[test]
fn a_spin_gets_only_a_value_that_ends_it_and_one_that_cannot_is_a_hang() {
    let text = format!(
        "{HEAD}pes 2\nP0:\n  put x@1 = 1\n  put x@1 = 2\nP1:\n  r0 = g x@1 until != 0\n\
         exists (P1:r0 == 1)\n"
    );
    assert_eq!(outcomes(&text, &Config::NV_NVL), set(&[&[1], &[2]]));
    let never = format!("{HEAD}pes 2\nP1:\n  r0 = fetch x@0 until == 1\nexists (P1:r0 == 1)\n");
    let test = parse("t.litmus", &never).unwrap();
    let result = allowed_outcomes(&test, &Config::NV_NVL).unwrap();
    assert!(result.outcomes.is_empty());
    assert!(
        !result.hangs.is_empty(),
        "the spin that never succeeds is a hang"
    );
}

#[test]
fn the_words_of_an_array_put_land_in_any_order_unless_fenced() {
    let body = |fence: &str| {
        format!(
            "{HEAD}pes 2\narray buf 2\nP0:\n  put buf@1 = 1\n{fence}  put f@1 = 1\nP1:\n  \
             wait f == 1\n  r0 = ld buf[0]\n  r1 = ld buf[1]\nexists (P1:r0 == 0)\n"
        )
    };
    let loose = outcomes(&body(""), &Config::NV_NVL);
    assert_eq!(loose.len(), 4, "each word independently: {loose:?}");
    assert_eq!(
        outcomes(&body("  fence\n"), &Config::NV_NVL),
        set(&[&[1, 1]])
    );
}

#[test]
fn pe_quiet_completes_the_operations_to_its_pe_only() {
    let body = |pe: u32| {
        format!(
            "{HEAD}pes 3\nP0:\n  put x@1 = 1\n  pe_quiet {pe}\n  put f@1 = 1\nP1:\n  \
             wait f == 1\n  r0 = ld x\nexists (P1:r0 == 0)\n"
        )
    };
    assert_eq!(outcomes(&body(1), &Config::NV_NVL), set(&[&[1]]));
    assert_eq!(outcomes(&body(2), &Config::NV_NVL), set(&[&[0], &[1]]));
}

#[test]
fn a_team_rendezvous_involves_its_members_only() {
    // P2 is not in the team and never arrives: the team still meets.
    let text = format!(
        "{HEAD}pes 3\nP0:\n  put x@1 = 1\n  team_barrier {{0,1}}\nP1:\n  team_barrier {{1,0}}\n  \
         r0 = ld x\nP2:\n  r1 = ld x\nexists (P1:r0 == 0)\n"
    );
    assert_eq!(outcomes(&text, &Config::NV_IB), set(&[&[1, 0]]));
    let sync = text.replace("team_barrier", "team_sync");
    assert_eq!(outcomes(&sync, &Config::NV_NVL), set(&[&[0, 0], &[1, 0]]));
}

#[test]
fn wait_any_and_test_any_give_the_lowest_index_that_holds() {
    let text = format!(
        "{HEAD}pes 2\ninit x@1 = 1; y@1 = 1\nP1:\n  r0 = wait_any x y == 1\n  \
         r1 = test_any y x == 2\n  r2 = test x == 1\nexists (P1:r0 == 0)\n"
    );
    assert_eq!(outcomes(&text, &Config::NV_NVL), set(&[&[0, u64::MAX, 1]]));
}

#[test]
fn a_32_bit_atomic_keeps_the_high_half() {
    let text = format!(
        "{HEAD}pes 2\ninit x@1 = 8589934591\nP0:\n  r0 = fetch_add32 x@1 1\n\
         exists (x@1 == 0)\n"
    );
    // 0x1_ffff_ffff: the low half wraps to 0, the high half stays 1; the fetch is the low half.
    assert_eq!(
        outcomes(&text, &Config::NV_NVL),
        set(&[&[0xffff_ffff, 1 << 32]])
    );
}

#[test]
fn undefined_behaviour_and_tests_that_do_not_apply_are_not_explored() {
    let reuse = format!(
        "{HEAD}pes 2\nP0:\n  r0 = g y@1\n  put_nbi x@1 = r0\n  r0 = ld y\n  quiet\n\
         exists (x@1 == 1)\n"
    );
    let test = parse("t.litmus", &reuse).unwrap();
    assert_eq!(undefined_behaviour(&test).map(|u| u.line), Some(7));
    assert!(matches!(
        allowed_outcomes(&test, &Config::NV_NVL),
        Err(ModelError::Undefined(_))
    ));
    let quieted = reuse.replace("  r0 = ld y\n  quiet\n", "  quiet\n  r0 = ld y\n");
    assert_eq!(
        undefined_behaviour(&parse("t.litmus", &quieted).unwrap()),
        None
    );

    let widths = format!(
        "{HEAD}pes 2\nP0:\n  add x@1 1\nP1:\n  r0 = fetch_add32 x@1 1\nexists (x@1 == 1)\n"
    );
    let undefined = undefined_behaviour(&parse("t.litmus", &widths).unwrap()).unwrap();
    assert_eq!(undefined.line, 7);
    assert!(undefined.what.contains("32-bit"), "{}", undefined.what);

    let peer = format!("{HEAD}pes 2\nP0:\n  st x@1 = 1\nP1:\n  r0 = ld x\nexists (P1:r0 == 1)\n");
    let test = parse("t.litmus", &peer).unwrap();
    assert_eq!(does_not_apply(&test, &Config::NV_NVL), None);
    assert_eq!(
        does_not_apply(&test, &Config::NV_IB).map(|d| d.line),
        Some(5)
    );
    assert_eq!(outcomes(&peer, &Config::NV_NVL), set(&[&[0], &[1]]));
}
