//! The rules on hand-built operation sequences, one PE's step at a time.

use hw::{LocalRange, MemKind, Pe, RemoteRange, Semantics, Ticket};

use super::{Detector, Part, QueueOp};
use crate::check::report::AccessKind;

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

/// A detector of `n` PEs, each with one queue (index 0).
fn detector(n: u32, semantics: Semantics) -> Detector {
    let mut d = Detector::new(n);
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
    assert_eq!(message_passing(|d| d.quiet(0, 0)).take_races(), []);
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
    d.quiet(0, 0);
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
