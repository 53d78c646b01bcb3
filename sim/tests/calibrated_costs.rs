//! The costs a calibration gives a topology (`Timing`): movers' copy curves, kernel launches,
//! local accesses, the start-up and the mapping of memory. Each is checked where a PE pays
//! it, on a pair of GPUs whose link is fast enough not to pace anything.

// This file uses the fixtures' deadline and set-up only.
#[allow(dead_code)]
mod common;

use common::{FAR, local, remote, setup};
use hw::topology::{DEFAULT_LOCAL_BYTES_PER_S, Link, LinkKind};
use hw::{Copier, Device, Launcher, MemKind, Queue, SignalOp};
use sim::costs::{CopyCurve, CopyTimes, Timing};
use sim::{Machine, Sim, SimDevice};

/// Two GPUs on a 10 TB/s, 100 ns link with `timing`.
fn pair(timing: Timing) -> Machine {
    pair_copying_locally_at(timing, DEFAULT_LOCAL_BYTES_PER_S)
}

/// [`pair`], each GPU copying within its own memory at `local_bytes_per_s`.
fn pair_copying_locally_at(timing: Timing, local_bytes_per_s: u64) -> Machine {
    let mut b = hw::topology::TopologyBuilder::new("calibrated");
    b.local_bytes_per_s(local_bytes_per_s);
    let g0 = b.node("gpu0", hw::topology::NodeKind::Gpu { host: 0 });
    let g1 = b.node("gpu1", hw::topology::NodeKind::Gpu { host: 0 });
    b.link(
        g0,
        g1,
        Link {
            kind: LinkKind::NvLink,
            latency_ns: 100,
            bandwidth_bytes_per_s: 10_000_000_000_000,
        },
    );
    Machine {
        topology: b.build().unwrap(),
        timing,
    }
}

/// Runs `pe0` on PE 0 of `machine` (PE 1 only sets up) and returns what it returned.
fn on_pe0<R: Send>(machine: Machine, pe0: impl Fn(&SimDevice) -> R + Sync) -> R {
    let sim = Sim::builder(machine).build().unwrap();
    let (results, report) = sim
        .launch(|dev| {
            setup(&dev);
            let out = (dev.pe().0 == 0).then(|| pe0(&dev));
            // Both PEs stay until PE 0 is done, so PE 1's segment outlives its puts.
            dev.exchange(&[], FAR).unwrap();
            out
        })
        .unwrap();
    assert!(report.failure.is_none(), "{:?}", report.failure);
    results.into_iter().next().unwrap().unwrap().unwrap()
}

/// Movers of 1000 B per µs, each with a start of its own so they tell apart.
fn movers() -> CopyTimes {
    let rate = |start: u64| CopyCurve::new(&[(1, start), (1001, start + 1000)]).unwrap();
    CopyTimes {
        device: rate(10),
        block: rate(20),
        warp: rate(30),
        thread: rate(40),
        engine: rate(50),
    }
}

/// The time from posting `puts` (each a mover and a byte count) back to back on one queue
/// to the end of the quiet after them, less the quiet's own round trip.
fn paced_ns(puts: &[(Option<Copier>, u64)]) -> u64 {
    let timing = Timing {
        copy: movers(),
        ..Timing::default()
    };
    let round_trip = on_pe0(pair(timing), |dev| {
        let q = dev.create_queue().unwrap();
        let start = dev.now().0;
        q.put(remote(1, 0, 1), &[1], Copier::Device).unwrap();
        q.quiet(FAR).unwrap();
        dev.now().0 - start
    });
    on_pe0(pair(timing), |dev| {
        let q = dev.create_queue().unwrap();
        let start = dev.now().0;
        for &(copier, bytes) in puts {
            let data = vec![7; bytes as usize];
            match copier {
                Some(copier) => q.put(remote(1, 0, bytes), &data, copier).unwrap(),
                None => {
                    let src = local(2048, bytes);
                    q.put_from_local(remote(1, 0, bytes), src).unwrap()
                }
            };
        }
        q.quiet(FAR).unwrap();
        dev.now().0 - start - round_trip
    })
}

#[test]
fn each_mover_paces_its_puts_by_its_curve() {
    // Within a few ns: the quiet's round trip draws its own jitter.
    let near = |found: u64, expected: u64| found.abs_diff(expected) <= 30;
    for (copier, start) in [
        (Some(Copier::Device), 10),
        (Some(Copier::Block(0)), 20),
        (Some(Copier::Warp(0)), 30),
        (Some(Copier::Thread(0)), 40),
        (None, 50),
    ] {
        let ns = paced_ns(&[(copier, 1001)]);
        assert!(near(ns, start + 1000), "{copier:?}: {ns} ns");
    }
}

#[test]
fn one_movers_puts_follow_one_another_and_two_movers_copy_side_by_side() {
    let one = paced_ns(&[(Some(Copier::Warp(0)), 1001), (Some(Copier::Warp(0)), 1001)]);
    assert!(one.abs_diff(2 * 1030) <= 30, "one warp: {one} ns");
    let two = paced_ns(&[(Some(Copier::Warp(0)), 1001), (Some(Copier::Warp(1)), 1001)]);
    assert!(two.abs_diff(1030) <= 30, "two warps: {two} ns");
}

#[test]
fn a_put_with_signal_lands_its_signal_after_its_mover_copied_the_data() {
    let timing = Timing {
        copy: movers(),
        ..Timing::default()
    };
    let sim = Sim::builder(pair(timing)).build().unwrap();
    let (results, _) = sim
        .launch(|dev| {
            setup(&dev);
            let q = dev.create_queue().unwrap();
            let signal = hw::WaitSpec {
                word: local(4088, 8),
                width: hw::AmoWidth::W64,
                signed: false,
                cmp: hw::Cmp::Eq,
                value: 1,
                purpose: "test",
            };
            if dev.pe().0 == 0 {
                let start = dev.now().0;
                q.put_signal(
                    remote(1, 0, 2001),
                    &[3; 2001],
                    remote(1, 4088, 8),
                    SignalOp::Set,
                    1,
                    Copier::Thread(5),
                )
                .unwrap();
                start
            } else {
                dev.wait_until(signal, FAR).unwrap();
                dev.now().0
            }
        })
        .unwrap();
    let times: Vec<u64> = results.into_iter().map(Result::unwrap).collect();
    // The thread copies 2001 B in 40 + 2000 ns; the signal then flies 100 ns.
    assert!(times[1] - times[0] >= 2040 + 100, "{times:?}");
}

#[test]
fn free_curves_leave_puts_to_the_links() {
    let timing = Timing::default();
    let ns = on_pe0(pair(timing), |dev| {
        let q = dev.create_queue().unwrap();
        let start = dev.now().0;
        q.put(remote(1, 0, 1000), &[1; 1000], Copier::Thread(0))
            .unwrap();
        q.quiet(FAR).unwrap();
        dev.now().0 - start
    });
    // Issue, two flights with their jitter, and a 0.1 ns serialisation.
    assert!(ns < 400, "{ns} ns");
}

#[test]
fn launches_local_accesses_startup_and_mapping_cost_what_the_timing_says() {
    let timing = Timing {
        launch_ns: 3000,
        local_access_ns: 500,
        startup_ns: 1_000_000,
        map_bytes_per_s: 1_000_000_000,
        ..Timing::default()
    };
    let sim = Sim::builder(pair_copying_locally_at(timing, u64::MAX))
        .build()
        .unwrap();
    let (results, report) = sim
        .launch(|dev| {
            let started = dev.now().0;
            // 4 KiB backed at 1 GB/s: 4096 ns.
            let before = dev.now().0;
            let key = dev
                .create_growable_segment(MemKind::Device, 1 << 20, 4096)
                .unwrap();
            let created = dev.now().0 - before;
            let before = dev.now().0;
            dev.grow_segment(MemKind::Device, 8192, FAR).unwrap();
            dev.grow_segment(MemKind::Device, 8192, FAR).unwrap();
            let grown = dev.now().0 - before;
            let too_far = dev.grow_segment(MemKind::Device, 2 << 20, FAR);
            let before = dev.now().0;
            dev.note_kernel_launch();
            let launched = dev.now().0 - before;
            let before = dev.now().0;
            let mut word = [0; 8];
            let range = local(0, 8);
            dev.read_local(range, &mut word);
            dev.write_local(range, &word);
            let accessed = dev.now().0 - before;
            drop(key);
            (
                started,
                created,
                grown,
                too_far.is_err(),
                launched,
                accessed,
            )
        })
        .unwrap();
    assert!(report.failure.is_none(), "{:?}", report.failure);
    for result in results {
        let (started, created, grown, refused, launched, accessed) = result.unwrap();
        assert_eq!(started, 1_000_000, "every PE starts after the start-up");
        assert_eq!(created, 4096, "only the backed part is mapped at creation");
        assert_eq!(grown, 4096, "growing maps only what is new");
        assert!(refused, "growing past the segment's length is refused");
        assert_eq!(launched, 3000);
        // Two accesses, and the store's 8 bytes at local bandwidth, rounded up to 1 ns.
        assert_eq!(accessed, 2 * 500 + 1);
    }
}

#[test]
fn a_streams_serialisation_waits_for_completion_without_the_fence_of_a_quiet() {
    let timing = Timing {
        fence_ns: 5000,
        ..Timing::default()
    };
    let (serialised, quieted) = on_pe0(pair(timing), |dev| {
        let q = dev.create_queue().unwrap();
        let time = |wait: &dyn Fn()| {
            q.put(remote(1, 0, 8), &[1; 8], Copier::Device).unwrap();
            let start = dev.now().0;
            wait();
            dev.now().0 - start
        };
        let serialised = time(&|| q.serialize(FAR).unwrap());
        q.quiet(FAR).unwrap();
        let quieted = time(&|| q.quiet(FAR).unwrap());
        (serialised, quieted)
    });
    assert!(serialised >= 100, "it waits for the put: {serialised} ns");
    assert!(serialised < 1000, "and pays no fence: {serialised} ns");
    assert!(quieted >= 5000, "a quiet pays the fence: {quieted} ns");
}
