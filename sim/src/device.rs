//! The simulated device: one PE's memory, waits, clock and bootstrap.

use std::cell::{Cell, RefCell, RefMut};
use std::rc::Rc;

use hw::{
    Caps, Device, DeviceError, Exchanged, Instant, LocalRange, MemKind, PathClass, Pe, QueueError,
    RemoteRange, SegmentKey, Topology, WaitSpec,
};

use crate::costs::Timing;
use crate::handle::PeHandle;
use crate::memory::CreateError;
use crate::queue::SimQueue;
use crate::world::World;
use crate::{Fault, SimBackend};

/// One simulated PE's endpoint.
#[derive(Debug)]
pub struct SimDevice {
    /// The bridge to the world; the crate's tests look through it at the world's state.
    pub(crate) handle: PeHandle,
    caps: Caps,
    topology: Rc<hw::Topology>,
    /// The machine's costs, the world's own (a copy: it never changes during a run).
    timing: Timing,
    n_pes: u32,
    /// How much of each segment (host, device) has memory behind it, for the time that
    /// backing more costs (`Timing::map_bytes_per_s`).
    backed_bytes: Cell<[u64; MemKind::COUNT]>,
    /// The class and bandwidth of the route to every PE, once mapped loads need them.
    paths: RefCell<Vec<(PathClass, u64)>>,
}

impl SimDevice {
    pub(crate) fn new(handle: PeHandle) -> SimDevice {
        let (caps, topology, timing, n_pes) = {
            let w = handle.world();
            (
                w.caps.clone(),
                Rc::clone(&w.topology),
                w.params.timing,
                w.n_pes,
            )
        };
        SimDevice {
            handle,
            caps,
            topology,
            timing,
            n_pes,
            backed_bytes: Cell::new([0; MemKind::COUNT]),
            paths: RefCell::new(Vec::new()),
        }
    }

    /// Charges this PE the time of backing `kind`'s segment up to `backed_bytes`, and records
    /// that much as backed; nothing if it is backed already.
    fn back(&self, kind: MemKind, backed_bytes: u64) {
        let mut backed = self.backed_bytes.get();
        let slot = &mut backed[kind.index()];
        let more = backed_bytes.saturating_sub(*slot);
        *slot = (*slot).max(backed_bytes);
        self.backed_bytes.set(backed);
        let bytes_per_s = self.timing.map_bytes_per_s;
        if more > 0 && bytes_per_s > 0 {
            let ns = crate::network::serialise_ns(more, bytes_per_s);
            self.handle.world().advance_clock(self.handle.pe, ns);
        }
    }

    /// The address of `range` in this process if its segment is a region, after checking
    /// that the segment was imported and holds the range (a contract violation otherwise,
    /// which panics as hardware would fault).
    fn checked_addr(&self, call: &str, range: RemoteRange) -> Option<u64> {
        let w = self.handle.world();
        w.assert_imported(self.handle.pe, &range);
        let capacity_bytes = w.mem.capacity_bytes(range.pe.0, range.kind);
        assert!(
            capacity_bytes.is_some_and(|cap| range
                .offset
                .checked_add(range.len)
                .is_some_and(|end| end <= cap)),
            "{call}: {range:?} outside the segment (contract violation)"
        );
        w.mem.addr(range.pe.0, range.kind, range.offset)
    }

    /// The class and bandwidth of the route from this PE to `pe`, the routes of this PE
    /// worked out at the first call.
    fn path_to(&self, pe: Pe) -> (PathClass, u64) {
        let mut paths = self.paths.borrow_mut();
        if paths.is_empty() {
            let routes = self.topology.routes_from(Pe(self.handle.pe));
            *paths = (0..self.n_pes)
                .map(|peer| {
                    let path = routes.path_to(&self.topology, Pe(peer));
                    (path.class, path.bandwidth_bytes_per_s)
                })
                .collect();
        }
        paths[pe.0 as usize]
    }

    /// Starts a plain access of this PE's own memory: charges it (`Timing::local_access_ns`),
    /// lets an exploration stall it, waits for the world to reach the PE's clock and brings
    /// the PE's memory up to that clock. Returns the world, for the access itself.
    fn begin_local_access(&self) -> RefMut<'_, World> {
        let ns = self.timing.local_access_ns;
        // Every local read and write comes here; most topologies make it free.
        if ns > 0 {
            self.handle.world().advance_clock(self.handle.pe, ns);
        }
        self.handle.world().stall_local_access(self.handle.pe);
        // Peers may read or write this memory: their accesses before this PE's clock happen
        // first.
        self.handle.pace();
        let mut w = self.handle.world();
        w.observe(self.handle.pe);
        w
    }

    /// The key of `pe`'s `kind` segment: the PE, the kind and the capacity, little-endian.
    fn key_bytes(pe: u32, kind: MemKind, capacity_bytes: u64) -> [u8; 13] {
        let mut key = [0; 13];
        key[..4].copy_from_slice(&pe.to_le_bytes());
        key[4] = kind as u8;
        key[5..].copy_from_slice(&capacity_bytes.to_le_bytes());
        key
    }

    /// The capacity a key of `pe`'s `kind` segment names, if it is such a key.
    fn capacity_in(key: &[u8], pe: u32, kind: MemKind) -> Option<u64> {
        let key: &[u8; 13] = key.try_into().ok()?;
        let capacity = u64::from_le_bytes(key[5..].try_into().ok()?);
        (*key == Self::key_bytes(pe, kind, capacity)).then_some(capacity)
    }

    fn key(pe: u32, kind: MemKind, capacity_bytes: u64) -> SegmentKey {
        SegmentKey(Self::key_bytes(pe, kind, capacity_bytes).to_vec())
    }

    /// Whether `key` describes `peer`'s segment of `kind`.
    fn check_key(w: &mut World, peer: Pe, kind: MemKind, key: &[u8]) -> Result<(), DeviceError> {
        let import_error = |reason: &str| DeviceError::Import {
            peer,
            kind,
            reason: reason.into(),
        };
        if peer.0 >= w.n_pes {
            return Err(import_error("no such PE"));
        }
        if w.mem.capacity_bytes(peer.0, kind).is_none()
            && !w.owns(peer.0)
            && let Some(capacity) = Self::capacity_in(key, peer.0, kind)
        {
            // The peer is another partition's, in a parallel run: it created the segment
            // there, and its key is how this partition learns of it. Its memory here stays
            // empty (nothing lands on it here) and only checks the ranges PEs here ask for.
            let _ = w.mem.create(peer.0, kind, capacity);
        }
        let capacity = w
            .mem
            .capacity_bytes(peer.0, kind)
            .ok_or_else(|| import_error("the peer has not created that segment"))?;
        // Compared without building a key: this runs for every PE's every segment.
        if key != Self::key_bytes(peer.0, kind, capacity) {
            return Err(import_error("the key does not describe that segment"));
        }
        Ok(())
    }
}

impl Device for SimDevice {
    type B = SimBackend;

    fn pe(&self) -> Pe {
        Pe(self.handle.pe)
    }

    fn n_pes(&self) -> u32 {
        self.n_pes
    }

    fn caps(&self) -> &Caps {
        &self.caps
    }

    fn topology(&self) -> &Topology {
        &self.topology
    }

    fn now(&self) -> Instant {
        Instant(self.handle.world().clock_ns(self.handle.pe))
    }

    /// Costs the time of backing all of it (`Timing::map_bytes_per_s`).
    fn create_segment(&self, kind: MemKind, len_bytes: u64) -> Result<SegmentKey, DeviceError> {
        self.create_growable_segment(kind, len_bytes, len_bytes)
    }

    /// The whole segment exists at once (sparse memory is materialised page by page on first
    /// write, and an addressable segment reserves its whole length, so it grows in place);
    /// only the time of backing `backed_bytes` is charged now.
    fn create_growable_segment(
        &self,
        kind: MemKind,
        len_bytes: u64,
        backed_bytes: u64,
    ) -> Result<SegmentKey, DeviceError> {
        let limit_bytes = self.caps.max_segment_bytes;
        if len_bytes > limit_bytes {
            return Err(DeviceError::OutOfMemory {
                kind,
                requested_bytes: len_bytes,
                limit_bytes,
            });
        }
        let pe = self.handle.pe;
        let created = self.handle.world().mem.create(pe, kind, len_bytes);
        created.map_err(|e| match e {
            CreateError::Exists => {
                DeviceError::Lost(format!("PE {pe} already has a {kind:?} segment"))
            }
            CreateError::StaticInPlace => DeviceError::Lost(
                "the static data is the program's: share it with share_static_data, not \
                 create_segment"
                    .to_string(),
            ),
            CreateError::Map(e) => DeviceError::Lost(format!(
                "cannot reserve {len_bytes} bytes of address space for PE {pe}'s {kind:?} \
                 segment (mmap: {e}); give the run smaller heaps or fewer PEs"
            )),
        })?;
        self.back(kind, backed_bytes.min(len_bytes));
        Ok(Self::key(pe, kind, len_bytes))
    }

    /// Charges the time of backing the new bytes; refuses past the segment's length.
    fn grow_segment(
        &self,
        kind: MemKind,
        backed_bytes: u64,
        _deadline: Instant,
    ) -> Result<(), DeviceError> {
        let pe = self.handle.pe;
        let capacity_bytes = self.handle.world().mem.capacity_bytes(pe, kind);
        let Some(limit_bytes) = capacity_bytes else {
            return Err(DeviceError::Lost(format!(
                "PE {pe} has no {kind:?} segment to grow"
            )));
        };
        if backed_bytes > limit_bytes {
            return Err(DeviceError::OutOfMemory {
                kind,
                requested_bytes: backed_bytes,
                limit_bytes,
            });
        }
        self.back(kind, backed_bytes);
        Ok(())
    }

    fn import_segment(&self, peer: Pe, kind: MemKind, key: &SegmentKey) -> Result<(), DeviceError> {
        let mut w = self.handle.world();
        Self::check_key(&mut w, peer, kind, &key.0)?;
        w.mark_imported(self.handle.pe, peer.0, kind);
        Ok(())
    }

    /// Checks the keys once per exchange, for every PE that imports from it (the exchange's
    /// one shared result), and marks every PE's segments imported at once: `n` PEs importing
    /// `n` peers each was `n²` checks.
    fn import_segments(
        &self,
        all: &Exchanged,
        offset: usize,
        kinds: &[MemKind],
    ) -> Result<(), DeviceError> {
        let mut w = self.handle.world();
        if !w.keys_checked(all, offset, kinds) {
            all.for_each_segment_key(offset, kinds, |peer, kind, key| {
                Self::check_key(&mut w, peer, kind, key)
            })?;
            w.remember_keys_checked(all, offset, kinds);
        }
        let me = self.handle.pe;
        if all.len() == w.n_pes as usize {
            for &kind in kinds {
                w.mark_imported_of_all(me, kind);
            }
        } else {
            for peer in 0..all.len() as u32 {
                for &kind in kinds {
                    w.mark_imported(me, peer, kind);
                }
            }
        }
        Ok(())
    }

    /// The address of the range in this process for the PE's own segments that are regions
    /// (every segment with [`crate::SimBuilder::addressable_memory`], static data in place
    /// with [`crate::SimBuilder::static_data`]); `None` for sparse segments, and for every
    /// peer: the simulator decides which peers are load/store reachable from the topology,
    /// but a peer's memory changes only through simulated operations, which take time, routes
    /// and the ordering rules that a plain store would bypass. The range is checked either
    /// way, so a runtime that asks for a segment it never imported, or past its end, fails
    /// here as it would on hardware.
    fn load_store_addr(&self, range: RemoteRange) -> Option<u64> {
        let addr = self.checked_addr("load_store_addr", range);
        if range.pe.0 != self.handle.pe {
            return None;
        }
        addr
    }

    /// With [`crate::SimBuilder::mapped_loads`], the address of the range for this PE's own
    /// regions and those of the peers it reaches by loads and stores; `None` otherwise, and
    /// for InfiniBand peers, whose writes need the visibility rule's events.
    fn mapped_load_addr(&self, range: RemoteRange) -> Option<u64> {
        let addr = self.checked_addr("mapped_load_addr", range);
        if !self.handle.world().params.mapped_loads {
            return None;
        }
        let class = self.path_to(range.pe).0;
        matches!(class, PathClass::Local | PathClass::LoadStore)
            .then_some(addr)
            .flatten()
    }

    fn note_mapped_loads(&self, pe: Pe, bytes: u64) {
        let bytes_per_s = self.path_to(pe).1;
        if bytes_per_s > 0 {
            let ns = crate::network::serialise_ns(bytes, bytes_per_s);
            self.handle.world().advance_clock(self.handle.pe, ns);
        }
    }

    /// Makes this PE's region of [`crate::SimBuilder::static_data`] its `Static` segment, in
    /// place (the first call; later ones return the same key); `None` without static data.
    fn share_static_data(&self) -> Result<Option<(SegmentKey, u64)>, DeviceError> {
        let pe = self.handle.pe;
        let shared = self.handle.world().mem.share_static(pe);
        Ok(shared.map(|len_bytes| (Self::key(pe, MemKind::Static, len_bytes), len_bytes)))
    }

    fn exchange(&self, mine: &[u8], _deadline: Instant) -> Result<Exchanged, QueueError> {
        // The exchange has no deadline of its own on the simulator: a PE that never arrives is
        // found by deadlock detection, which names it.
        self.handle.pace();
        self.handle.world().arrive(self.handle.pe, mine.to_vec());
        self.handle.wait_woken()?;
        self.handle
            .world()
            .take_exchange(self.handle.pe)
            .ok_or_else(|| QueueError::Lost("exchange ended without a result".into()))
    }

    fn create_queue(&self) -> Result<SimQueue, DeviceError> {
        let id = self.handle.world().create_queue(self.handle.pe);
        Ok(SimQueue::new(self.handle.clone(), id))
    }

    fn note_kernel_launch(&self) {
        let ns = self.timing.launch_ns;
        self.handle.world().advance_clock(self.handle.pe, ns);
    }

    fn set_word_names(&self, names: std::sync::Arc<hw::WordNames>) {
        self.handle.world().set_word_names(self.handle.pe, names);
    }

    fn read_local(&self, src: LocalRange, out: &mut [u8]) {
        assert_eq!(
            src.len,
            out.len() as u64,
            "read_local: range and buffer lengths differ"
        );
        let w = self.begin_local_access();
        w.mem.read(self.handle.pe, src.kind, src.offset, out);
    }

    fn write_local(&self, dst: LocalRange, data: &[u8]) {
        assert_eq!(
            dst.len,
            data.len() as u64,
            "write_local: range and data lengths differ"
        );
        let mut w = self.begin_local_access();
        w.mem.write(self.handle.pe, dst.kind, dst.offset, data);
        let bytes_per_s = w.topology.local_bytes_per_s();
        w.advance_clock(
            self.handle.pe,
            crate::network::serialise_ns(dst.len, bytes_per_s),
        );
    }

    fn wait_until_any(
        &self,
        specs: &[WaitSpec],
        deadline: Instant,
    ) -> Result<(usize, u64), QueueError> {
        assert!(!specs.is_empty(), "wait_until_any: no word to wait on");
        self.handle.world().counts.waits += 1;
        if self.handle.world().params.network_transport {
            self.handle.pace();
            self.handle.world().stall_before_wait(self.handle.pe, specs);
        }
        loop {
            self.handle.pace_before_wait(specs, deadline.0)?;
            if let Some(found) = self.test_quietly(specs) {
                return Ok(found);
            }
            self.handle.block_on_words(specs, deadline.0)?;
        }
    }

    fn test(&self, spec: WaitSpec) -> Option<u64> {
        self.handle.pace();
        let mut w = self.handle.world();
        w.counts.waits += 1;
        let poll_ns = w.params.timing.poll_ns;
        w.advance_clock(self.handle.pe, poll_ns);
        drop(w);
        self.test_quietly(&[spec]).map(|(_, value)| value)
    }
}

impl SimDevice {
    /// Checks the words in order; when one holds, runs the consistency step (which an
    /// exploration may delay, see `World::stall_before_consistency`) and returns its index
    /// and value.
    fn test_quietly(&self, specs: &[WaitSpec]) -> Option<(usize, u64)> {
        let pe = self.handle.pe;
        let (found, stalled) = {
            let mut w = self.handle.world();
            w.observe(pe);
            let found = specs
                .iter()
                .enumerate()
                .find_map(|(i, spec)| w.evaluate(pe, spec).map(|value| (i, value)))?;
            if w.params.faults.has(Fault::WaitSkipsConsistency) {
                return Some(found);
            }
            (found, w.stall_before_consistency(pe))
        };
        if stalled {
            self.handle.pace();
        }
        self.handle.world().flush(pe);
        Some(found)
    }
}
