//! The rest of the point-to-point API on the simulator (issue 5 item 5): strided and sized RMA,
//! non-blocking fetching atomics, waits and tests on many words, pe_quiet, locks, signal
//! operations, global_exit and the setup queries. Where delivery order matters a test runs on
//! an NVSwitch node (`hgx8`) and on two InfiniBand hosts (`ib-2`, where PEs 8 and up sit
//! behind a NIC from PE 0) over a few seeds, printed so a failure can be replayed.

use rshmem::{Cmp, Config, CtxOptions, PeError, Shmem, ShmemError, SignalOp, Sym, SymAddr, run};
use sim::{Sim, SimBackend};

/// The two machines of ordering-sensitive tests, with the PE count each runs.
const MACHINES: [(&str, u32); 2] = [("hgx8", 8), ("ib-2", 16)];

/// A run of `n_pes` PEs on the preset `topology` with `seed`.
fn sim(topology: &str, n_pes: u32, seed: u64) -> Sim {
    let topology = sim::topology::presets::preset(topology).expect("a preset");
    Sim::builder(topology)
        .pes(n_pes)
        .seed(seed)
        .build()
        .expect("the machine has the GPUs")
}

/// A small heap and a short deadline.
fn config() -> Config {
    Config::default()
        .device_heap_size(1 << 20)
        .wait_timeout_ms(100)
}

/// Runs `pe_main` and returns every PE's value; panics naming the first PE that failed.
fn run_on<R: Send>(
    topology: &str,
    n_pes: u32,
    seed: u64,
    pe_main: impl Fn(&Shmem<SimBackend>) -> R + Sync,
) -> Vec<R> {
    println!("{topology}, seed {seed}, {n_pes} PEs");
    let output = run(sim(topology, n_pes, seed), config(), pe_main).expect("the PEs launch");
    match output.all_ok() {
        Ok((values, _report)) => values,
        Err(err) => panic!("{topology}, seed {seed}: {err}"),
    }
}

/// `pe_main` on every machine of [`MACHINES`] with seeds 0..3.
fn on_every_machine<R: Send>(pe_main: impl Fn(&Shmem<SimBackend>) -> R + Sync + Copy) {
    for (topology, n_pes) in MACHINES {
        for seed in 0..3 {
            run_on(topology, n_pes, seed, pe_main);
        }
    }
}

// ---- strided RMA ---------------------------------------------------------------------------

#[test]
fn iput_and_iget_move_every_stride_th_element() {
    let seen = run_on("hgx8", 2, 0, |shmem| {
        let (me, peer) = (shmem.my_pe(), 1 - shmem.my_pe());
        let target = shmem.calloc::<u32>(10).expect("calloc");
        let source: Vec<u32> = (0..12).map(|i| me * 100 + i).collect();
        // Elements 0, 3, 6, 9 of the source to 0, 2, 4, 6 of the peer's target.
        shmem.iput(target, &source, 2, 3, 4, peer).expect("iput");
        shmem.barrier_all().expect("barrier");
        let mine = shmem.local(target).expect("local");
        // And back: elements 0, 2, 4 of the peer's target to 0, 4, 8 of a local buffer.
        let mut back = vec![7u32; 9];
        shmem.iget(&mut back, target, 4, 2, 3, peer).expect("iget");
        (mine, back)
    });
    for (me, (mine, back)) in (0u32..).zip(seen) {
        let from = (1 - me) * 100;
        assert_eq!(mine, [from, 0, from + 3, 0, from + 6, 0, from + 9, 0, 0, 0]);
        let sent = me * 100;
        assert_eq!(back, [sent, 7, 7, 7, sent + 3, 7, 7, 7, sent + 6]);
    }
}

#[test]
fn ibput_and_ibget_move_blocks() {
    let seen = run_on("hgx8", 2, 1, |shmem| {
        let (me, peer) = (shmem.my_pe(), 1 - shmem.my_pe());
        let target = shmem.calloc::<u64>(12).expect("calloc");
        let source: Vec<u64> = (0..9).map(|i| u64::from(me) * 100 + i).collect();
        // Blocks of 2 taken every 3 source elements, placed every 4 target elements.
        shmem
            .ibput(target, &source, 4, 3, 2, 3, peer)
            .expect("ibput");
        shmem.barrier_all().expect("barrier");
        let mine = shmem.local(target).expect("local");
        // Touching blocks on both sides: one contiguous transfer.
        let mut whole = vec![0u64; 6];
        shmem
            .ibget(
                &mut whole,
                target.slice(4..10).expect("view"),
                3,
                3,
                3,
                2,
                peer,
            )
            .expect("ibget");
        // Blocks of 2 every 4 peer elements, packed every 2 here.
        let mut packed = vec![0u64; 6];
        shmem
            .ibget(&mut packed, target, 2, 4, 2, 3, peer)
            .expect("ibget");
        (mine, whole, packed)
    });
    for (me, (mine, whole, packed)) in (0u64..).zip(seen) {
        let f = (1 - me) * 100;
        assert_eq!(
            mine,
            [f, f + 1, 0, 0, f + 3, f + 4, 0, 0, f + 6, f + 7, 0, 0]
        );
        let s = me * 100;
        assert_eq!(whole, [s + 3, s + 4, 0, 0, s + 6, s + 7]);
        assert_eq!(packed, [s, s + 1, s + 3, s + 4, s + 6, s + 7]);
    }
}

#[test]
fn strided_puts_complete_at_quiet_across_a_nic() {
    // PE 0 iputs to a PE behind a NIC, quiets, then sets a flag: the waiter sees every element.
    for seed in 0..3 {
        let seen = run_on("ib-2", 16, seed, |shmem| {
            let me = shmem.my_pe();
            let data = shmem.calloc::<u32>(64).expect("calloc");
            let flag = shmem.calloc::<u64>(1).expect("calloc");
            let source: Vec<u32> = (1..=32).collect();
            match me {
                0 => {
                    shmem.iput(data, &source, 2, 1, 32, 9).expect("iput");
                    shmem.quiet().expect("quiet");
                    shmem.atomic_set(flag, 1, 9).expect("flag");
                }
                9 => {
                    shmem.wait_until(flag, Cmp::Eq, 1).expect("wait");
                }
                _ => {}
            }
            let got = shmem.local(data).expect("local");
            shmem.barrier_all().expect("barrier");
            got
        });
        let want: Vec<u32> = (0..64)
            .map(|i| if i % 2 == 0 { i / 2 + 1 } else { 0 })
            .collect();
        assert_eq!(seen[9], want, "seed {seed}");
    }
}

#[test]
fn strided_errors_name_the_stride_or_count_to_fix() {
    run_on("hgx8", 2, 0, |shmem| {
        let peer = 1 - shmem.my_pe();
        let target = shmem.calloc::<u32>(8).expect("calloc");
        let source = [1u32; 8];

        let err = shmem
            .iput(target, &source, 3, 1, 4, peer)
            .expect_err("element 9 of 8");
        assert!(
            matches!(
                err,
                ShmemError::StridedOutOfBounds {
                    op: "iput",
                    side: "destination",
                    stride: 3,
                    end: 10,
                    len: 8,
                    ..
                }
            ),
            "{err}"
        );
        assert!(
            err.to_string().contains("lower the count or the stride"),
            "{err}"
        );

        let err = shmem
            .iput(target, &source, 1, 0, 2, peer)
            .expect_err("source stride 0");
        assert!(
            matches!(
                err,
                ShmemError::StrideTooShort {
                    op: "iput",
                    side: "source",
                    stride: 0,
                    ..
                }
            ),
            "{err}"
        );

        let err = shmem
            .ibput(target, &source, 2, 4, 3, 2, peer)
            .expect_err("overlapping blocks");
        assert!(
            matches!(
                err,
                ShmemError::StrideTooShort {
                    op: "ibput",
                    side: "destination",
                    stride: 2,
                    block_len: 3,
                }
            ),
            "{err}"
        );

        let mut out = [0u32; 4];
        let err = shmem
            .iget(&mut out, target, 2, 1, 3, peer)
            .expect_err("element 4 of a 4-element buffer");
        assert!(
            matches!(
                err,
                ShmemError::StridedOutOfBounds {
                    op: "iget",
                    side: "destination",
                    ..
                }
            ),
            "{err}"
        );
        let err = shmem
            .ibget(&mut out, target, 2, 1, 2, 2, peer)
            .expect_err("overlapping source blocks");
        assert!(
            matches!(
                err,
                ShmemError::StrideTooShort {
                    op: "ibget",
                    side: "source",
                    ..
                }
            ),
            "{err}"
        );
        let err = shmem
            .ibget(&mut out, target, 2, 7, 2, 2, peer)
            .expect_err("source elements 7 and 8 of 8");
        assert!(
            matches!(
                err,
                ShmemError::StridedOutOfBounds {
                    op: "ibget",
                    side: "source",
                    end: 9,
                    ..
                }
            ),
            "{err}"
        );

        let err = shmem.iput(target, &source, 1, 1, 2, 5).expect_err("PE 5");
        assert!(
            matches!(err, ShmemError::PeOutOfRange { pe: 5, .. }),
            "{err}"
        );

        // Nothing to move is no error, and moves nothing.
        shmem
            .iput(target, &source, 0, 0, 0, peer)
            .expect("no elements");
        shmem
            .ibget(&mut out, target, 0, 0, 0, 9, peer)
            .expect("empty blocks");
        shmem.barrier_all().expect("barrier");
        assert_eq!(shmem.local(target).expect("local"), [0; 8]);
    });
}

// ---- sized RMA -----------------------------------------------------------------------------

#[test]
fn sized_puts_and_gets_move_whole_elements() {
    let seen = run_on("hgx8", 2, 0, |shmem| {
        let (me, peer) = (shmem.my_pe(), 1 - shmem.my_pe());
        let buffer = shmem.calloc::<u8>(5 * 32).expect("calloc");
        let at = |slot: u64| buffer.addr().byte_add(slot * 32);
        let bytes: Vec<u8> = (0..32).map(|i| i + 10 * me as u8).collect();
        shmem.put8(at(0), &bytes[..3], peer).expect("put8");
        shmem.put16(at(1), &bytes[..6], peer).expect("put16");
        shmem.put32(at(2), &bytes[..12], peer).expect("put32");
        shmem.put64(at(3), &bytes[..24], peer).expect("put64");
        shmem.put128(at(4), &bytes, peer).expect("put128");
        shmem.barrier_all().expect("barrier");
        vec![
            shmem.get8(at(0), 3, me).expect("get8"),
            shmem.get16(at(1), 6, me).expect("get16"),
            shmem.get32(at(2), 12, me).expect("get32"),
            shmem.get64(at(3), 24, me).expect("get64"),
            shmem.get128(at(4), 32, peer).expect("get128"),
        ]
    });
    for (me, got) in (0u8..).zip(seen) {
        let from: Vec<u8> = (0..32).map(|i| i + 10 * (1 - me)).collect();
        let mine: Vec<u8> = (0..32).map(|i| i + 10 * me).collect();
        assert_eq!(got[0], from[..3]);
        assert_eq!(got[1], from[..6]);
        assert_eq!(got[2], from[..12]);
        assert_eq!(got[3], from[..24]);
        assert_eq!(
            got[4], mine,
            "PE {me} reads back what it put128 to its peer"
        );
    }
}

#[test]
fn sized_operations_check_length_and_alignment() {
    run_on("hgx8", 1, 0, |shmem| {
        let buffer = shmem.calloc::<u8>(64).expect("calloc");
        let err = shmem.put32(buffer.addr(), &[0; 6], 0).expect_err("6 bytes");
        assert!(
            matches!(
                err,
                ShmemError::SizedLength {
                    op: "put32",
                    len_bytes: 6,
                    size_bytes: 4
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("multiple of 4 bytes"), "{err}");
        let err = shmem.get128(buffer.addr(), 20, 0).expect_err("20 bytes");
        assert!(
            matches!(err, ShmemError::SizedLength { size_bytes: 16, .. }),
            "{err}"
        );
        let err = shmem
            .put64(buffer.addr().byte_add(4), &[0; 8], 0)
            .expect_err("misaligned");
        assert!(
            matches!(err, ShmemError::Misaligned { align: 8, .. }),
            "{err}"
        );
        let err = shmem
            .get16(buffer.addr().byte_add(63), 2, 0)
            .expect_err("misaligned");
        assert!(
            matches!(err, ShmemError::Misaligned { align: 2, .. }),
            "{err}"
        );
        let err = shmem
            .get8(buffer.addr().byte_add(60), 8, 0)
            .expect_err("past the end");
        assert!(matches!(err, ShmemError::OutsideAllocation { .. }), "{err}");
        let err = shmem.put8(buffer.addr(), &[1], 1).expect_err("PE 1");
        assert!(matches!(err, ShmemError::PeOutOfRange { .. }), "{err}");
    });
}

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
        assert_eq!(
            shmem
                .wait_until_any_vector(words, None, Cmp::Le, &values)
                .expect("any_vector"),
            Some(0)
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

// ---- pe_quiet ------------------------------------------------------------------------------

#[test]
fn pe_quiet_completes_puts_to_the_pes_it_names() {
    for seed in 0..3 {
        let seen = run_on("ib-2", 16, seed, |shmem| {
            let me = shmem.my_pe();
            let data = shmem.calloc::<u64>(16).expect("calloc");
            let flag = shmem.calloc::<u64>(1).expect("calloc");
            match me {
                0 => {
                    shmem.put(data, &[11; 16], 12).expect("put");
                    shmem.pe_quiet(&[12]).expect("pe_quiet");
                    shmem.atomic_set(flag, 1, 12).expect("flag");
                    let err = shmem.pe_quiet(&[12, 16]).expect_err("PE 16 of 16");
                    assert!(
                        matches!(err, ShmemError::PeOutOfRange { pe: 16, .. }),
                        "{err}"
                    );
                }
                12 => {
                    shmem.wait_until(flag, Cmp::Eq, 1).expect("wait");
                }
                _ => {}
            }
            let got = shmem.local(data).expect("local");
            shmem.barrier_all().expect("barrier");
            got
        });
        assert_eq!(seen[12], [11; 16], "seed {seed}");
    }
}

// ---- locks ---------------------------------------------------------------------------------

/// Each PE from `first` on adds one to a counter on PE 0 `rounds` times with a get and a put,
/// inside the lock; returns the final count.
fn count_under_the_lock(shmem: &Shmem<SimBackend>, first: u32, rounds: u64) -> u64 {
    let lock = shmem.calloc::<i64>(1).expect("calloc");
    let counter = shmem.calloc::<u64>(1).expect("calloc");
    let rounds = if shmem.my_pe() >= first { rounds } else { 0 };
    for _ in 0..rounds {
        shmem.set_lock(lock).expect("set_lock");
        let value = shmem.g(counter, 0).expect("g");
        shmem.p(counter, value + 1, 0).expect("p");
        shmem.clear_lock(lock).expect("clear_lock");
    }
    shmem.barrier_all().expect("barrier");
    shmem.g(counter, 0).expect("g")
}

#[test]
fn a_lock_makes_a_get_and_put_counter_exact() {
    for seed in 0..3 {
        let seen = run_on("hgx8", 8, seed, |shmem| count_under_the_lock(shmem, 0, 25));
        assert!(
            seen.iter().all(|&count| count == 8 * 25),
            "seed {seed}: {seen:?}"
        );
    }
    // The 8 PEs of the second host, with the lock's home and the counter behind a NIC. (PEs
    // of the first host would read the counter over NVLink, where a put that crossed the NIC
    // is visible only after PE 0's own consistency step: SPEC section 3, not the lock.)
    for seed in 0..3 {
        let seen = run_on("ib-2", 16, seed, |shmem| count_under_the_lock(shmem, 8, 10));
        assert!(
            seen.iter().all(|&count| count == 8 * 10),
            "seed {seed}: {seen:?}"
        );
    }
}

#[test]
fn test_lock_fails_while_another_pe_holds_the_lock() {
    for (topology, n_pes) in MACHINES {
        let seen = run_on(topology, n_pes, 0, |shmem| {
            let me = shmem.my_pe();
            let tester = shmem.n_pes() - 1;
            let lock = shmem.calloc::<i64>(1).expect("calloc");
            let mut log = Vec::new();
            if me == 1 {
                shmem.set_lock(lock).expect("set_lock");
            }
            shmem.barrier_all().expect("barrier");
            if me == tester {
                log.push(shmem.test_lock(lock).expect("test_lock while held"));
            }
            shmem.barrier_all().expect("barrier");
            if me == 1 {
                shmem.clear_lock(lock).expect("clear_lock");
            }
            shmem.barrier_all().expect("barrier");
            if me == tester {
                log.push(shmem.test_lock(lock).expect("test_lock when free"));
                shmem.clear_lock(lock).expect("clear_lock");
            }
            shmem.barrier_all().expect("barrier");
            if me == 0 {
                // Free again, so set_lock does not wait.
                shmem.set_lock(lock).expect("set_lock");
                shmem.clear_lock(lock).expect("clear_lock");
            }
            log
        });
        assert_eq!(seen[n_pes as usize - 1], [false, true], "{topology}");
    }
}

#[test]
fn lock_misuse_is_an_error_not_a_hang() {
    run_on("hgx8", 2, 0, |shmem| {
        let me = shmem.my_pe();
        let locks = shmem.calloc::<i64>(2).expect("calloc");
        let lock = locks.at(me as usize).expect("lock");
        let err = shmem.clear_lock(lock).expect_err("not held");
        assert!(matches!(err, ShmemError::LockNotHeld { .. }), "{err}");
        assert!(err.to_string().contains("set_lock"), "{err}");
        shmem.set_lock(lock).expect("set_lock");
        let err = shmem.set_lock(lock).expect_err("held");
        assert!(
            matches!(err, ShmemError::LockAlreadyHeld { op: "set_lock", .. }),
            "{err}"
        );
        let err = shmem.test_lock(lock).expect_err("held");
        assert!(
            matches!(
                err,
                ShmemError::LockAlreadyHeld {
                    op: "test_lock",
                    ..
                }
            ),
            "{err}"
        );
        shmem.clear_lock(lock).expect("clear_lock");
        let err = shmem.set_lock(locks).expect_err("two words");
        assert!(matches!(err, ShmemError::LengthMismatch { .. }), "{err}");
        let crooked = locks.addr().byte_add(4).cast::<i64>(1);
        let err = shmem.test_lock(crooked).expect_err("misaligned");
        assert!(matches!(err, ShmemError::Misaligned { .. }), "{err}");
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

// ---- global_exit ---------------------------------------------------------------------------

#[test]
fn global_exit_ends_every_pe_and_reports_the_status() {
    let output = run(sim("hgx8", 4, 0), config(), |shmem| {
        let flag = shmem.calloc::<u64>(1).expect("calloc");
        match shmem.my_pe() {
            1 => shmem.global_exit(3),
            // Blocked in a wait nobody satisfies.
            0 => {
                let _ = shmem.wait_until(flag, Cmp::Eq, 1);
            }
            // Polling a local word in a loop, which only the exit ends.
            2 => while !shmem.test(flag, Cmp::Eq, 1).expect("test") {},
            // Done with its program, on to the final barrier.
            _ => {}
        }
    })
    .expect("the PEs launch");
    for (pe, result) in output.results.iter().enumerate() {
        assert!(
            matches!(result, Err(PeError::GlobalExit { pe: 1, status: 3 })),
            "PE {pe}: {result:?}"
        );
    }
    assert_eq!(output.global_exit(), Some((1, 3)));
    let message = output.results[0].as_ref().unwrap_err().to_string();
    assert!(message.contains("PE 1 calling global_exit(3)"), "{message}");
    // Promptly: long before any wait's deadline.
    assert!(
        output.report.sim_time_ns < 100_000_000 / 2,
        "{}",
        output.report.sim_time_ns
    );
}

#[test]
fn a_panic_without_global_exit_is_still_a_panic() {
    let output = run(sim("hgx8", 2, 0), config(), |shmem| {
        if shmem.my_pe() == 0 {
            panic!("on purpose");
        }
    })
    .expect("the PEs launch");
    assert!(
        matches!(&output.results[0], Err(PeError::Failed(f)) if f.message == "on purpose"),
        "{:?}",
        output.results[0]
    );
    assert!(
        matches!(output.results[1], Err(PeError::Finalize { .. })),
        "{:?}",
        output.results[1]
    );
    assert_eq!(output.global_exit(), None);
}

// ---- setup queries -------------------------------------------------------------------------

#[test]
fn accessibility_and_library_queries() {
    run_on("hgx8", 2, 0, |shmem| {
        let n = shmem.n_pes();
        assert!((0..n).all(|pe| shmem.pe_accessible(pe)));
        assert!(!shmem.pe_accessible(n));
        let sym: Sym<u64> = shmem.malloc(4).expect("malloc");
        assert!(shmem.addr_accessible(sym, 1));
        assert!(shmem.addr_accessible(sym.slice(1..3).expect("view"), 0));
        assert!(!shmem.addr_accessible(sym, n));
        assert!(
            !shmem.addr_accessible(sym.addr().cast::<u64>(5), 0),
            "past the end"
        );
        assert!(!shmem.addr_accessible(sym.addr().byte_add(4).cast::<u64>(1), 0));
        shmem.free(sym).expect("free");
        assert!(!shmem.addr_accessible(sym, 0), "freed");
    });
    assert_eq!(rshmem::info_get_version(), (1, 5));
    assert!(rshmem::info_get_name().starts_with("rshmem "));
}
