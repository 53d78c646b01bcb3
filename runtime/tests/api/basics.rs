//! The basic API end to end on the simulator (put, get, atomics, waits, signals, barriers,
//! init): each test runs a small SHMEM program on a simulated HGX node and checks what every
//! PE saw. Runs are deterministic; tests that depend on delivery order repeat over a few seeds,
//! printed so a failure can be replayed.

use rshmem::{Cmp, PeError, Shmem, ShmemError, SignalOp, Sym, SymAddr, run};
use sim::SimBackend;

use crate::common::{config, run_on, sim};

#[test]
fn hello_reports_pe_and_count() {
    for n_pes in [1, 2, 8] {
        let seen = run_on("hgx8", n_pes, 0, |shmem| (shmem.my_pe(), shmem.n_pes()));
        let want: Vec<(u32, u32)> = (0..n_pes).map(|pe| (pe, n_pes)).collect();
        assert_eq!(seen, want);
    }
}

#[test]
fn ring_put_reaches_the_next_pe() {
    for seed in 0..3 {
        let seen = run_on("hgx8", 5, seed, |shmem| {
            let (me, n) = (shmem.my_pe(), shmem.n_pes());
            let slot = shmem.malloc::<u64>(4).expect("malloc");
            let mine = [u64::from(me); 4];
            shmem.put(slot, &mine, (me + 1) % n).expect("put");
            shmem.barrier_all().expect("barrier");
            let got_local = shmem.local(slot).expect("local");
            let got_remote = shmem
                .get(slot.slice(1..3).expect("view"), (me + 1) % n)
                .expect("get");
            let one = shmem.g(slot.at(3).expect("element"), me).expect("g");
            (got_local, got_remote, one)
        });
        for (me, (local, remote, one)) in (0u64..).zip(seen) {
            let before = (me + 4) % 5;
            assert_eq!(local, vec![before; 4]);
            assert_eq!(remote, vec![me; 2]);
            assert_eq!(one, before);
        }
    }
}

#[test]
fn byte_operations_need_no_alignment() {
    let seen = run_on("hgx8", 2, 0, |shmem| {
        let me = shmem.my_pe();
        let buffer = shmem.calloc::<u8>(16).expect("calloc");
        let odd = buffer.addr().byte_add(3);
        shmem.put_bytes(odd, b"hello", 1 - me).expect("put_bytes");
        shmem
            .p(buffer.at(0).expect("element"), 7, 1 - me)
            .expect("p");
        shmem.barrier_all().expect("barrier");
        shmem
            .get_bytes(odd, 5, me)
            .expect("get_bytes")
            .into_iter()
            .chain(
                shmem
                    .local(buffer.slice(..1).expect("view"))
                    .expect("local"),
            )
            .collect::<Vec<u8>>()
    });
    assert_eq!(seen, vec![b"hello\x07".to_vec(); 2]);
}

#[test]
fn get_nbi_lands_at_quiet() {
    let seen = run_on("hgx8", 2, 0, |shmem| {
        let me = shmem.my_pe();
        let source = shmem.malloc::<u32>(3).expect("malloc");
        let target = shmem.calloc::<u32>(3).expect("calloc");
        shmem
            .set_local(source, &[me, me + 10, me + 20])
            .expect("set_local");
        shmem.barrier_all().expect("barrier");
        shmem.get_nbi(target, source, 1 - me).expect("get_nbi");
        shmem.quiet().expect("quiet");
        shmem.local(target).expect("local")
    });
    assert_eq!(seen, vec![vec![1, 11, 21], vec![0, 10, 20]]);
}

/// Every kind of bad input, checked on every PE of one run.
#[test]
fn bad_inputs_are_errors_that_name_the_fix() {
    run_on("hgx8", 2, 0, |shmem| {
        let me = shmem.my_pe();
        let words = shmem.malloc::<u64>(4).expect("malloc");

        let err = shmem.put(words, &[1; 4], 2).expect_err("PE 2 of 2");
        assert!(
            matches!(err, ShmemError::PeOutOfRange { pe: 2, n_pes: 2 }),
            "{err}"
        );
        assert!(err.to_string().contains("n_pes()"), "{err}");

        let stray = SymAddr(1 << 19).cast::<u64>(1);
        let err = shmem.g(stray, me).expect_err("nothing allocated there");
        assert!(matches!(err, ShmemError::NotInHeap { .. }), "{err}");

        let too_long = words.addr().cast::<u64>(5);
        let err = shmem.get(too_long, me).expect_err("past the end");
        assert!(
            matches!(
                err,
                ShmemError::OutsideAllocation {
                    len_bytes: 40,
                    alloc_len_bytes: 32,
                    ..
                }
            ),
            "{err}"
        );

        let bytes = shmem.malloc::<u8>(16).expect("malloc");
        let crooked = bytes.addr().byte_add(1).cast::<u32>(1);
        let err = shmem.p(crooked, 5, me).expect_err("misaligned");
        assert!(
            matches!(err, ShmemError::Misaligned { align: 4, .. }),
            "{err}"
        );
        let err = shmem
            .atomic_add(words.addr().byte_add(4).cast::<u64>(1), 1, me)
            .expect_err("misaligned");
        assert!(
            matches!(err, ShmemError::Misaligned { align: 8, .. }),
            "{err}"
        );

        let err = shmem.put(words, &[1; 3], me).expect_err("short source");
        assert!(
            matches!(
                err,
                ShmemError::LengthMismatch {
                    expected: 4,
                    actual: 3
                }
            ),
            "{err}"
        );
        let err = shmem.atomic_fetch(words, me).expect_err("four words");
        assert!(matches!(err, ShmemError::LengthMismatch { .. }), "{err}");
        let err = words.slice(2..9).expect_err("outside the view");
        assert!(matches!(err, ShmemError::OutOfBounds { .. }), "{err}");

        let err = shmem
            .malloc::<u8>(2 << 20)
            .expect_err("larger than the heap");
        assert!(matches!(err, ShmemError::HeapExhausted { .. }), "{err}");
        assert!(
            err.to_string().contains("SHMEM_DEVICE_SYMMETRIC_SIZE"),
            "{err}"
        );

        let err = shmem
            .malloc::<u64>(if me == 0 { 8 } else { 16 })
            .expect_err("sizes differ");
        let message = err.to_string();
        assert!(
            matches!(err, ShmemError::CollectiveMismatch { .. }),
            "{message}"
        );
        assert!(message.contains("PE 0: malloc(64 bytes"), "{message}");
        assert!(message.contains("PE 1: malloc(128 bytes"), "{message}");

        let err = shmem.align::<u64>(24, 1).expect_err("not a power of two");
        assert!(
            matches!(err, ShmemError::InvalidAlignment { align: 24 }),
            "{err}"
        );
        let aligned = shmem.align::<u8>(4096, 1).expect("align");
        assert_eq!(aligned.addr().0 % 4096, 0);

        let err = shmem
            .free(words.slice(1..).expect("view"))
            .expect_err("inside");
        assert!(
            matches!(err, ShmemError::NotAllocationStart { .. }),
            "{err}"
        );
        shmem.free(words).expect("free");
        let err = shmem.put(words, &[1; 4], me).expect_err("freed");
        assert!(matches!(err, ShmemError::FreedAllocation { .. }), "{err}");
        let err = shmem.free(words).expect_err("freed twice");
        assert!(matches!(err, ShmemError::FreedAllocation { .. }), "{err}");

        // After all those errors the PEs still agree on the heap.
        let after = shmem.malloc::<u64>(1).expect("malloc after errors");
        shmem.p(after, 1, 1 - me).expect("p");
    });
}

#[test]
fn fetch_add_from_every_pe_sums() {
    for seed in 0..3 {
        let seen = run_on("hgx8", 8, seed, |shmem| {
            let me = u64::from(shmem.my_pe());
            let counter = shmem.calloc::<u64>(1).expect("calloc");
            let old = shmem
                .atomic_fetch_add(counter, me + 1, 0)
                .expect("fetch_add");
            shmem.atomic_inc(counter, 0).expect("inc");
            shmem.barrier_all().expect("barrier");
            (old, shmem.atomic_fetch(counter, 0).expect("fetch"))
        });
        let mut olds: Vec<u64> = seen.iter().map(|(old, _)| *old).collect();
        olds.sort_unstable();
        olds.dedup();
        assert_eq!(
            olds.len(),
            8,
            "each fetch_add saw a different value: {seen:?}"
        );
        assert!(seen.iter().all(|(_, total)| *total == 36 + 8), "{seen:?}");
    }
}

#[test]
fn atomics_follow_their_integer_type() {
    let seen = run_on("hgx8", 2, 0, |shmem| {
        let me = shmem.my_pe();
        let peer = 1 - me;
        let word = shmem.calloc::<i32>(1).expect("calloc");
        let mut log = Vec::new();
        if me == 0 {
            shmem.atomic_set(word, -5, peer).expect("set");
            shmem.quiet().expect("quiet");
            log.push(shmem.atomic_swap(word, 6, peer).expect("swap"));
            log.push(
                shmem
                    .atomic_compare_swap(word, 0, 9, peer)
                    .expect("failed cas"),
            );
            log.push(shmem.atomic_compare_swap(word, 6, -1, peer).expect("cas"));
            log.push(shmem.atomic_fetch_inc(word, peer).expect("fetch_inc"));
            log.push(shmem.atomic_fetch_or(word, 0b1100, peer).expect("fetch_or"));
            log.push(
                shmem
                    .atomic_fetch_and(word, 0b0110, peer)
                    .expect("fetch_and"),
            );
            log.push(
                shmem
                    .atomic_fetch_xor(word, 0b0011, peer)
                    .expect("fetch_xor"),
            );
            shmem.atomic_or(word, 0b1000, peer).expect("or");
            shmem.fence().expect("fence");
            shmem.atomic_and(word, 0b1110, peer).expect("and");
            shmem.fence().expect("fence");
            shmem.atomic_xor(word, 0b0001, peer).expect("xor");
        }
        shmem.barrier_all().expect("barrier");
        log.push(shmem.atomic_fetch(word, me).expect("fetch"));
        log.push(shmem.wait_until(word, Cmp::Ge, 0).expect("wait_until"));
        log
    });
    assert_eq!(seen[0], vec![-5, 6, 6, -1, 0, 0b1100, 0b0100, 0, 0]);
    assert_eq!(seen[1], vec![0b1111, 0b1111]);
}

#[test]
fn wait_until_and_put_signal_pass_messages() {
    for seed in 0..3 {
        let seen = run_on("hgx8", 3, seed, |shmem| {
            let me = shmem.my_pe();
            let data = shmem.calloc::<u32>(64).expect("calloc");
            let flag = shmem.calloc::<u64>(1).expect("calloc");
            let sig = shmem.calloc::<u64>(1).expect("calloc");
            let message: Vec<u32> = (0..64).map(|i| i * (me + 1)).collect();
            match me {
                0 => {
                    // Data, fence, flag: the flag's arrival implies the data's.
                    shmem.put(data, &message, 1).expect("put");
                    shmem.fence().expect("fence");
                    shmem.atomic_set(flag, 1, 1).expect("set flag");
                    Vec::new()
                }
                1 => {
                    assert!(!shmem.test(flag, Cmp::Eq, 5).expect("test"));
                    shmem.wait_until(flag, Cmp::Eq, 1).expect("wait_until");
                    assert!(shmem.test(flag, Cmp::Eq, 1).expect("test"));
                    let got = shmem.local(data).expect("local");
                    shmem
                        .put_signal(data, &got, sig, 1, SignalOp::Add, 2)
                        .expect("put_signal");
                    got
                }
                _ => {
                    let value = shmem
                        .signal_wait_until(sig, Cmp::Ge, 1)
                        .expect("signal_wait_until");
                    assert_eq!(value, 1);
                    assert_eq!(shmem.signal_fetch(sig).expect("signal_fetch"), 1);
                    shmem.local(data).expect("local")
                }
            }
        });
        let sent: Vec<u32> = (0..64).collect();
        assert_eq!(seen[1], sent);
        assert_eq!(seen[2], sent);
    }
}

#[test]
fn barriers_repeat() {
    for n_pes in [5, 8] {
        run_on("hgx8", n_pes, 1, |shmem| {
            let counter = shmem.calloc::<u64>(1).expect("calloc");
            let n = u64::from(shmem.n_pes());
            for round in 1..=10 {
                shmem.atomic_add(counter, 1, 0).expect("add");
                shmem.barrier_all().expect("barrier");
                assert_eq!(shmem.g(counter, 0).expect("g"), n * round, "round {round}");
                shmem.sync_all().expect("sync");
            }
        });
    }
}

#[test]
fn a_wait_nobody_satisfies_is_an_error() {
    let output = run(sim("hgx8", 2, 0), config(), |shmem| {
        let flag = shmem.calloc::<u64>(1).expect("calloc");
        if shmem.my_pe() == 0 {
            Some(shmem.wait_until(flag, Cmp::Eq, 1).map(|_| ()))
        } else {
            None
        }
    })
    .expect("the PEs launch");
    let waited = match &output.results[0] {
        Ok(Some(waited)) => waited,
        other => panic!("PE 0 should have returned its wait's result: {other:?}"),
    };
    let Err(err) = waited else {
        panic!("nothing sets the flag, yet PE 0's wait returned");
    };
    // Which comes first depends on the backend: the deadline, or the proof that no PE can
    // ever set the flag. Either way the report names the wait.
    assert!(
        matches!(
            err,
            ShmemError::Queue(hw::QueueError::Deadline { .. } | hw::QueueError::Deadlock { .. })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("wait_until"), "{err}");
}

#[test]
fn a_heap_too_small_for_init_fails_every_pe() {
    let output = run(
        sim("hgx8", 2, 0),
        config().device_heap_size(64),
        |_shmem: &Shmem<SimBackend>| (),
    )
    .expect("the PEs launch");
    for result in &output.results {
        assert!(
            matches!(
                result,
                Err(PeError::Init {
                    source: ShmemError::HeapExhausted { .. },
                    ..
                })
            ),
            "{result:?}"
        );
    }
}

#[test]
fn a_heap_larger_than_the_device_names_the_variable() {
    let config = config().device_heap_size(1 << 50);
    let output =
        run(sim("hgx8", 1, 0), config, |_shmem: &Shmem<SimBackend>| ()).expect("the PEs launch");
    let Err(err) = &output.results[0] else {
        panic!("a 1 PiB heap should not fit a simulated H200");
    };
    assert!(
        matches!(
            err,
            PeError::Init {
                source: ShmemError::HeapSegment { .. },
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("SHMEM_DEVICE_SYMMETRIC_SIZE"),
        "{err}"
    );
}

/// `Sym` handles are plain data: they can be returned from a PE and compared.
#[test]
fn handles_agree_across_pes() {
    let seen: Vec<Sym<u16>> = run_on("hgx8", 4, 0, |shmem| {
        shmem.malloc::<u16>(10).expect("malloc")
    });
    assert!(
        seen.windows(2).all(|w| w[0].addr() == w[1].addr()),
        "{seen:?}"
    );
}
