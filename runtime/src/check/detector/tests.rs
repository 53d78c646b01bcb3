//! The rules on hand-built operation sequences, one PE's step at a time.

use hw::topology::{ClusterLinks, Link, LinkKind, NV18};
use hw::{LocalRange, MemKind, Pe, RemoteRange, Semantics, Ticket, Topology};

use super::{Detector, Part, QueueOp};
use crate::check::report::{AccessKind, RaceCause};

const DATA: u64 = 0x100;
const FLAG: u64 = 0x200;

fn remote(pe: u32, offset: u64, len: u64) -> RemoteRange {
    RemoteRange {
        pe: Pe(pe),
        kind: MemKind::Device,
        offset,
        len,
    }
}

fn local(offset: u64, len: u64) -> LocalRange {
    LocalRange {
        kind: MemKind::Device,
        offset,
        len,
    }
}

/// A detector of `n` PEs of one host, each with one queue (index 0).
fn detector(n: u32, semantics: Semantics) -> Detector {
    let topology = Topology::single_host(n).expect("a valid host");
    detector_on(&topology, semantics)
}

/// A detector of the PEs of `topology`, each with one queue (index 0).
fn detector_on(topology: &Topology, semantics: Semantics) -> Detector {
    let n = topology.n_gpus();
    let mut d = Detector::new(n, topology);
    d.set_semantics(semantics);
    for pe in 0..n {
        assert_eq!(d.add_queue(pe), 0);
    }
    d
}

fn issue(d: &mut Detector, pe: u32, ticket: u64, part: Part, fenceable: bool) {
    let target = part.place.0;
    let fetches = (!part.kind.writes()).then_some(part);
    d.issue(
        pe,
        QueueOp {
            queue: 0,
            ticket: Ticket(ticket),
            target,
            fenceable,
            parts: &[part],
            fetches,
        },
    );
}

fn put(d: &mut Detector, pe: u32, ticket: u64, dst: RemoteRange) {
    issue(d, pe, ticket, Part::remote(AccessKind::Put, dst), true);
}

/// PE 0 puts data and a flag to PE 1, with `between` in between; PE 1 waits for the flag and
/// reads the data.
fn message_passing(between: impl FnOnce(&mut Detector)) -> Detector {
    let mut d = detector(2, Semantics::Nvshmem);
    put(&mut d, 0, 1, remote(1, DATA, 64));
    between(&mut d);
    put(&mut d, 0, 2, remote(1, FLAG, 8));
    d.poll_satisfied(1, local(FLAG, 8));
    d.local(1, AccessKind::LocalRead, local(DATA, 64));
    d
}

#[test]
fn message_passing_without_a_fence_races_on_the_data() {
    let races = message_passing(|_| {}).take_races();
    assert_eq!(races.len(), 1, "{races:?}");
    let race = &races[0];
    assert_eq!((race.first.pe, race.first.kind), (0, AccessKind::Put));
    assert_eq!(
        (race.second.pe, race.second.kind),
        (1, AccessKind::LocalRead)
    );
    assert_eq!((race.first.target, race.conflict_offset), (1, DATA));
}

#[test]
fn a_fence_or_quiet_between_data_and_flag_orders_the_data() {
    assert_eq!(message_passing(|d| d.fence(0, 0)).take_races(), []);
    assert_eq!(message_passing(|d| d.quiet(0, 0, true)).take_races(), []);
}

#[test]
fn the_flag_itself_is_ordered_by_observing_it() {
    let mut d = message_passing(|d| d.fence(0, 0));
    d.local(1, AccessKind::LocalWrite, local(FLAG, 8));
    assert_eq!(d.take_races(), []);
}

#[test]
fn unsynchronised_puts_from_two_pes_race_and_atomics_do_not() {
    let mut d = detector(3, Semantics::Nvshmem);
    put(&mut d, 0, 1, remote(2, DATA, 8));
    put(&mut d, 1, 1, remote(2, DATA + 4, 8));
    let races = d.take_races();
    assert_eq!(races.len(), 1);
    assert_eq!(races[0].conflict_offset, DATA + 4);
    let amo = |d: &mut Detector, pe, ticket| {
        let part = Part::remote(AccessKind::AtomicUpdate, remote(2, FLAG, 8));
        issue(d, pe, ticket, part, true);
    };
    amo(&mut d, 0, 2);
    amo(&mut d, 1, 2);
    assert_eq!(d.take_races(), []);
}

#[test]
fn the_same_race_is_reported_once() {
    let mut d = detector(2, Semantics::Nvshmem);
    for ticket in 0..3 {
        put(&mut d, 0, ticket, remote(1, DATA, 8));
        d.local(1, AccessKind::LocalRead, local(DATA, 8));
    }
    // Put before read, and from the second round on read before put: two sites, once each.
    let kinds: Vec<_> = d
        .take_races()
        .iter()
        .map(|r| (r.first.kind, r.second.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            (AccessKind::Put, AccessKind::LocalRead),
            (AccessKind::LocalRead, AccessKind::Put)
        ]
    );
}

#[test]
fn an_exchange_orders_what_each_pe_completed_before_it() {
    let mut d = detector(2, Semantics::Nvshmem);
    put(&mut d, 0, 1, remote(1, DATA, 8));
    d.quiet(0, 0, true);
    let rounds = [d.enter_exchange(0), d.enter_exchange(1)];
    d.leave_exchange(0, rounds[0]);
    d.leave_exchange(1, rounds[1]);
    d.local(1, AccessKind::LocalRead, local(DATA, 8));
    assert_eq!(d.take_races(), []);
}

#[test]
fn an_exchange_does_not_complete_a_put_in_flight() {
    let mut d = detector(2, Semantics::Nvshmem);
    put(&mut d, 0, 1, remote(1, DATA, 8));
    let rounds = [d.enter_exchange(0), d.enter_exchange(1)];
    d.leave_exchange(0, rounds[0]);
    d.leave_exchange(1, rounds[1]);
    d.local(1, AccessKind::LocalRead, local(DATA, 8));
    assert_eq!(d.take_races().len(), 1);
}

/// PE 0 stores data and then sets a flag in its own memory; PE 1 fetches the flag, then gets
/// the data, with `between` in between.
fn get_reader(semantics: Semantics, between: impl FnOnce(&mut Detector)) -> Detector {
    let mut d = detector(2, semantics);
    d.local(0, AccessKind::LocalWrite, local(DATA, 8));
    let flag = Part::remote(AccessKind::AtomicUpdate, remote(0, FLAG, 8));
    issue(&mut d, 0, 1, flag, true);
    let fetch = Part::remote(AccessKind::AtomicFetch, remote(0, FLAG, 8));
    issue(&mut d, 1, 1, fetch, false);
    d.complete(1, 0, Ticket(1));
    between(&mut d);
    issue(
        &mut d,
        1,
        2,
        Part::remote(AccessKind::Get, remote(0, DATA, 8)),
        false,
    );
    d
}

#[test]
fn nvshmem_fetches_order_nothing_until_a_fence() {
    assert_eq!(get_reader(Semantics::Nvshmem, |_| {}).take_races().len(), 1);
    assert_eq!(
        get_reader(Semantics::Nvshmem, |d| d.fence(1, 0)).take_races(),
        []
    );
    assert_eq!(get_reader(Semantics::OpenShmem15, |_| {}).take_races(), []);
}

/// PE 0 alone on host 0; PEs 1 and 2 on host 1, joined by NVLink; PE 3 alone on host 2.
/// Pairs of different hosts are joined through InfiniBand.
fn mixed() -> Topology {
    let link = |kind| Link {
        kind,
        latency_ns: 1000,
        bandwidth_bytes_per_s: 25_000_000_000,
    };
    let links = ClusterLinks {
        nvlink: NV18,
        pcie: link(LinkKind::Pcie),
        ib: link(LinkKind::Ib),
    };
    Topology::hosts_with_nics("mixed", &[0, 1, 1, 2], links).expect("a valid machine")
}

/// PE 0 puts data to PE 1 and quiets; PE 1 and PE 2 learn of it by a flag PE 0 sets with an
/// atomic on each (every PE waits for its flag, a consistency step); with `owner` run after
/// that, PE 2 gets the data from PE 1.
fn third_party_read(topology: &Topology, owner: impl FnOnce(&mut Detector)) -> Detector {
    let mut d = detector_on(topology, Semantics::Nvshmem);
    put(&mut d, 0, 1, remote(1, DATA, 8));
    d.quiet(0, 0, true);
    for (ticket, pe) in [(2, 1), (3, 2)] {
        let flag = Part::remote(AccessKind::AtomicUpdate, remote(pe, FLAG, 8));
        issue(&mut d, 0, ticket, flag, true);
    }
    d.poll_satisfied(1, local(FLAG, 8));
    owner(&mut d);
    d.poll_satisfied(2, local(FLAG, 8));
    let get = Part::remote(AccessKind::Get, remote(1, DATA, 8));
    issue(&mut d, 2, 1, get, false);
    d
}

#[test]
fn a_third_pe_reading_an_infiniband_write_over_nvlink_needs_the_owners_step() {
    let races = third_party_read(&mixed(), |_| {}).take_races();
    assert_eq!(races.len(), 1, "{races:?}");
    assert_eq!(
        races[0].cause,
        RaceCause::InfinibandVisibility { target: 1 }
    );
    assert_eq!((races[0].first.pe, races[0].second.pe), (0, 2));
    assert!(races[0].to_string().contains("(R8)"), "{}", races[0]);
    // NVLink only: the writer's quiet made the put visible to everyone.
    let nvlink = Topology::single_host(3).expect("a valid host");
    assert_eq!(third_party_read(&nvlink, |_| {}).take_races(), []);
}

#[test]
fn the_owners_step_known_to_the_reader_makes_the_write_visible() {
    // PE 1 has run its step (its wait) and then tells PE 2 with an atomic on PE 2's flag,
    // which PE 2's wait observes.
    let owner = |d: &mut Detector| {
        let flag = Part::remote(AccessKind::AtomicUpdate, remote(2, FLAG, 8));
        issue(d, 1, 1, flag, true);
    };
    assert_eq!(third_party_read(&mixed(), owner).take_races(), []);
}

#[test]
fn the_target_sees_an_infiniband_write_after_its_own_step_only() {
    let mut d = detector_on(&mixed(), Semantics::Nvshmem);
    put(&mut d, 0, 1, remote(1, DATA, 8));
    d.quiet(0, 0, true);
    // PE 1 learns of the put through an exchange, which is no consistency step.
    let rounds = [0, 1, 2, 3].map(|pe| d.enter_exchange(pe));
    for (pe, round) in (0..).zip(rounds) {
        d.leave_exchange(pe, round);
    }
    d.local(1, AccessKind::LocalRead, local(DATA, 8));
    let causes: Vec<_> = d.take_races().into_iter().map(|r| r.cause).collect();
    assert_eq!(causes, [RaceCause::InfinibandVisibility { target: 1 }]);
    d.quiet(1, 0, true);
    d.local(1, AccessKind::LocalWrite, local(DATA, 8));
    assert_eq!(d.take_races(), []);
}

#[test]
fn a_read_through_the_nic_needs_no_step_and_openshmem_none_at_all() {
    for (semantics, reader) in [(Semantics::Nvshmem, 3), (Semantics::OpenShmem15, 2)] {
        let mut d = detector_on(&mixed(), semantics);
        put(&mut d, 0, 1, remote(1, DATA, 8));
        d.quiet(0, 0, true);
        let flag = Part::remote(AccessKind::AtomicUpdate, remote(reader, FLAG, 8));
        issue(&mut d, 0, 2, flag, true);
        d.poll_satisfied(reader, local(FLAG, 8));
        let get = Part::remote(AccessKind::Get, remote(1, DATA, 8));
        issue(&mut d, reader, 1, get, false);
        assert_eq!(d.take_races(), [], "{semantics:?}, reader PE {reader}");
    }
}
