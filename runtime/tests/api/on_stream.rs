//! On-stream operations on the simulator (docs/p2p.md): order with the context's earlier
//! operations, sources read from symmetric memory, and the refusals. The conformance body
//! `on_stream` (tests/conformance/src/bodies.rs) runs the same calls on every backend.

use crate::common::run_ok;
use rshmem::{Cmp, CtxOptions, ShmemError, SignalOp};

/// A chain of on-stream puts to three different PEs, then an on-stream signal to each: every
/// receiver sees all of its data once it sees the signal, although the signal goes out right
/// after the puts with no fence or quiet between (the stream orders them, across PEs too).
#[test]
fn on_stream_signals_follow_every_earlier_put_to_any_pe() {
    let seen = run_ok("ib-2", 16, |shmem| {
        let (me, n) = (shmem.my_pe(), shmem.n_pes());
        let source = shmem.malloc::<u32>(1024).unwrap();
        let landed = shmem.calloc::<u32>(1024).unwrap();
        let signal = shmem.calloc::<u64>(1).unwrap();
        shmem
            .set_local(
                source,
                &(0..1024).map(|i| me * 10_000 + i).collect::<Vec<_>>(),
            )
            .unwrap();
        shmem.barrier_all().unwrap();
        let targets: Vec<u32> = (1..=3).map(|k| (me + k * 5) % n).collect();
        let stream = shmem.ctx_create(CtxOptions::default()).unwrap();
        if me == 0 {
            for &pe in &targets {
                stream.put_on_stream(landed, source, pe).unwrap();
            }
            for &pe in &targets {
                stream
                    .signal_op_on_stream(signal, 1, SignalOp::Set, pe)
                    .unwrap();
            }
            stream.quiet().unwrap();
        } else if [5, 10, 15].contains(&me) {
            shmem.signal_wait_until(signal, Cmp::Eq, 1).unwrap();
        }
        let got = shmem.local(landed).unwrap();
        shmem.barrier_all().unwrap();
        shmem.ctx_destroy(stream).unwrap();
        got.iter().enumerate().all(|(i, &v)| v == i as u32)
    });
    let receivers: Vec<usize> = (0..16).filter(|pe| seen[*pe]).collect();
    assert_eq!(receivers, [5, 10, 15], "receivers that saw PE 0's block");
}

/// The source is symmetric memory read when the put runs: after quiet, the target holds what
/// the source held, and changing the source afterwards changes nothing there.
#[test]
fn put_on_stream_copies_the_symmetric_source_and_get_on_stream_brings_it_back() {
    let seen = run_ok("hgx8", 2, |shmem| {
        let source = shmem.malloc::<u64>(4).unwrap();
        let landed = shmem.calloc::<u64>(4).unwrap();
        let back = shmem.calloc::<u64>(4).unwrap();
        let me = u64::from(shmem.my_pe());
        shmem.set_local(source, &[me + 1; 4]).unwrap();
        shmem.barrier_all().unwrap();
        let peer = 1 - shmem.my_pe();
        shmem.put_on_stream(landed, source, peer).unwrap();
        shmem.quiet().unwrap();
        shmem.set_local(source, &[99; 4]).unwrap();
        shmem.barrier_all().unwrap();
        shmem.get_on_stream(back, landed, peer).unwrap();
        shmem.quiet().unwrap();
        (shmem.local(landed).unwrap(), shmem.local(back).unwrap())
    });
    assert_eq!(seen[0], (vec![2; 4], vec![1; 4]));
    assert_eq!(seen[1], (vec![1; 4], vec![2; 4]));
}

#[test]
fn bad_on_stream_calls_are_refused_by_name() {
    run_ok("hgx8", 2, |shmem| {
        let a = shmem.calloc::<u64>(4).unwrap();
        let b = shmem.calloc::<u64>(8).unwrap();
        let sig = shmem.calloc::<u64>(1).unwrap();
        let err = shmem.put_on_stream(a, b, 1).unwrap_err();
        assert!(matches!(err, ShmemError::LengthMismatch { .. }), "{err}");
        let err = shmem.put_on_stream(a, a, 7).unwrap_err();
        assert!(matches!(err, ShmemError::PeOutOfRange { .. }), "{err}");
        let err = shmem.get_on_stream(a, b, 0).unwrap_err();
        assert!(matches!(err, ShmemError::LengthMismatch { .. }), "{err}");
        let err = shmem
            .signal_op_on_stream(b, 1, SignalOp::Add, 0)
            .unwrap_err();
        assert!(matches!(err, ShmemError::LengthMismatch { .. }), "{err}");
        let nostore = shmem.ctx_create(CtxOptions::NOSTORE).unwrap();
        let err = nostore.put_on_stream(a, a, 0).unwrap_err();
        assert!(
            matches!(err, ShmemError::StoreOnNostoreContext { .. }),
            "{err}"
        );
        let err = nostore
            .put_signal_on_stream(a, a, sig, 1, SignalOp::Set, 0)
            .unwrap_err();
        assert!(
            matches!(err, ShmemError::StoreOnNostoreContext { .. }),
            "{err}"
        );
        nostore.get_on_stream(a, a, 1).unwrap();
        nostore.quiet_on_stream().unwrap();
        shmem.barrier_all_on_stream(&nostore).unwrap();
        shmem.ctx_destroy(nostore).unwrap();
    });
}
