//! Non-blocking fetching atomics and signal operations on the simulator.

use rshmem::{Cmp, CtxOptions, ShmemError, SignalOp, SymAddr};

use super::on_every_machine;
use crate::common::run_on;

// ---- non-blocking fetching atomics ---------------------------------------------------------

#[test]
fn nbi_fetch_adds_from_every_pe_land_at_quiet() {
    on_every_machine(|shmem| {
        let (me, n) = (shmem.my_pe(), shmem.n_pes());
        let counter = shmem.calloc::<u64>(1).expect("calloc");
        let fetched = shmem.calloc::<u64>(2).expect("calloc");
        let (first, second) = (fetched.at(0).expect("0"), fetched.at(1).expect("1"));
        shmem
            .atomic_fetch_add_nbi(first, counter, 1, 0)
            .expect("fetch_add_nbi");
        shmem
            .atomic_fetch_inc_nbi(second, counter, 0)
            .expect("fetch_inc_nbi");
        shmem.quiet().expect("quiet");
        let olds = shmem.local(fetched).expect("local");
        // Every PE's two old values, gathered on PE 0.
        let all = shmem.calloc::<u64>(2 * n as usize).expect("calloc");
        shmem
            .put(
                all.slice(2 * me as usize..2 * me as usize + 2)
                    .expect("view"),
                &olds,
                0,
            )
            .expect("put");
        shmem.barrier_all().expect("barrier");
        if me == 0 {
            let mut seen = shmem.local(all).expect("local");
            seen.sort_unstable();
            let want: Vec<u64> = (0..2 * u64::from(n)).collect();
            assert_eq!(seen, want, "every old value exactly once");
            assert_eq!(shmem.local(counter).expect("local"), [2 * u64::from(n)]);
        }
    });
}

#[test]
fn every_nbi_fetching_atomic_writes_its_old_value() {
    let seen = run_on("hgx8", 2, 0, |shmem| {
        let (me, peer) = (shmem.my_pe(), 1 - shmem.my_pe());
        let word = shmem.calloc::<i32>(1).expect("calloc");
        // Eight fetch words with a guard on each side: a 4-byte value must not spill.
        let fetch = shmem.malloc::<i32>(10).expect("malloc");
        shmem.set_local(fetch, &[-7; 10]).expect("set_local");
        shmem.barrier_all().expect("barrier");
        let f = |i: usize| fetch.at(i + 1).expect("fetch word");
        if me == 0 {
            shmem.atomic_set(word, 5, peer).expect("set");
            shmem.quiet().expect("quiet");
            // Each on its own, fenced after the update before it, so the olds are known.
            shmem.atomic_fetch_nbi(f(0), word, peer).expect("fetch");
            shmem.atomic_swap_nbi(f(1), word, 6, peer).expect("swap");
            shmem.fence().expect("fence");
            shmem
                .atomic_compare_swap_nbi(f(2), word, 6, -1, peer)
                .expect("cas");
            shmem.fence().expect("fence");
            shmem.atomic_fetch_inc_nbi(f(3), word, peer).expect("inc");
            shmem.fence().expect("fence");
            shmem
                .atomic_fetch_or_nbi(f(4), word, 0b1100, peer)
                .expect("or");
            shmem.fence().expect("fence");
            shmem
                .atomic_fetch_and_nbi(f(5), word, 0b0110, peer)
                .expect("and");
            shmem.fence().expect("fence");
            shmem
                .atomic_fetch_xor_nbi(f(6), word, 0b0011, peer)
                .expect("xor");
            shmem.fence().expect("fence");
            shmem
                .atomic_fetch_add_nbi(f(7), word, 10, peer)
                .expect("add");
            shmem.quiet().expect("quiet");
        }
        shmem.barrier_all().expect("barrier");
        (
            shmem.local(fetch).expect("local"),
            shmem.local(word).expect("local"),
        )
    });
    let (olds, _) = &seen[0];
    // The fetch and the swap are not ordered with each other: the fetch saw 5 or 6.
    assert!(olds[1] == 5 || olds[1] == 6, "{olds:?}");
    assert_eq!(olds[2..], [5, 6, -1, 0, 0b1100, 0b0100, 0b0111, -7]);
    assert_eq!(olds[0], -7);
    assert_eq!(seen[1].1, [0b0111 + 10]);
}

#[test]
fn nbi_fetches_land_at_their_own_contexts_quiet() {
    run_on("ib-2", 16, 2, |shmem| {
        let me = shmem.my_pe();
        let counter = shmem.calloc::<u64>(1).expect("calloc");
        let fetched = shmem.calloc::<u64>(1).expect("calloc");
        if me == 15 {
            shmem.atomic_set(counter, 40, 0).expect("set");
            shmem.quiet().expect("quiet");
            let ctx = shmem.ctx_create(CtxOptions::default()).expect("ctx");
            ctx.atomic_fetch_add_nbi(fetched, counter, 2, 0)
                .expect("fetch_add_nbi");
            // The default context's quiet does not complete another context's operations.
            shmem.quiet().expect("quiet");
            ctx.quiet().expect("ctx quiet");
            assert_eq!(shmem.local(fetched).expect("local"), [40]);
            shmem.ctx_destroy(ctx).expect("destroy");
        }
        shmem.barrier_all().expect("barrier");
        if me == 0 {
            assert_eq!(shmem.local(counter).expect("local"), [42]);
        }
    });
}

#[test]
fn nbi_fetch_errors_name_the_bad_word() {
    run_on("hgx8", 2, 0, |shmem| {
        let words = shmem.calloc::<u64>(2).expect("calloc");
        let one = words.at(0).expect("word");
        let err = shmem
            .atomic_fetch_add_nbi(words, one, 1, 1)
            .expect_err("a two-word fetch");
        assert!(matches!(err, ShmemError::LengthMismatch { .. }), "{err}");
        let stray = SymAddr(1 << 19).cast::<u64>(1);
        let err = shmem
            .atomic_fetch_nbi(stray, one, 1)
            .expect_err("fetch outside the heap");
        assert!(matches!(err, ShmemError::NotInHeap { .. }), "{err}");
        let err = shmem
            .atomic_swap_nbi(one, one, 3, 2)
            .expect_err("PE 2 of 2");
        assert!(
            matches!(err, ShmemError::PeOutOfRange { pe: 2, .. }),
            "{err}"
        );
        let nostore = shmem.ctx_create(CtxOptions::NOSTORE).expect("ctx");
        let err = nostore
            .atomic_fetch_inc_nbi(one, words.at(1).expect("word"), 1)
            .expect_err("an update on NOSTORE");
        assert!(
            matches!(err, ShmemError::StoreOnNostoreContext { .. }),
            "{err}"
        );
        nostore
            .atomic_fetch_nbi(one, words.at(1).expect("word"), 1)
            .expect("a plain fetch does not store");
        shmem.ctx_destroy(nostore).expect("destroy");
    });
}

// ---- signals -------------------------------------------------------------------------------

#[test]
fn put_signal_add_from_two_pes_counts_both() {
    on_every_machine(|shmem| {
        let (me, n) = (shmem.my_pe(), shmem.n_pes());
        let data = shmem.calloc::<u32>(2 * 16).expect("calloc");
        let sig = shmem.calloc::<u64>(1).expect("calloc");
        // PE 1 and the last PE (behind a NIC on ib-2) each send a block and add 1.
        let senders = [1, n - 1];
        if let Some(slot) = senders.iter().position(|&s| s == me) {
            let block = data.slice(slot * 16..slot * 16 + 16).expect("view");
            shmem
                .put_signal_nbi(block, &[me; 16], sig, 1, SignalOp::Add, 0)
                .expect("put_signal");
        }
        if me == 0 {
            assert_eq!(shmem.signal_wait_until(sig, Cmp::Eq, 2).expect("wait"), 2);
            let got = shmem.local(data).expect("local");
            assert_eq!(got[..16], [1; 16]);
            assert_eq!(got[16..], [n - 1; 16]);
        }
        shmem.barrier_all().expect("barrier");
    });
}

#[test]
fn signal_add_and_set_update_the_word_alone() {
    on_every_machine(|shmem| {
        let (me, n) = (shmem.my_pe(), shmem.n_pes());
        let sig = shmem.calloc::<u64>(1).expect("calloc");
        if me != 0 {
            shmem.signal_add(sig, u64::from(me), 0).expect("signal_add");
        }
        if me == 0 {
            let total = u64::from(n) * u64::from(n - 1) / 2;
            shmem.signal_wait_until(sig, Cmp::Eq, total).expect("wait");
            shmem.signal_set(sig, 1, n - 1).expect("signal_set");
        }
        if me == n - 1 {
            shmem.signal_wait_until(sig, Cmp::Eq, 1).expect("wait");
        }
        shmem.barrier_all().expect("barrier");
        let nostore = shmem.ctx_create(CtxOptions::NOSTORE).expect("ctx");
        let err = nostore.signal_set(sig, 1, 0).expect_err("NOSTORE");
        assert!(
            matches!(err, ShmemError::StoreOnNostoreContext { op: "signal_op" }),
            "{err}"
        );
        shmem.ctx_destroy(nostore).expect("destroy");
    });
}
