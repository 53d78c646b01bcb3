//! [`HostDevice`]: one PE's endpoint on the host backend.

use std::cell::RefCell;
use std::rc::Rc;

use crate::amo::{AmoKind, AmoOp};
use crate::backend::{Device, WaitSpec, waiting_for_any};
use crate::caps::Caps;
use crate::error::{DeviceError, QueueError};
use crate::exchanged::Exchanged;
use crate::sync::{self, Arc, Clock, Ordering, fence};
use crate::topology::Topology;
use crate::types::{Instant, LocalRange, MemKind, Pe, RemoteRange, SegmentKey};

use super::HostBackend;
use super::queue::HostQueue;
use super::segment::Segment;
use super::world::World;

/// What a device and its queues share: the world, which PE they are, and the segments this
/// PE has imported. Used by one thread only (the contract's devices are not shared), hence
/// `Rc` and `RefCell`, which cost the model checkers nothing.
#[derive(Debug)]
pub(crate) struct PeCtx {
    pub(crate) world: Arc<World>,
    pub(crate) pe: Pe,
    /// Reachable segments by PE and [`MemKind::index`]; this PE's own are entered at creation.
    imports: RefCell<Vec<[Option<Arc<Segment>>; MemKind::COUNT]>>,
}

impl PeCtx {
    /// Runs `f` on `pe`'s imported segment of `kind`.
    ///
    /// # Panics
    /// If it was not imported (contract violation).
    pub(crate) fn with_segment<T>(
        &self,
        pe: Pe,
        kind: MemKind,
        f: impl FnOnce(&Segment) -> T,
    ) -> T {
        let imports = self.imports.borrow();
        let segment = imports
            .get(pe.idx())
            .and_then(|s| s[kind.index()].as_ref())
            .unwrap_or_else(|| {
                panic!(
                    "{} used {pe}'s {kind:?} segment without importing it",
                    self.pe
                )
            });
        f(segment)
    }

    /// Called after this PE wrote `target`'s memory: wakes `target` if it sleeps in a wait.
    /// The PE's own memory needs no wake-up: only its own thread waits on it.
    pub(crate) fn delivered(&self, target: Pe) {
        if target != self.pe {
            let wake_fence = self.world.strength.wake_fence;
            self.world.pes[target.idx()].waker.notify(wake_fence);
        }
    }

    /// The wall-clock point of a contract deadline (`None`: never).
    pub(crate) fn deadline(&self, deadline: Instant) -> Option<Clock> {
        sync::clock_after(&self.world.start, deadline.0)
    }
}

/// One PE's endpoint: its memory, waits, clock and bootstrap, on a thread of its own.
#[derive(Debug)]
pub struct HostDevice {
    ctx: Rc<PeCtx>,
}

/// The key of `pe`'s `kind` segment: the PE, the kind and the length, little-endian.
fn key_bytes(pe: Pe, kind: MemKind, len_bytes: u64) -> Vec<u8> {
    let mut key = pe.0.to_le_bytes().to_vec();
    key.push(kind.index() as u8);
    key.extend_from_slice(&len_bytes.to_le_bytes());
    key
}

impl HostDevice {
    pub(crate) fn new(world: Arc<World>, pe: Pe) -> HostDevice {
        assert!(pe.0 < world.n_pes, "{pe} is not a PE of this run");
        let n = world.n_pes as usize;
        HostDevice {
            ctx: Rc::new(PeCtx {
                world,
                pe,
                imports: RefCell::new(vec![[None, None, None]; n]),
            }),
        }
    }

    /// Reads the word of `spec` once; `Some(value)` if the comparison holds.
    ///
    /// Relaxed is enough: the value reaches a caller only after [`Self::consistency_step`],
    /// whose `fence(SeqCst)` is an acquire fence after this load, so it synchronises with the
    /// writer as an Acquire load would (C11 fence rules). The mutation check found Acquire
    /// here indistinguishable from Relaxed (docs/mutation.md).
    fn check(&self, spec: &WaitSpec) -> Option<u64> {
        assert_eq!(
            spec.word.len,
            spec.width.bytes(),
            "wait: word length is not its width"
        );
        let fetch = AmoOp {
            kind: AmoKind::Fetch,
            operand: 0,
            width: spec.width,
        };
        let value = self.ctx.with_segment(self.ctx.pe, spec.word.kind, |s| {
            s.amo(spec.word.offset, fetch, Ordering::Relaxed)
        });
        let width = spec.width;
        spec.cmp
            .eval(width, spec.signed, value, width.truncate(spec.value))
            .then_some(value)
    }

    /// The current values of the words of `specs`, for a deadline report.
    fn words(&self, specs: &[WaitSpec]) -> Vec<u64> {
        specs
            .iter()
            .map(|spec| {
                let mut now = [0u8; 8];
                let len = spec.width.bytes() as usize;
                self.read_local(spec.word, &mut now[..len]);
                u64::from_le_bytes(now)
            })
            .collect()
    }

    /// The consistency step after a satisfied wait or test. Every remote write ends with a
    /// `fence(SeqCst)` (the writer's wake-up check), so after this fence the PE sees every
    /// write whose fence came first in the single total order of SeqCst fences: the contract's
    /// "every update that is delivered is visible".
    fn consistency_step() {
        fence(Ordering::SeqCst);
    }
}

impl Device for HostDevice {
    type B = HostBackend;

    fn pe(&self) -> Pe {
        self.ctx.pe
    }

    fn n_pes(&self) -> u32 {
        self.ctx.world.n_pes
    }

    fn caps(&self) -> &Caps {
        &self.ctx.world.caps
    }

    fn topology(&self) -> &Topology {
        &self.ctx.world.topology
    }

    fn now(&self) -> Instant {
        Instant(sync::nanos_since(&self.ctx.world.start))
    }

    fn create_segment(&self, kind: MemKind, len_bytes: u64) -> Result<SegmentKey, DeviceError> {
        let limit_bytes = self.ctx.world.caps.max_segment_bytes;
        let oom = DeviceError::OutOfMemory {
            kind,
            requested_bytes: len_bytes,
            limit_bytes,
        };
        if len_bytes > limit_bytes {
            return Err(oom);
        }
        let pe = self.ctx.pe;
        let mut table = sync::lock(&self.ctx.world.pes[pe.idx()].segments);
        let slot = &mut table[kind.index()];
        if slot.is_some() {
            return Err(DeviceError::Lost(format!(
                "{pe} already has a {kind:?} segment"
            )));
        }
        let segment = Arc::new(Segment::zeroed(len_bytes).ok_or(oom)?);
        *slot = Some(Arc::clone(&segment));
        drop(table);
        self.ctx.imports.borrow_mut()[pe.idx()][kind.index()] = Some(segment);
        Ok(SegmentKey(key_bytes(pe, kind, len_bytes)))
    }

    fn import_segment(&self, peer: Pe, kind: MemKind, key: &SegmentKey) -> Result<(), DeviceError> {
        let import_error = |reason: &str| DeviceError::Import {
            peer,
            kind,
            reason: reason.into(),
        };
        let shared = self
            .ctx
            .world
            .pes
            .get(peer.idx())
            .ok_or_else(|| import_error("no such PE"))?;
        let segment = sync::lock(&shared.segments)[kind.index()]
            .clone()
            .ok_or_else(|| import_error("the peer has not created that segment"))?;
        if key.0 != key_bytes(peer, kind, segment.len_bytes()) {
            return Err(import_error("the key does not describe that segment"));
        }
        self.ctx.imports.borrow_mut()[peer.idx()][kind.index()] = Some(segment);
        Ok(())
    }

    /// Always `None`: a segment is atomic words, and plain loads and stores beside the
    /// backend's atomic accesses would be data races. The range is still checked.
    fn load_store_addr(&self, range: RemoteRange) -> Option<u64> {
        self.ctx.with_segment(range.pe, range.kind, |s| {
            s.span(range.offset, range.len, "load_store_addr")
        });
        None
    }

    fn exchange(&self, mine: &[u8], deadline: Instant) -> Result<Exchanged, QueueError> {
        let world = &self.ctx.world;
        world
            .rendezvous
            .exchange(self.ctx.pe, mine, &world.start, deadline)
    }

    fn create_queue(&self) -> Result<HostQueue, DeviceError> {
        Ok(HostQueue::new(Rc::clone(&self.ctx)))
    }

    fn read_local(&self, src: LocalRange, out: &mut [u8]) {
        assert_eq!(
            src.len,
            out.len() as u64,
            "read_local: range and buffer lengths differ"
        );
        // Acquire: a fenced sequence of puts is then seen in order even by plain reads.
        self.ctx.with_segment(self.ctx.pe, src.kind, |s| {
            s.read(src.offset, out, Ordering::Acquire)
        });
    }

    fn write_local(&self, dst: LocalRange, data: &[u8]) {
        assert_eq!(
            dst.len,
            data.len() as u64,
            "write_local: range and data lengths differ"
        );
        // Relaxed: peers may see it only after this PE's quiet or barrier, which fence.
        self.ctx
            .with_segment(self.ctx.pe, dst.kind, |s| s.write(dst.offset, data));
    }

    fn wait_until_any(
        &self,
        specs: &[WaitSpec],
        deadline: Instant,
    ) -> Result<(usize, u64), QueueError> {
        assert!(!specs.is_empty(), "wait_until_any: no word to wait on");
        let waker = &self.ctx.world.pes[self.ctx.pe.idx()].waker;
        let wake_fence = self.ctx.world.strength.wake_fence;
        // Why one sleep for all words: every write to this PE notifies its one waker, so a
        // check of every word after each wake-up misses none.
        let first_holding = || {
            specs
                .iter()
                .enumerate()
                .find_map(|(i, spec)| self.check(spec).map(|value| (i, value)))
        };
        match waker.wait_for(first_holding, self.ctx.deadline(deadline), wake_fence) {
            Ok(found) => {
                Self::consistency_step();
                Ok(found)
            }
            Err(()) => Err(QueueError::Deadline {
                pe: self.ctx.pe,
                // Why no word names: this backend runs the runtime's own tests and Rust
                // programs, whose reports name words by segment and offset.
                waiting_for: waiting_for_any(specs, &self.words(specs), None),
                deadline,
            }),
        }
    }

    fn test(&self, spec: WaitSpec) -> Option<u64> {
        let value = self.check(&spec)?;
        Self::consistency_step();
        Some(value)
    }
}
