//! The device code of the format's second edition, checked as text: each form's calls, in
//! the plain kernel (whose words are `(vars + 16 * index)`) and, where the kernels differ,
//! in the stressed one (`v[index]`).

use model::litmus::Litmus;

use crate::{catalogue_dir, kernel_source, load_paths, stress_kernel_source};

fn catalogue_test(file: &str) -> Litmus {
    load_paths(&[catalogue_dir().join(file)])
        .expect("the test loads")
        .remove(0)
        .test
}

/// PE `pe`'s program in the plain kernel of the catalogue test `file`.
fn program(file: &str, pe: u32) -> String {
    let source = kernel_source(&catalogue_test(file)).expect("on GPU");
    // The second switch is the program's (the first resets, the third records).
    let cases = source
        .split("switch (me)")
        .nth(2)
        .expect("the program's switch");
    let case = cases
        .split(&format!("case {pe}:"))
        .nth(1)
        .expect("the PE's case");
    case[..case.find("break;").expect("the case's end")].to_string()
}

/// Asserts that `code` holds each of `parts`, in that order.
fn assert_in_order(code: &str, parts: &[&str]) {
    let mut from = 0;
    for part in parts {
        let at = code[from..]
            .find(part)
            .unwrap_or_else(|| panic!("no `{part}` after byte {from} of:\n{code}"));
        from += at + part.len();
    }
}

#[test]
fn signal_fetch_reads_the_own_signal_word() {
    assert_in_order(
        &program("g1-mp-put-fence-ps-signal-fetch.litmus", 1),
        &[
            "r[0] = rshmem_signal_fetch((vars + 32));",
            "r[1] = *(volatile unsigned long long *)(vars + 0);",
        ],
    );
}

#[test]
fn test_is_one_acquire_load_compared() {
    assert_in_order(
        &program("g2-mp-put-fence-put-test.litmus", 1),
        &["r[0] = litmus_test((vars + 16), RSHMEM_CMP_EQ, 1ull);"],
    );
}

#[test]
fn wait_all_waits_for_each_word_in_turn() {
    assert_in_order(
        &program("g3-mp-put-fence-puts-wait-all.litmus", 1),
        &[
            "rshmem_wait_until((vars + 16), RSHMEM_CMP_EQ, 1ull);",
            "rshmem_wait_until((vars + 32), RSHMEM_CMP_EQ, 1ull);",
            "r[0] = *(volatile",
        ],
    );
}

#[test]
fn wait_any_and_test_any_take_the_list_of_own_words() {
    assert_in_order(
        &program("g4-put-put-wait-any.litmus", 1),
        &[
            "{ const unsigned long long *w[] = {(vars + 0), (vars + 16)}; \
             r[0] = litmus_wait_any(w, 2, RSHMEM_CMP_EQ, 1ull); }",
        ],
    );
    assert_in_order(
        &program("g5-put-test-any.litmus", 1),
        &["r[0] = litmus_test_any(w, 2, RSHMEM_CMP_EQ, 1ull);"],
    );
    // -1 is the 64-bit word of all ones, as the format writes it.
    let source = kernel_source(&catalogue_test("g5-put-test-any.litmus")).unwrap();
    assert!(source.contains("  return ~0ull;\n}"), "{source}");
}

#[test]
fn pe_quiet_is_the_quiet_of_every_pe() {
    assert_in_order(
        &program("g6-mp-put-pe-quiet-put.litmus", 0),
        &[
            "rshmem_put((vars + 0)",
            "rshmem_quiet();",
            "rshmem_put((vars + 16)",
        ],
    );
}

/// A team's rendezvous counts on a word after the variables, reset with them, on the
/// team's lowest member; a barrier quiets first, a sync does not; a PE outside the team
/// does not take part.
#[test]
fn team_rendezvous_count_on_a_word_of_their_own() {
    let test = catalogue_test("g7-mp-put-team-barrier.litmus");
    let counter = format!("(vars + {})", 16 * test.vars.len());
    let arrive = format!("rshmem_quiet(); litmus_team_arrive({counter}, 0, 2ull);");
    assert_in_order(
        &program("g7-mp-put-team-barrier.litmus", 0),
        &["rshmem_put(", &arrive],
    );
    assert_in_order(
        &program("g7-mp-put-team-barrier.litmus", 1),
        &[&arrive, "r[0] ="],
    );
    assert!(!program("g7-mp-put-team-barrier.litmus", 2).contains("litmus_team_arrive"));
    let source = kernel_source(&test).unwrap();
    assert!(
        source.contains(&format!(
            "*(volatile unsigned long long *){counter} = 0ull;"
        )),
        "{source}"
    );
    let sync = program("g7b-mp-put-team-sync.litmus", 1);
    assert!(
        sync.contains("litmus_team_arrive(") && !sync.contains("rshmem_quiet"),
        "{sync}"
    );
    // Stressed: the counter is the instance's word after the variables.
    let stressed = stress_kernel_source(&test).unwrap();
    let n_vars = test.vars.len();
    assert_eq!(crate::instance_words(&test) as usize, n_vars + 1);
    assert!(
        stressed.contains(&format!(
            "rshmem_quiet(); litmus_team_arrive(v[{n_vars}], 0, 2ull);"
        )),
        "{stressed}"
    );
}

#[test]
fn spins_repeat_the_fetch_or_get_until_the_comparison_holds() {
    assert_in_order(
        &program("g8-mp-put-quiet-set-spin-fetch.litmus", 1),
        &[
            "do { r[0] = rshmem_atomic_fetch((vars + 16), 0); } while \
             (!rshmem_detail_holds(r[0], RSHMEM_CMP_EQ, 1ull) && litmus_within(t0, ",
            "r[1] = *(volatile",
        ],
    );
    assert_in_order(
        &program("g8b-mp-put-set-spin-g.litmus", 1),
        &[
            "do { r[0] = rshmem_g((vars + 16), 0); } while (!rshmem_detail_holds(r[0], \
           RSHMEM_CMP_NE, 0ull)",
        ],
    );
}

#[test]
fn peer_loads_and_stores_go_through_rshmem_ptr() {
    assert_in_order(
        &program("g9-mp-st-fence-st-peer.litmus", 0),
        &[
            "*(volatile unsigned long long *)rshmem_ptr((vars + 0), 1) = 1ull;",
            "rshmem_fence();",
            "*(volatile unsigned long long *)rshmem_ptr((vars + 16), 1) = 1ull;",
        ],
    );
    assert_in_order(
        &program("g9b-ld-peer.litmus", 0),
        &["r[0] = *(volatile unsigned long long *)rshmem_ptr((vars + 0), 1);"],
    );
}

/// An array's put is a put of each word from one source, no fence between them.
#[test]
fn array_puts_put_every_word() {
    assert_in_order(
        &program("g10b-mp-put-array-fence-put.litmus", 0),
        &[
            "src[0] = 1ull; rshmem_put((vars + 0), &src[0], 1, 1); \
             rshmem_put((vars + 16), &src[0], 1, 1);",
            "rshmem_fence();",
            "rshmem_put((vars + 32)",
        ],
    );
}

/// A 32-bit atomic is the device API's `unsigned int` atomic on the word's low half.
#[test]
fn thirty_two_bit_atomics_act_on_the_low_half() {
    assert_in_order(
        &program("g14-add32-low-half.litmus", 0),
        &["(void)rshmem_atomic_fetch_add((unsigned int *)(vars + 0), (unsigned int)1ull, 1);"],
    );
    assert_in_order(
        &program("g14-add32-low-half.litmus", 1),
        &["r[0] = rshmem_atomic_fetch_add((unsigned int *)(vars + 0), (unsigned int)2ull, 1);"],
    );
}

#[test]
fn register_operands_are_the_registers() {
    assert_in_order(
        &program("g11-register-operand-wait.litmus", 1),
        &[
            "r[1] = rshmem_g(",
            "rshmem_wait_until((vars + 16), RSHMEM_CMP_EQ, r[1]);",
        ],
    );
}

/// Both kernels carry the helpers the programs call.
#[test]
fn both_kernels_define_the_helpers() {
    let test = catalogue_test("g4-put-put-wait-any.litmus");
    for source in [
        kernel_source(&test).unwrap(),
        stress_kernel_source(&test).unwrap(),
    ] {
        assert!(
            source.contains(crate::gpu_instr::DEVICE_HELPERS),
            "{source}"
        );
    }
}

/// Every 32-bit atomic, not only the catalogue's add: fetch, set and compare-swap take the
/// `unsigned int` view of the word, their operands (registers included) cut to 32 bits.
#[test]
fn every_thirty_two_bit_atomic_takes_the_unsigned_int_view() {
    use model::litmus::{AmoOp, AmoWidth, Reg, Value};

    let x = "(vars + 0)";
    assert_eq!(
        super::amo(&AmoOp::Fetch, x, 1, Some(Reg(3)), AmoWidth::W32),
        "r[3] = rshmem_atomic_fetch((unsigned int *)(vars + 0), 1);"
    );
    assert_eq!(
        super::amo(&AmoOp::Set(Value::Const(5)), x, 1, None, AmoWidth::W32),
        "rshmem_atomic_set((unsigned int *)(vars + 0), (unsigned int)5ull, 1);"
    );
    let cswap = AmoOp::CompareSwap {
        cond: Value::Reg(Reg(1)),
        new: Value::Const(7),
    };
    assert_eq!(
        super::amo(&cswap, x, 0, Some(Reg(2)), AmoWidth::W32),
        "r[2] = rshmem_atomic_compare_swap((unsigned int *)(vars + 0), (unsigned int)r[1], \
         (unsigned int)7ull, 0);"
    );
    assert_eq!(
        super::amo(&AmoOp::Inc, x, 0, None, AmoWidth::W32),
        "(void)rshmem_atomic_fetch_add((unsigned int *)(vars + 0), 1u, 0);"
    );
    // 64-bit atomics keep the word's own type.
    assert_eq!(
        super::amo(&AmoOp::Inc, x, 0, None, AmoWidth::W64),
        "(void)rshmem_atomic_fetch_add((vars + 0), 1ull, 0);"
    );
}

/// Two teams, one of them met twice: each has its own counter word, and a team's k-th
/// rendezvous waits for k arrivals of each member.
#[test]
fn each_team_counts_its_own_rendezvous() {
    let test = model::litmus::parse(
        "teams.litmus",
        "litmus Teams\nsource \"teams\"\npes 3\nP0:\n  team_sync {0,1}\n  team_barrier {0,1}\n  \
         team_sync {0,1,2}\nP1:\n  team_sync {0,1}\n  team_barrier {0,1}\n  \
         team_sync {0,1,2}\nP2:\n  team_sync {0,1,2}\n  r0 = ld x\nexists (P2:r0 == 0)\n",
    )
    .expect("the test parses");
    let first = 16 * test.vars.len();
    let second = first + 16;
    let plain = kernel_source(&test).unwrap();
    assert_in_order(
        &plain,
        &[
            &format!("litmus_team_arrive((vars + {first}), 0, 2ull);"),
            &format!("rshmem_quiet(); litmus_team_arrive((vars + {first}), 0, 4ull);"),
            &format!("litmus_team_arrive((vars + {second}), 0, 3ull);"),
        ],
    );
    let stressed = stress_kernel_source(&test).unwrap();
    assert_eq!(crate::instance_words(&test) as usize, test.vars.len() + 2);
    assert!(
        stressed.contains("litmus_team_arrive(v[2], 0, 3ull);"),
        "{stressed}"
    );
}
