//! The simulator against the hardware contract directly, without the runtime.

#[allow(dead_code)]
mod common;
use common::{FAR, ib_pair, local, nvlink_pair, remote, setup};

use hw::{
    AmoKind, AmoOp, AmoWidth, Cmp, Copier, Device, Instant, Launcher, MemKind, Pe, Queue,
    QueueError, SignalOp, Topology, WaitSpec,
};
use sim::Sim;

fn flag_at(offset: u64, value: u64) -> WaitSpec {
    WaitSpec {
        word: local(offset, 8),
        width: AmoWidth::W64,
        signed: false,
        cmp: Cmp::Ge,
        value,
        purpose: "test",
    }
}

/// Message passing with put-with-signal: the consumer sees the data once it sees the signal.
fn message_passing(topology: Topology, seed: u64) -> (Vec<u64>, sim::SimReport) {
    let sim = Sim::builder(topology).seed(seed).build().unwrap();
    let (results, report) = sim
        .launch(|dev| {
            setup(&dev);
            let q = dev.create_queue().unwrap();
            if dev.pe() == Pe(0) {
                let data: Vec<u8> = (0..64).collect();
                q.put_signal(
                    remote(1, 0, 64),
                    &data,
                    remote(1, 128, 8),
                    SignalOp::Set,
                    1,
                    Copier::Device,
                )
                .unwrap();
                q.quiet(FAR).unwrap();
                0
            } else {
                dev.wait_until(flag_at(128, 1), FAR).unwrap();
                let mut out = vec![0; 64];
                dev.read_local(local(0, 64), &mut out);
                assert_eq!(
                    out,
                    (0..64).collect::<Vec<u8>>(),
                    "data visible with the signal"
                );
                dev.now().0
            }
        })
        .unwrap();
    (results.into_iter().map(|r| r.unwrap()).collect(), report)
}

#[test]
fn put_signal_delivers_data_before_the_signal_on_nvlink_and_ib() {
    for topology in [nvlink_pair(), ib_pair()] {
        for seed in 0..20 {
            let (times, report) = message_passing(topology.clone(), seed);
            assert!(
                report.failure.is_none(),
                "seed {seed}: {:?}",
                report.failure
            );
            assert!(
                times[1] >= 500,
                "the signal cannot arrive before the link latency"
            );
            assert_eq!(report.ops.put_signals, 1);
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_trace() {
    let a = message_passing(ib_pair(), 42).1;
    let b = message_passing(ib_pair(), 42).1;
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(a.sim_time_ns, b.sim_time_ns);
}

#[test]
fn fetch_add_from_every_pe_is_atomic() {
    let sim = Sim::builder(ib_pair()).seed(3).build().unwrap();
    let (results, _) = sim
        .launch(|dev| {
            setup(&dev);
            let q = dev.create_queue().unwrap();
            let add = AmoOp {
                kind: AmoKind::Add,
                operand: 1,
                width: AmoWidth::W64,
            };
            let mut seen = Vec::new();
            for _ in 0..10 {
                let t = q.amo(remote(0, 0, 8), add, true).unwrap();
                q.wait_ticket(t, FAR).unwrap();
                seen.push(u64::from_le_bytes(q.take_fetched(t).try_into().unwrap()));
            }
            q.quiet(FAR).unwrap();
            seen
        })
        .unwrap();
    let mut all: Vec<u64> = results.into_iter().flat_map(|r| r.unwrap()).collect();
    all.sort_unstable();
    assert_eq!(
        all,
        (0..20).collect::<Vec<u64>>(),
        "every old value seen exactly once"
    );
}

#[test]
fn a_wait_nobody_satisfies_is_reported_as_a_deadlock_naming_the_pe() {
    let sim = Sim::builder(nvlink_pair()).build().unwrap();
    let (results, report) = sim
        .launch(|dev| {
            setup(&dev);
            if dev.pe() == Pe(1) {
                dev.wait_until(flag_at(0, 1), FAR).map(|_| ())
            } else {
                Ok(())
            }
        })
        .unwrap();
    assert!(results[0].as_ref().unwrap().is_ok());
    let err = results[1].as_ref().unwrap().as_ref().unwrap_err();
    let QueueError::Deadlock { report: waits } = err else {
        panic!("expected a deadlock, got {err}")
    };
    assert_eq!(waits.waits.len(), 1);
    assert_eq!(waits.waits[0].0, Pe(1));
    assert!(waits.waits[0].1.contains("test"), "{}", waits.waits[0].1);
    assert_eq!(waits.finished, vec![Pe(0)]);
    assert!(report.failure.unwrap().contains("deadlock"));
}

#[test]
fn a_deadline_ends_a_wait_while_a_peer_is_still_busy() {
    let sim = Sim::builder(nvlink_pair()).build().unwrap();
    let (results, _) = sim
        .launch(|dev| {
            setup(&dev);
            if dev.pe() == Pe(1) {
                dev.wait_until(flag_at(0, 1), Instant(50_000)).map(|_| ())
            } else {
                // Stay busy past the deadline without satisfying the wait.
                for _ in 0..1000 {
                    let _ = dev.test(flag_at(8, 1));
                }
                Ok(())
            }
        })
        .unwrap();
    let err = results[1].as_ref().unwrap().as_ref().unwrap_err();
    assert!(
        matches!(err, QueueError::Deadline { pe: Pe(1), .. }),
        "{err}"
    );
}

#[test]
fn a_panicking_pe_is_reported_and_its_peers_do_not_hang() {
    let sim = Sim::builder(nvlink_pair()).build().unwrap();
    let (results, report) = sim
        .launch(|dev| {
            setup(&dev);
            if dev.pe() == Pe(0) {
                panic!("boom");
            }
            dev.wait_until(flag_at(0, 1), FAR).map(|_| ())
        })
        .unwrap();
    assert_eq!(results[0].as_ref().unwrap_err().message, "boom");
    let err = results[1].as_ref().unwrap().as_ref().unwrap_err();
    let QueueError::Deadlock { report: waits } = err else {
        panic!("{err}")
    };
    assert_eq!(waits.failed[0].pe, Pe(0));
    assert!(report.failure.is_some());
}

#[test]
fn unfenced_puts_reorder_under_some_seed_and_fenced_ones_never_do() {
    // PE 0 writes data then flag to PE 1 with two puts; PE 1 reads both after the flag.
    let run = |fence: bool, seed: u64| {
        let sim = Sim::builder(nvlink_pair()).seed(seed).build().unwrap();
        let (results, _) = sim
            .launch(|dev| {
                setup(&dev);
                let q = dev.create_queue().unwrap();
                if dev.pe() == Pe(0) {
                    q.put(remote(1, 0, 8), &7u64.to_le_bytes(), Copier::Device)
                        .unwrap();
                    if fence {
                        q.fence().unwrap();
                    }
                    q.put(remote(1, 8, 8), &1u64.to_le_bytes(), Copier::Device)
                        .unwrap();
                    q.quiet(FAR).unwrap();
                    true
                } else {
                    dev.wait_until(flag_at(8, 1), FAR).unwrap();
                    let mut out = [0u8; 8];
                    dev.read_local(local(0, 8), &mut out);
                    u64::from_le_bytes(out) == 7
                }
            })
            .unwrap();
        *results[1].as_ref().unwrap()
    };
    let stale_without_fence = (0..64).filter(|&s| !run(false, s)).count();
    let stale_with_fence = (0..64).filter(|&s| !run(true, s)).count();
    assert!(
        stale_without_fence > 0,
        "the simulator must show the reordering the rules allow"
    );
    assert_eq!(stale_with_fence, 0, "a fence orders delivery");
}

#[test]
fn bandwidth_matches_the_link_for_large_puts() {
    let sim = Sim::builder(nvlink_pair()).build().unwrap();
    let (results, _) = sim
        .launch(|dev| {
            let key = dev.create_segment(MemKind::Device, 64 << 20).unwrap();
            let all = dev.exchange(&key.0, FAR).unwrap();
            for (peer, k) in all.iter().cloned().enumerate() {
                dev.import_segment(Pe(peer as u32), MemKind::Device, &hw::SegmentKey(k))
                    .unwrap();
            }
            let q = dev.create_queue().unwrap();
            if dev.pe() == Pe(0) {
                let data = vec![1u8; 64 << 20];
                let start = dev.now();
                q.put(remote(1, 0, 64 << 20), &data, Copier::Device)
                    .unwrap();
                q.quiet(FAR).unwrap();
                dev.now().since(start).0
            } else {
                0
            }
        })
        .unwrap();
    let elapsed_ns = *results[0].as_ref().unwrap();
    let gbps = (64u64 << 20) as f64 / elapsed_ns as f64;
    assert!(
        (gbps - 100.0).abs() < 2.0,
        "{gbps} GB/s over a 100 GB/s link"
    );
}

#[test]
fn wait_until_any_wakes_on_whichever_word_is_written_on_nvlink_and_ib() {
    for topology in [nvlink_pair(), ib_pair()] {
        for seed in 0..5 {
            let sim = Sim::builder(topology.clone()).seed(seed).build().unwrap();
            let (results, report) = sim
                .launch(|dev| {
                    setup(&dev);
                    if dev.pe() == Pe(0) {
                        let q = dev.create_queue().unwrap();
                        let set = AmoOp {
                            kind: AmoKind::Set,
                            operand: 3,
                            width: AmoWidth::W64,
                        };
                        q.amo(remote(1, 24, 8), set, false).unwrap();
                        q.quiet(FAR).unwrap();
                        None
                    } else {
                        let specs = [flag_at(0, 1), flag_at(8, 1), flag_at(24, 2)];
                        Some(dev.wait_until_any(&specs, FAR).unwrap())
                    }
                })
                .unwrap();
            assert!(
                report.failure.is_none(),
                "seed {seed}: {:?}",
                report.failure
            );
            assert_eq!(results[1].as_ref().unwrap(), &Some((2, 3)), "seed {seed}");
        }
    }
}

#[test]
fn a_wait_on_many_words_nobody_writes_names_each_word() {
    let sim = Sim::builder(nvlink_pair()).build().unwrap();
    let (results, _) = sim
        .launch(|dev| {
            setup(&dev);
            if dev.pe() == Pe(1) {
                dev.wait_until_any(&[flag_at(0, 1), flag_at(64, 1)], FAR)
                    .map(|_| ())
            } else {
                Ok(())
            }
        })
        .unwrap();
    let err = results[1].as_ref().unwrap().as_ref().unwrap_err();
    let QueueError::Deadlock { report: waits } = err else {
        panic!("expected a deadlock, got {err}")
    };
    let what = &waits.waits[0].1;
    assert!(
        what.contains("0x0") && what.contains("0x40") && what.contains(", or "),
        "{what}"
    );
}

/// `import_segments` reaches every PE's segment from one exchange, and names the PE whose
/// key does not describe its segment, on every PE.
#[test]
fn import_segments_reaches_every_pe_and_names_a_bad_key() {
    for corrupt in [false, true] {
        let sim = Sim::builder(nvlink_pair()).build().unwrap();
        let (results, _) = sim
            .launch(move |dev| {
                let key = dev.create_segment(MemKind::Device, 4096).unwrap();
                let mut mine = b"settings".to_vec();
                hw::append_segment_key(&mut mine, &key);
                if corrupt && dev.pe() == Pe(1) {
                    *mine.last_mut().unwrap() ^= 1;
                }
                let all = dev.exchange(&mine, FAR).unwrap();
                if let Err(e) = dev.import_segments(&all, 8, &[MemKind::Device]) {
                    return e.to_string();
                }
                let q = dev.create_queue().unwrap();
                let peer = 1 - dev.pe().0;
                q.put(remote(peer, 0, 4), &[7; 4], Copier::Device).unwrap();
                q.quiet(FAR).unwrap();
                "imported".to_string()
            })
            .unwrap();
        for result in results {
            let said = result.unwrap();
            if corrupt {
                assert!(
                    said.contains("Device segment of PE 1") && said.contains("key"),
                    "{said}"
                );
            } else {
                assert_eq!(said, "imported");
            }
        }
    }
}
