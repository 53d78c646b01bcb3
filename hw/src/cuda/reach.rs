//! What one PE's device, queues and kernels share ([`PeCtx`]): its GPU, its staging buffers,
//! and the table of segments it can reach by address.
//!
//! Why a table of its own: every put, get and kernel launch turns a (PE, kind, offset) into an
//! address here, so the table is the one place that checks a range against a segment and the
//! one place that counts changes (kernels rebind their state when the count moved).

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use super::driver::Gpu;
use super::staging::StagingPool;
use super::world::World;
use crate::types::{MemKind, Pe};

/// A segment this PE can reach: its base address (the same in every context of the process)
/// and length.
#[derive(Clone, Copy, Debug)]
struct Reachable {
    base: u64,
    len_bytes: u64,
}

/// What a device and its queues share. Used by the PE's thread only, hence `Rc`/`RefCell`.
#[derive(Debug)]
pub(crate) struct PeCtx {
    pub(crate) world: Arc<World>,
    pub(crate) pe: Pe,
    pub(crate) gpu: Arc<Gpu>,
    /// Reachable segments by PE and [`MemKind::index`]; this PE's own are entered at creation.
    reachable: RefCell<Vec<[Option<Reachable>; MemKind::COUNT]>>,
    /// How many times `reachable` changed: a kernel rewrites its bound state when this moved.
    reachable_changes: Cell<u64>,
    /// Pinned buffers for the copies of the device and its queues.
    pub(crate) staging: RefCell<StagingPool>,
    /// This PE's words in the program's terms, for reports of waits (`set_word_names`).
    pub(crate) names: RefCell<Option<Arc<crate::WordNames>>>,
    /// The watchdog of this PE's kernel waits, started by the first state that asks for a
    /// wait timeout (`device_api::state_of`).
    pub(crate) watchdog: std::cell::OnceCell<super::watchdog::Watchdog>,
    /// The proxy of this PE's kernels toward PEs of other nodes, started by the first state
    /// of a run that has such PEs (`device_api::state_of`).
    pub(crate) kernel_proxy: std::cell::OnceCell<super::remote::KernelProxy>,
}

impl PeCtx {
    /// The context of `pe` on `gpu`, which reaches no segment yet.
    pub(crate) fn new(world: Arc<World>, pe: Pe, gpu: Arc<Gpu>, staging: StagingPool) -> PeCtx {
        let n = world.n_pes as usize;
        PeCtx {
            world,
            pe,
            gpu,
            reachable: RefCell::new(vec![[None; MemKind::COUNT]; n]),
            reachable_changes: Cell::new(0),
            staging: RefCell::new(staging),
            names: RefCell::new(None),
            watchdog: std::cell::OnceCell::new(),
            kernel_proxy: std::cell::OnceCell::new(),
        }
    }

    /// Records `pe`'s segment of kind index `kind_idx` as reachable at `base` for `len_bytes`.
    pub(super) fn set_reachable(&self, pe: Pe, kind_idx: usize, base: u64, len_bytes: u64) {
        self.reachable.borrow_mut()[pe.idx()][kind_idx] = Some(Reachable { base, len_bytes });
        if pe == self.pe
            && let Some(remote) = self.world.remote()
        {
            remote.publish_own(kind_idx, base, len_bytes);
        }
        self.reachable_changes.set(self.reachable_changes.get() + 1);
    }

    /// How many times the reachable segments changed (creation, import, growth).
    pub(crate) fn reachable_changes(&self) -> u64 {
        self.reachable_changes.get()
    }

    /// The base address and length of `pe`'s `kind` segment, if this PE knows it.
    pub(crate) fn segment(&self, pe: Pe, kind: MemKind) -> Option<(u64, u64)> {
        let reachable = self.reachable.borrow().get(pe.idx())?[kind.index()]?;
        Some((reachable.base, reachable.len_bytes))
    }

    /// The address of `len` bytes at `offset` of `pe`'s `kind` segment.
    ///
    /// # Panics
    /// If the segment was not imported or the bytes are outside it (contract violations).
    pub(crate) fn addr(&self, pe: Pe, kind: MemKind, offset: u64, len: u64, what: &str) -> u64 {
        let reachable = self
            .reachable
            .borrow()
            .get(pe.idx())
            .and_then(|s| s[kind.index()])
            .unwrap_or_else(|| {
                panic!(
                    "{what}: {} used {pe}'s {kind:?} segment without importing it",
                    self.pe
                )
            });
        let end = offset.checked_add(len);
        assert!(
            end.is_some_and(|end| end <= reachable.len_bytes),
            "{what}: bytes {offset}+{len} outside {pe}'s {kind:?} segment of {} bytes \
             (contract violation)",
            reachable.len_bytes
        );
        reachable.base + offset
    }
}
