//! Strided RMA (iput/iget, ibput/ibget), sized RMA (put8..put128, get8..get128) and pe_quiet
//! on the simulator.

use rshmem::{Cmp, ShmemError};

use crate::common::run_on;

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
            .ibput(target, &source, 0, 4, 3, 2, peer)
            .expect_err("destination stride 0");
        assert!(
            matches!(
                err,
                ShmemError::StrideTooShort {
                    op: "ibput",
                    side: "destination",
                    stride: 0,
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
        // Overlapping source blocks read elements twice, which the text allows.
        shmem
            .ibget(&mut out, target, 2, 1, 2, 2, peer)
            .expect("overlapping source blocks");
        let err = shmem
            .ibget(&mut out, target, 2, 0, 2, 2, peer)
            .expect_err("source stride 0");
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
