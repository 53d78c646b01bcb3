//! The visibility rule: when a write that reached a PE's memory becomes visible to it.
//!
//! Over NVLink and PCIe a write is visible when it lands. Through a NIC (NVSHMEM semantics)
//! it waits in the target's pending list until it drains on its own at a chosen time, or a
//! consistency step of its owner shows every pending write at once (and, under
//! `pcie-read-flush`, a get or atomic through the NIC). Atomics read the newest value and
//! queue their updates behind pending writes. This file holds that rule and the wake-ups of
//! PEs waiting on the words written.

use hw::{AmoKind, AmoOp, MemKind, PathClass, WaitSpec};

use crate::events::Event;
use crate::memory::{Payload, overlaps};
use crate::trace::Record;

use super::{Blocked, Status, World};

impl World {
    /// Tells a PE waiting on memory that `[offset, offset+len)` of its `kind` segment changed.
    pub(super) fn notify_write(&mut self, pe: u32, kind: MemKind, offset: u64, len: u64) {
        if !self.is_blocked(pe) {
            return;
        }
        let state = &self.pes[pe as usize];
        if state.status != Status::Blocked
            || !matches!(state.blocked, Some(Blocked::Memory | Blocked::Threads))
        {
            return;
        }
        let satisfied = state.watching.iter().any(|spec| {
            spec.word.kind == kind
                && overlaps(spec.word.offset, spec.word.len, offset, len)
                && self.evaluate(pe, spec).is_some()
        });
        if satisfied {
            let at = self.now_ns + self.params.timing.poll_ns;
            self.wake(pe, at, Ok(()));
        }
    }

    /// Reads the waited-on word; `Some(value)` if the comparison holds.
    pub(crate) fn evaluate(&self, pe: u32, spec: &WaitSpec) -> Option<u64> {
        let w = spec.word;
        let value = self.mem.read_word(pe, w.kind, w.offset, spec.width.bytes());
        spec.cmp
            .eval(spec.width, spec.signed, value, spec.value)
            .then_some(value)
    }

    /// Applies the drains of `pe`'s pending writes due at or before `until_ns`, in drain
    /// order. Called before anything reads or writes `pe`'s memory, it gives every access
    /// the memory it would see had each drain happened at its own time: between two accesses
    /// nothing else touches that memory, and a PE waiting on a word has its drains scheduled
    /// as events (see [`World::watch`]), so it wakes when it would have.
    pub(super) fn catch_up(&mut self, pe: u32, until_ns: u64) {
        while let Some((drain_ns, write_id)) = self.mem.next_due(pe, until_ns) {
            self.drain(pe, write_id, drain_ns);
        }
    }

    /// Brings `pe`'s memory up to its own clock before its program looks at it.
    pub(crate) fn observe(&mut self, pe: u32) {
        self.catch_up(pe, self.clock_ns(pe));
    }

    /// One pending write of `pe` (and the older ones it overlaps) becomes visible; `at_ns`
    /// is its drain time.
    fn drain(&mut self, pe: u32, write_id: u64, at_ns: u64) {
        let mut shown = std::mem::take(&mut self.shown);
        self.mem.drain(pe, write_id, &mut shown);
        for &(kind, offset, len) in &shown {
            self.trace.record(Record::Drain {
                pe,
                offset,
                len,
                at_ns,
            });
            self.notify_write(pe, kind, offset, len);
        }
        shown.clear();
        self.shown = shown;
    }

    /// Schedules, as events, the drains of `pe`'s pending writes to the word it now waits
    /// on, so that it wakes at the time the write becomes visible.
    pub(super) fn watch(&mut self, pe: u32, spec: &WaitSpec) {
        let w = spec.word;
        for (drain_ns, write_id) in self.mem.pending_over(pe, w.kind, w.offset, w.len) {
            let at_ns = drain_ns.max(self.now_ns);
            self.events.push(at_ns, Event::Drain { pe, write_id });
        }
    }

    /// Whether `pe` waits on a word of its `kind` segment in `[offset, offset + len)`.
    fn waits_on(&self, pe: u32, kind: MemKind, offset: u64, len: u64) -> bool {
        if !self.is_blocked(pe) {
            return false;
        }
        let state = &self.pes[pe as usize];
        matches!(state.blocked, Some(Blocked::Memory | Blocked::Threads))
            && state.watching.iter().any(|spec| {
                let w = spec.word;
                w.kind == kind && overlaps(w.offset, w.len, offset, len)
            })
    }

    /// The consistency step: every delivered write to `pe` becomes visible to it.
    pub(crate) fn flush(&mut self, pe: u32) {
        self.catch_up(pe, self.now_ns);
        let mut shown = std::mem::take(&mut self.shown);
        self.mem.flush(pe, &mut shown);
        for &(kind, offset, len) in &shown {
            self.trace.record(Record::Flush { pe, offset, len });
            self.notify_write(pe, kind, offset, len);
        }
        shown.clear();
        self.shown = shown;
    }

    /// A write arriving at its target over `class`: through a NIC it waits in the pending
    /// list (NVSHMEM semantics); otherwise it is visible at once, or, under `ib-coherent`,
    /// queues behind the pending writes to its bytes.
    pub(super) fn land(
        &mut self,
        class: PathClass,
        pe: u32,
        kind: MemKind,
        offset: u64,
        data: Payload,
    ) {
        // Also keeps the pending list short: due drains go while it is in cache.
        self.catch_up(pe, self.now_ns);
        let behind = self.params.ib_coherent && self.mem.pending_at(pe, kind, offset, data.len());
        if (class == PathClass::Rdma && self.ib_pending) || behind {
            self.pend(pe, kind, offset, data);
        } else {
            let len = data.len();
            self.mem.write_payload(pe, kind, offset, &data);
            self.notify_write(pe, kind, offset, len);
        }
    }

    /// Puts a write in `pe`'s pending list with a chosen drain time, and schedules that drain
    /// as an event if the PE waits on those bytes.
    fn pend(&mut self, pe: u32, kind: MemKind, offset: u64, data: Payload) {
        let len = data.len();
        let drain_ns = self.now_ns + 1 + self.drain_delay_ns();
        let write_id = self.mem.push_pending(pe, kind, offset, data, drain_ns);
        if self.waits_on(pe, kind, offset, len) {
            self.events.push(drain_ns, Event::Drain { pe, write_id });
        }
    }

    /// An atomic at its target: it reads the newest value of the word, pending writes
    /// included, so atomics stay atomic whatever is visible (R6). Its update pends like a put
    /// through a NIC (R8), and queues behind the word's pending writes on any path, so that
    /// no older write drains over it. Under `pcie-read-flush` an atomic through a NIC first
    /// flushes the target, and its update is visible at once.
    pub(super) fn atomic(
        &mut self,
        class: PathClass,
        pe: u32,
        kind: MemKind,
        offset: u64,
        op: AmoOp,
    ) -> u64 {
        let nic = class == PathClass::Rdma;
        if nic && self.params.pcie_read_flush {
            self.flush(pe);
        } else {
            self.catch_up(pe, self.now_ns);
        }
        let len = op.width.bytes();
        let mut bytes = [0u8; 8];
        self.mem
            .read_newest(pe, kind, offset, &mut bytes[..len as usize]);
        let old = u64::from_le_bytes(bytes);
        let new = op.apply(old);
        // A compare-and-swap that fails writes nothing.
        let failed_swap = matches!(op.kind, AmoKind::CompareSwap { compare }
            if op.width.truncate(old) != op.width.truncate(compare));
        if op.writes() && !failed_swap {
            self.update(nic, pe, kind, offset, &new.to_le_bytes()[..len as usize]);
        }
        old
    }

    /// The update of an atomic (or of a signal `ADD`) at `pe`: pending through a NIC unless
    /// `pcie-read-flush`, and behind the pending writes to its bytes on any path.
    pub(super) fn update(&mut self, nic: bool, pe: u32, kind: MemKind, offset: u64, data: &[u8]) {
        let len = data.len() as u64;
        let pends = nic && self.ib_pending && !self.params.pcie_read_flush;
        if pends || self.mem.pending_at(pe, kind, offset, len) {
            self.pend(pe, kind, offset, Payload::new(data));
        } else {
            self.mem.write(pe, kind, offset, data);
            self.notify_write(pe, kind, offset, len);
        }
    }

    /// At the end of the run, the writes still pending drain, at their times.
    pub(super) fn drain_all(&mut self) {
        for pe in 0..self.n_pes {
            while let Some((drain_ns, write_id)) = self.mem.next_due(pe, u64::MAX) {
                self.now_ns = self.now_ns.max(drain_ns);
                self.drain(pe, write_id, drain_ns);
            }
        }
    }
}
