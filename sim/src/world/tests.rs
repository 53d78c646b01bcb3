//! Unit tests of the world: InfiniBand writes seen by waiters and pollers at their drain
//! time, the costs of fences and releases, what a PE that posts ahead of the world reads, and
//! which operations the network transport completes at issue.

use hw::topology::{Link, LinkKind};
use hw::{
    AmoWidth, Cmp, Copier, Device, Instant, Launcher, LocalRange, MemKind, Queue, RemoteRange,
    SegmentKey,
};

use crate::costs::Timing;
use crate::{Machine, Sim, SimDevice};

const FAR: Instant = Instant(u64::MAX);

/// Two GPUs on two hosts: GPU, PCIe (100 ns), NIC, InfiniBand (600 ns), switch, and back.
fn ib_pair() -> hw::Topology {
    let link = |kind, latency_ns| Link {
        kind,
        latency_ns,
        bandwidth_bytes_per_s: 50_000_000_000,
    };
    hw::Topology::ib_pair(link(LinkKind::Pcie, 100), link(LinkKind::Ib, 600)).unwrap()
}

/// Two GPUs joined by one NVLink of 500 ns.
fn nvlink_pair() -> hw::Topology {
    hw::Topology::pair(Link {
        kind: LinkKind::NvLink,
        latency_ns: 500,
        bandwidth_bytes_per_s: 100_000_000_000,
    })
    .unwrap()
}

fn setup(dev: &SimDevice) {
    let key = dev.create_segment(MemKind::Device, 4096).unwrap();
    let keys = dev.exchange(&key.0, FAR).unwrap();
    for (peer, theirs) in (0..).zip(keys.iter()) {
        dev.import_segment(hw::Pe(peer), MemKind::Device, &SegmentKey(theirs.clone()))
            .unwrap();
    }
}

fn flag_set() -> hw::WaitSpec {
    hw::WaitSpec {
        word: LocalRange {
            kind: MemKind::Device,
            offset: 0,
            len: 8,
        },
        width: AmoWidth::W64,
        signed: false,
        cmp: Cmp::Ge,
        value: 1,
        purpose: "test",
    }
}

/// PE 0 puts a flag to PE 1 over InfiniBand; PE 1 polls `polls` times, then waits (or
/// only polls, if `wait` is false). Returns when PE 0 posted and when PE 1 saw the flag.
fn flag_over_ib(seed: u64, polls: u64, wait: bool) -> (u64, u64) {
    let sim = Sim::builder(ib_pair()).seed(seed).build().unwrap();
    let (results, report) = sim
        .launch(|dev| {
            setup(&dev);
            let q = dev.create_queue().unwrap();
            if dev.pe().0 == 0 {
                let posted = dev.now().0;
                let flag = RemoteRange {
                    pe: hw::Pe(1),
                    kind: MemKind::Device,
                    offset: 0,
                    len: 8,
                };
                q.put(flag, &1u64.to_le_bytes(), Copier::Device).unwrap();
                q.quiet(FAR).unwrap();
                posted
            } else {
                let mut seen = false;
                for _ in 0..polls {
                    seen = dev.test(flag_set()).is_some();
                    if seen {
                        break;
                    }
                }
                while !seen {
                    if wait {
                        dev.wait_until(flag_set(), FAR).unwrap();
                        break;
                    }
                    seen = dev.test(flag_set()).is_some();
                }
                dev.now().0
            }
        })
        .unwrap();
    assert!(
        report.failure.is_none(),
        "seed {seed}: {:?}",
        report.failure
    );
    let times: Vec<u64> = results.into_iter().map(|r| r.unwrap()).collect();
    (times[0], times[1])
}

/// Drains are applied when the PE's memory is next looked at, not as events, so these
/// check that a waiting PE still wakes, and a polling one still sees the write, at the
/// write's drain time: never before the write can have arrived and drained, and never
/// after it surely has (the slowest route with a straggler's jitter, the longest drain).
#[test]
fn an_infiniband_write_shows_at_its_drain_time_to_waiters_and_pollers() {
    let timing = Timing::default();
    // Two NICs and 1400 ns of links; a straggler adds up to twice the latency.
    let earliest = timing.issue_ns + 1400 + 2 * timing.nic_ns + 1;
    let latest = earliest + 2 * 1400 + 2000 + 2 * timing.poll_ns;
    let mut gaps = Vec::new();
    for seed in 0..40 {
        for wait in [true, false] {
            let (posted, seen) = flag_over_ib(seed, seed % 50, wait);
            let gap = seen - posted;
            assert!(
                (earliest..=latest).contains(&gap),
                "seed {seed}, wait {wait}: seen {gap} ns after posting"
            );
            gaps.push(gap);
        }
    }
    gaps.sort_unstable();
    gaps.dedup();
    assert!(gaps.len() > 20, "drain times vary with the seed: {gaps:?}");
}

/// A fence and a quiet each cost the PE one `fence_ns`, a put-with-signal its
/// `release_ns`, and the put-with-signal leaves after its release.
#[test]
fn fence_quiet_and_put_signal_pay_the_fence_and_the_release() {
    let mut topology = hw::topology::TopologyBuilder::new("fenced");
    let g0 = topology.node("gpu0", hw::topology::NodeKind::Gpu { host: 0 });
    let g1 = topology.node("gpu1", hw::topology::NodeKind::Gpu { host: 0 });
    topology.link(g0, g1, nvlink_pair().link(hw::topology::LinkId(0)));
    let machine = Machine {
        topology: topology.build().unwrap(),
        timing: Timing {
            fence_ns: 1000,
            release_ns: 700,
            ..Timing::default()
        },
    };
    let sim = Sim::builder(machine).build().unwrap();
    let (results, report) = sim
        .launch(|dev| {
            setup(&dev);
            let q = dev.create_queue().unwrap();
            if dev.pe().0 == 1 {
                dev.wait_until(flag_set(), FAR).unwrap();
                return dev.now().0;
            }
            let start = dev.now().0;
            q.fence().unwrap();
            q.quiet(FAR).unwrap();
            let fenced = dev.now().0 - start;
            let word = |offset| RemoteRange {
                pe: hw::Pe(1),
                kind: MemKind::Device,
                offset,
                len: 8,
            };
            q.put_signal(
                word(64),
                &[7; 8],
                word(0),
                hw::SignalOp::Set,
                1,
                Copier::Device,
            )
            .unwrap();
            let posted = dev.now().0;
            assert_eq!(posted - start, fenced + 700 + Timing::default().issue_ns);
            q.quiet(FAR).unwrap();
            fenced
        })
        .unwrap();
    assert!(report.failure.is_none(), "{:?}", report.failure);
    assert_eq!(*results[0].as_ref().unwrap(), 2000, "a fence and a quiet");
    // PE 1 woke at the signal: 500 ns of link, at most 125 of jitter (or a straggler's
    // 1000) and a poll after PE 0's two fences, its put_signal's release and issue.
    let woken = *results[1].as_ref().unwrap();
    assert!(woken >= 2700 + 20 + 500 + 100, "{woken}");
}

/// A PE may post far ahead of the world, but what it reads is what it would read had it
/// waited for the world. PE 1 puts a flag to PE 0 shortly before PE 0, having posted
/// 10 µs of operations, reads it: PE 0 must see it, unless it lands after the read (then
/// waiting for it ends when it lands, not at once).
#[test]
fn posting_ahead_does_not_hide_what_landed_before_the_posters_clock() {
    for seed in 0..40 {
        let sim = Sim::builder(nvlink_pair()).seed(seed).build().unwrap();
        let (results, report) = sim
            .launch(|dev| {
                setup(&dev);
                let q = dev.create_queue().unwrap();
                let peer = 1 - dev.pe().0;
                let to_peer = |offset| RemoteRange {
                    pe: hw::Pe(peer),
                    kind: MemKind::Device,
                    offset,
                    len: 8,
                };
                if dev.pe().0 == 1 {
                    // Polls an unset word for 9 µs, so the flag lands about when PE 0
                    // reads, within its lookahead.
                    let mut idle = flag_set();
                    idle.word.offset = 8;
                    for _ in 0..90 {
                        assert!(dev.test(idle).is_none());
                    }
                    q.put(to_peer(0), &1u64.to_le_bytes(), Copier::Device)
                        .unwrap();
                    q.quiet(FAR).unwrap();
                    return None;
                }
                for i in 0..500 {
                    q.put(to_peer(8 + 8 * (i % 100)), &[0; 8], Copier::Device)
                        .unwrap();
                }
                let read_ns = dev.now().0;
                let mut out = [0; 8];
                dev.read_local(flag_set().word, &mut out);
                let seen = u64::from_le_bytes(out) == 1;
                dev.wait_until(flag_set(), FAR).unwrap();
                let woken_ns = dev.now().0;
                q.quiet(FAR).unwrap();
                Some((seen, read_ns, woken_ns))
            })
            .unwrap();
        assert!(report.failure.is_none(), "{:?}", report.failure);
        let (seen, read_ns, woken_ns) = results[0].as_ref().unwrap().unwrap();
        let landed_ns = woken_ns - Timing::default().poll_ns;
        assert!(
            seen || landed_ns >= read_ns,
            "seed {seed}: read at {read_ns} did not see a flag woken for at {woken_ns}"
        );
    }
}

/// The word `dev`'s own device segment holds at `offset`, read with a plain load through the
/// address `load_store_addr` gives in the addressable mode.
fn load_own(dev: &SimDevice, offset: u64) -> u64 {
    let range = RemoteRange {
        pe: dev.pe(),
        kind: MemKind::Device,
        offset,
        len: 8,
    };
    let addr = dev
        .load_store_addr(range)
        .expect("an addressable own segment");
    // SAFETY: an 8-byte word of the PE's own segment, valid until the run ends.
    unsafe { std::ptr::read_volatile(addr as *const u64) }
}

/// In the addressable mode, PE 0 puts a word to PE 1 over InfiniBand; PE 1 reads it through
/// its pointer and through `read_local` until it shows, noting each time whether the write
/// was delivered and still pending, then waits for it. Returns the reads (pointer, device,
/// pending) and the word through the pointer after the wait.
fn pending_behind_the_pointer(seed: u64) -> (Vec<(u64, u64, bool)>, u64) {
    const DATA: u64 = 0x5eed_cafe;
    let sim = Sim::builder(ib_pair())
        .seed(seed)
        .addressable_memory(true)
        .build()
        .unwrap();
    let (mut results, report) = sim
        .launch(|dev| {
            setup(&dev);
            let q = dev.create_queue().unwrap();
            let word = RemoteRange {
                pe: hw::Pe(1),
                kind: MemKind::Device,
                offset: 0,
                len: 8,
            };
            if dev.pe().0 == 0 {
                q.put(word, &DATA.to_le_bytes(), Copier::Device).unwrap();
                q.quiet(FAR).unwrap();
                return (Vec::new(), 0);
            }
            let mut reads = Vec::new();
            loop {
                let mut bytes = [0; 8];
                let own = LocalRange {
                    kind: MemKind::Device,
                    offset: 0,
                    len: 8,
                };
                dev.read_local(own, &mut bytes);
                let through_device = u64::from_le_bytes(bytes);
                let pending = dev.handle.world().mem.has_pending(1);
                reads.push((load_own(&dev, 0), through_device, pending));
                if through_device == DATA {
                    break;
                }
                dev.test(flag_set());
            }
            dev.wait_until(flag_set(), FAR).unwrap();
            (reads, load_own(&dev, 0))
        })
        .unwrap();
    assert!(
        report.failure.is_none(),
        "seed {seed}: {:?}",
        report.failure
    );
    results.pop().unwrap().unwrap()
}

/// What a program sees through its pointer is its PE's visible memory: a delivered write
/// still in the pending list is not there, and a consistency step puts it there.
#[test]
fn a_pending_infiniband_write_is_not_behind_the_pointer_until_it_shows() {
    let mut pending_reads = 0;
    for seed in 0..20 {
        let (reads, after_wait) = pending_behind_the_pointer(seed);
        for &(through_pointer, through_device, pending) in &reads {
            assert_eq!(through_pointer, through_device, "seed {seed}");
            if pending {
                assert_eq!(through_pointer, 0, "seed {seed}: a pending write showed");
                pending_reads += 1;
            }
        }
        assert_eq!(
            after_wait, 0x5eed_cafe,
            "seed {seed}: the wait showed the write"
        );
    }
    assert!(
        pending_reads > 0,
        "some read must fall between delivery and visibility"
    );
}

/// With mapped loads, PE 0 reads PE 1's word through an address once PE 1 has stored it and
/// both passed an exchange; returns what PE 0 read, whether it had an address for PE 1, and
/// how far charging 4 KiB of mapped loads moved its clock.
fn mapped_read(topology: hw::Topology, mapped: bool) -> (Option<u64>, u64) {
    let sim = Sim::builder(topology)
        .addressable_memory(true)
        .mapped_loads(mapped)
        .build()
        .unwrap();
    let (mut results, report) = sim
        .launch(|dev| {
            setup(&dev);
            let word = LocalRange {
                kind: MemKind::Device,
                offset: 8,
                len: 8,
            };
            if dev.pe().0 == 1 {
                dev.write_local(word, &0x00c0_ffee_u64.to_le_bytes());
            }
            dev.exchange(&[], FAR).unwrap();
            let remote = RemoteRange {
                pe: hw::Pe(1),
                kind: MemKind::Device,
                offset: 8,
                len: 8,
            };
            let read = dev.mapped_load_addr(remote).map(|addr| {
                // SAFETY: an 8-byte word of an imported segment, valid until the run ends.
                unsafe { std::ptr::read_volatile(addr as *const u64) }
            });
            let before_ns = dev.now().0;
            dev.note_mapped_loads(hw::Pe(1), 4096);
            (read, dev.now().0 - before_ns)
        })
        .unwrap();
    assert!(report.failure.is_none(), "{:?}", report.failure);
    results.swap_remove(0).unwrap()
}

#[test]
fn mapped_loads_read_a_load_store_peer_and_charge_their_bytes() {
    let (read, charged_ns) = mapped_read(nvlink_pair(), true);
    assert_eq!(read, Some(0x00c0_ffee));
    // 4096 bytes at 100 GB/s.
    assert_eq!(charged_ns, 41);
}

#[test]
fn mapped_loads_are_off_by_default_and_for_infiniband_peers() {
    assert_eq!(mapped_read(nvlink_pair(), false).0, None);
    assert_eq!(mapped_read(ib_pair(), true).0, None);
}

/// PE 0 adds 1 to PE 1's word over InfiniBand, quiets, then gets the word back, in the
/// explored execution `choices` names. Returns what the get read.
fn add_quiet_get(choices: &str, pcie_read_flush: bool) -> u64 {
    let sim = Sim::builder(ib_pair())
        .explore(crate::Explore::new(choices.parse().unwrap()))
        .pcie_read_flush(pcie_read_flush)
        .build()
        .unwrap();
    let (mut results, report) = sim
        .launch(|dev| {
            setup(&dev);
            let q = dev.create_queue().unwrap();
            let mut read = 0;
            if dev.pe().0 == 0 {
                let word = RemoteRange {
                    pe: hw::Pe(1),
                    kind: MemKind::Device,
                    offset: 0,
                    len: 8,
                };
                let add = hw::AmoOp {
                    kind: hw::AmoKind::Add,
                    operand: 1,
                    width: AmoWidth::W64,
                };
                q.amo(word, add, false).unwrap();
                q.quiet(FAR).unwrap();
                let t = q.get(word).unwrap();
                q.wait_ticket(t, FAR).unwrap();
                read = u64::from_le_bytes(q.take_fetched(t).try_into().unwrap());
            }
            dev.exchange(&[], FAR).unwrap();
            read
        })
        .unwrap();
    assert!(report.failure.is_none(), "{:?}", report.failure);
    results.swap_remove(0).unwrap()
}

#[test]
fn an_infiniband_atomic_pends_unless_pcie_reads_flush() {
    // Choices: the add's forward delay, its update's drain, the get's forward delay (in
    // rounds). By default the update pends at PE 1 like a put, and the get reads what PE 1
    // sees: 0 if the update drains after the get arrives, 1 if before.
    assert_eq!(add_quiet_get("0.2.0", false), 0);
    assert_eq!(add_quiet_get("0.0.2", false), 1);
    // Under `pcie-read-flush` the update is visible at once, and no drain is chosen.
    assert_eq!(add_quiet_get("0.0", true), 1);
}

/// What [`completion_at_issue`] saw: per operation, whether its ticket was complete when the
/// queue call returned, and whether the put was delivered by the time the put-with-signal
/// returned.
#[derive(Debug, PartialEq, Eq, Default)]
struct AtIssue {
    put: bool,
    update: bool,
    fetch: bool,
    put_signal: bool,
    put_before_signal: bool,
}

/// PE 0 posts a put, an atomic that fetches nothing, a fetching one and a put-with-signal to
/// PE 1 over InfiniBand, with OpenSHMEM semantics and `network_transport` as given.
fn completion_at_issue(network_transport: bool) -> AtIssue {
    let sim = Sim::builder(ib_pair())
        .semantics(hw::Semantics::OpenShmem15)
        .network_transport(network_transport)
        .build()
        .unwrap();
    let word = |offset| RemoteRange {
        pe: hw::Pe(1),
        kind: MemKind::Device,
        offset,
        len: 8,
    };
    let (results, _) = sim
        .launch(|dev| {
            setup(&dev);
            let q = dev.create_queue().unwrap();
            if dev.pe().0 != 0 {
                return AtIssue::default();
            }
            let put = q.put(word(0), &1u64.to_le_bytes(), Copier::Device).unwrap();
            let put_done = q.is_complete(put);
            let add = hw::AmoOp {
                kind: hw::AmoKind::Add,
                operand: 1,
                width: AmoWidth::W64,
            };
            let update = q.amo(word(8), add, false).unwrap();
            let update_done = q.is_complete(update);
            let fetch = q.amo(word(32), add, true).unwrap();
            let fetch_done = q.is_complete(fetch);
            let signalled = q
                .put_signal(
                    word(16),
                    &1u64.to_le_bytes(),
                    word(24),
                    hw::SignalOp::Add,
                    1,
                    Copier::Device,
                )
                .unwrap();
            let signal_done = q.is_complete(signalled);
            let put_before_signal = q.is_complete(put);
            q.quiet(FAR).unwrap();
            AtIssue {
                put: put_done,
                update: update_done,
                fetch: fetch_done,
                put_signal: signal_done,
                put_before_signal,
            }
        })
        .unwrap();
    results.into_iter().next().unwrap().unwrap()
}

#[test]
fn over_the_network_transport_only_puts_and_updates_are_posted() {
    // The put and the add that fetches nothing are posted either way; the fetching add and
    // the put-with-signal complete at issue only over the network transport, and the
    // put-with-signal waits for the earlier put.
    assert_eq!(completion_at_issue(false), AtIssue::default());
    assert_eq!(
        completion_at_issue(true),
        AtIssue {
            put: false,
            update: false,
            fetch: true,
            put_signal: true,
            put_before_signal: true,
        }
    );
}
