//! Waits and tests on many words (wait_until_all/any/some, test_all/any/some and their vector
//! forms) on the simulator.

use rshmem::{Cmp, Shmem, ShmemError, SymAddr, run};
use sim::SimBackend;

use super::MACHINES;
use crate::common::{config, run_on, sim};

// ---- waits and tests on many words ---------------------------------------------------------

/// PE 0 owns one flag per other PE; PE k sets flag k-1 to k. Returns what PE 0 saw.
fn flags_from_every_pe(shmem: &Shmem<SimBackend>) -> Option<(usize, Vec<usize>, Vec<u64>)> {
    let (me, n) = (shmem.my_pe(), shmem.n_pes());
    let flags = shmem.calloc::<u64>(n as usize - 1).expect("calloc");
    if me != 0 {
        shmem
            .atomic_set(flags.at(me as usize - 1).expect("flag"), u64::from(me), 0)
            .expect("set");
        shmem.quiet().expect("quiet");
        return None;
    }
    let any = shmem
        .wait_until_any(flags, None, Cmp::Ne, 0)
        .expect("wait_until_any")
        .expect("some flag is waited for");
    assert_eq!(
        shmem.local(flags.at(any).expect("flag")).expect("local"),
        [any as u64 + 1],
        "wait_until_any returned a flag that is set"
    );
    let some = shmem
        .wait_until_some(flags, None, Cmp::Ne, 0)
        .expect("wait_until_some");
    let values: Vec<u64> = (1..n).map(u64::from).collect();
    shmem
        .wait_until_all_vector(flags, None, Cmp::Eq, &values)
        .expect("wait_until_all_vector");
    Some((any, some, shmem.local(flags).expect("local")))
}

#[test]
fn waits_on_many_words_see_every_peer() {
    for (topology, n_pes) in MACHINES {
        for seed in 0..3 {
            let seen = run_on(topology, n_pes, seed, flags_from_every_pe);
            let (_, some, flags) = seen[0].clone().expect("PE 0's view");
            assert!(!some.is_empty(), "{topology} seed {seed}");
            assert!(some.windows(2).all(|w| w[0] < w[1]), "{some:?}");
            let want: Vec<u64> = (1..u64::from(n_pes)).collect();
            assert_eq!(flags, want, "{topology} seed {seed}");
        }
    }
}

#[test]
fn wait_until_any_wakes_on_whichever_word_a_peer_writes() {
    // Only the last of four flags is ever set: a wait that polled only the first would hang.
    for (topology, n_pes) in MACHINES {
        let seen = run_on(topology, n_pes, 0, |shmem| {
            let me = shmem.my_pe();
            let flags = shmem.calloc::<u32>(4).expect("calloc");
            let last = shmem.n_pes() - 1;
            let found = match me {
                0 => shmem
                    .wait_until_any(flags, None, Cmp::Gt, 6)
                    .expect("wait_until_any"),
                _ if me == last => {
                    shmem
                        .atomic_set(flags.at(3).expect("flag"), 7, 0)
                        .expect("set");
                    None
                }
                _ => None,
            };
            shmem.barrier_all().expect("barrier");
            found
        });
        assert_eq!(seen[0], Some(3), "{topology}");
    }
}

#[test]
fn status_masks_and_vector_values_choose_the_words() {
    run_on("hgx8", 2, 0, |shmem| {
        let me = shmem.my_pe();
        let words = shmem.calloc::<i32>(4).expect("calloc");
        if me == 1 {
            shmem.put(words, &[5, -1, 9, 0], 0).expect("put");
            shmem.quiet().expect("quiet");
            shmem.barrier_all().expect("barrier");
            return;
        }
        shmem.barrier_all().expect("barrier");
        let mask = [0, 0, 0, 1];
        // Word 3 is 0 and would fail `> 0`; the mask leaves it out.
        shmem
            .wait_until_all(words, Some(&[0, 1, 0, 1]), Cmp::Gt, 0)
            .expect("all");
        assert!(
            !shmem
                .test_all(words, Some(&mask), Cmp::Gt, 0)
                .expect("test_all")
        );
        assert!(
            shmem
                .test_all(words, Some(&[1, 1, 1, 1]), Cmp::Gt, 0)
                .expect("empty")
        );
        assert_eq!(
            shmem
                .test_any(words, Some(&[1, 0, 0, 0]), Cmp::Lt, 0)
                .expect("test_any"),
            Some(1),
            "signed comparison"
        );
        assert_eq!(
            shmem.test_some(words, None, Cmp::Ge, 5).expect("test_some"),
            [0, 2]
        );
        assert_eq!(
            shmem
                .test_any(words, Some(&[1, 1, 1, 1]), Cmp::Ge, 0)
                .expect("all masked"),
            None
        );
        assert_eq!(
            shmem
                .wait_until_any(words, Some(&[1, 1, 1, 1]), Cmp::Ge, 0)
                .expect("all masked"),
            None
        );
        assert_eq!(
            shmem
                .wait_until_some(words, Some(&[1, 1, 1, 1]), Cmp::Ge, 0)
                .expect("all masked"),
            Vec::<usize>::new()
        );
        let values = [5, -1, 10, 0];
        assert_eq!(
            shmem
                .wait_until_some_vector(words, Some(&mask), Cmp::Eq, &values)
                .expect("some_vector"),
            [0, 1]
        );
        // Every word holds; the test_any above returned 1, so the context's turn is at 2.
        assert_eq!(
            shmem
                .wait_until_any_vector(words, None, Cmp::Le, &values)
                .expect("any_vector"),
            Some(2)
        );
        assert!(
            shmem
                .test_all_vector(words, None, Cmp::Le, &values)
                .expect("test_all_vector")
        );
        assert_eq!(
            shmem
                .test_any_vector(words, None, Cmp::Gt, &[9, 9, 8, 9])
                .expect("test_any_vector"),
            Some(2)
        );
        assert_eq!(
            shmem
                .test_some_vector(words, None, Cmp::Ne, &values)
                .expect("test_some_vector"),
            [2]
        );
    });
}

#[test]
fn a_wait_on_many_words_nobody_sets_names_every_word() {
    let output = run(sim("hgx8", 2, 0), config(), |shmem| {
        let flags = shmem.calloc::<u64>(3).expect("calloc");
        if shmem.my_pe() == 0 {
            Some(shmem.wait_until_any(flags, Some(&[0, 1, 0]), Cmp::Eq, 1))
        } else {
            None
        }
    })
    .expect("the PEs launch");
    let Ok(Some(Err(err))) = &output.results[0] else {
        panic!("PE 0's wait should have failed: {:?}", output.results[0]);
    };
    assert!(
        matches!(
            err,
            ShmemError::Queue(hw::QueueError::Deadline { .. } | hw::QueueError::Deadlock { .. })
        ),
        "{err}"
    );
    let message = err.to_string();
    assert_eq!(
        message.matches("wait_until_any").count(),
        2,
        "both unmasked words, not the masked one: {message}"
    );
}

#[test]
fn wait_set_errors_name_the_bad_argument() {
    run_on("hgx8", 1, 0, |shmem| {
        let words = shmem.calloc::<u64>(3).expect("calloc");
        let err = shmem
            .wait_until_all(words, Some(&[0, 0]), Cmp::Eq, 0)
            .expect_err("short status");
        assert!(
            matches!(
                err,
                ShmemError::LengthMismatch {
                    expected: 3,
                    actual: 2
                }
            ),
            "{err}"
        );
        let err = shmem
            .test_some_vector(words, None, Cmp::Eq, &[0; 4])
            .expect_err("long values");
        assert!(
            matches!(
                err,
                ShmemError::LengthMismatch {
                    expected: 3,
                    actual: 4
                }
            ),
            "{err}"
        );
        let crooked = words.addr().byte_add(4).cast::<u64>(2);
        let err = shmem
            .test_any(crooked, None, Cmp::Eq, 0)
            .expect_err("misaligned");
        assert!(matches!(err, ShmemError::Misaligned { .. }), "{err}");
        let err = shmem
            .wait_until_some(SymAddr(1 << 19).cast::<u32>(2), None, Cmp::Eq, 0)
            .expect_err("not in the heap");
        assert!(matches!(err, ShmemError::NotInHeap { .. }), "{err}");
        // Nothing to wait for: at once.
        shmem
            .wait_until_all(words.slice(0..0).expect("empty"), None, Cmp::Eq, 1)
            .expect("empty");
    });
}

// ---- waits and tests on 16-bit words -------------------------------------------------------

#[test]
fn narrow_waits_wake_on_a_peers_update_of_the_covering_word() {
    // PE 1 sets the int that holds shorts 2 and 3 of PE 0's array to (3 << 16) | 0xfffe, so
    // short 2 becomes -2 and short 3 becomes 3; PE 0 waits for any short above 2.
    let seen = run_on("hgx8", 2, 0, |shmem| {
        let shorts = shmem.calloc::<i16>(5).expect("calloc");
        let covering = shorts.addr().byte_add(4).cast::<u32>(1);
        let found = if shmem.my_pe() == 0 {
            let any = shmem
                .wait_until_narrow(shorts, None, Cmp::Gt, &[2], rshmem::NarrowMode::Any, true)
                .expect("wait");
            let negative = shmem
                .wait_until_narrow(shorts, None, Cmp::Lt, &[0], rshmem::NarrowMode::Some, false)
                .expect("test");
            Some((any, negative))
        } else {
            shmem
                .atomic_set(covering, (3 << 16) | 0xfffe, 0)
                .expect("set");
            None
        };
        shmem.barrier_all().expect("barrier");
        found
    });
    assert_eq!(seen[0], Some((vec![3], vec![2])));
}
