//! Contexts (docs/teams-and-contexts.md): [`Ctx`], a stream of operations with its own ordering.
//!
//! Every RMA, atomic, signal, fence and quiet is a method of a context. The default context
//! (Tier-0) lives in [`crate::Shmem`], which dereferences to it, so `shmem.put(..)` works
//! with no creation step. [`crate::Shmem::ctx_create`] makes more (Tier-1): each has a queue
//! of its own in the backend, so [`Ctx::fence`] and [`Ctx::quiet`] order and complete only
//! that context's operations and never wait for another context's.

use std::cell::{Cell, RefCell};
use std::ops::Deref;
use std::rc::Rc;

use hw::{Backend, RemoteRange};

use crate::error::ShmemError;
use crate::memory::allocator::Access;
use crate::p2p::amo_nbi::PendingFetch;
use crate::pe::PeState;

/// How a context will be used, as `shmem_ctx_create`'s options say (OpenSHMEM 1.5 §9.4.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CtxOptions {
    /// `SHMEM_CTX_SERIALIZED`: the program never uses the context from two threads at once.
    /// Always true here: a [`Ctx`] is neither `Send` nor `Sync`.
    pub serialized: bool,
    /// `SHMEM_CTX_PRIVATE`: only the creating thread uses the context. Always true here, for
    /// the same reason.
    pub private: bool,
    /// `SHMEM_CTX_NOSTORE`: the context does no stores (puts, atomic updates, signals), so
    /// quiet and fence on it have nothing to order. A store on it is
    /// [`ShmemError::StoreOnNostoreContext`].
    pub nostore: bool,
}

impl CtxOptions {
    /// `SHMEM_CTX_SERIALIZED`.
    pub const SERIALIZED: CtxOptions = CtxOptions {
        serialized: true,
        private: false,
        nostore: false,
    };
    /// `SHMEM_CTX_PRIVATE`.
    pub const PRIVATE: CtxOptions = CtxOptions {
        serialized: false,
        private: true,
        nostore: false,
    };
    /// `SHMEM_CTX_NOSTORE`.
    pub const NOSTORE: CtxOptions = CtxOptions {
        serialized: false,
        private: false,
        nostore: true,
    };

    /// Both sets of options, as `SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE` in C.
    #[must_use]
    pub fn with(self, other: CtxOptions) -> CtxOptions {
        CtxOptions {
            serialized: self.serialized || other.serialized,
            private: self.private || other.private,
            nostore: self.nostore || other.nostore,
        }
    }
}

/// A communication context: RMA, atomics, signals, fence and quiet on a queue of its own.
///
/// It dereferences to the PE's [`PeState`] (my_pe, n_pes, device, ...). Created by
/// [`crate::Shmem::ctx_create`] or [`crate::Shmem::team_create_ctx`]; destroyed by
/// [`crate::Shmem::ctx_destroy`] (or when dropped, which skips the final quiet).
pub struct Ctx<B: Backend> {
    pub(crate) pe: Rc<PeState<B>>,
    pub(crate) queue: B::Queue,
    pub(crate) options: CtxOptions,
    /// The team whose PE numbers this context's operations take.
    pub(crate) team: crate::Team,
    /// Non-blocking fetching atomics whose values land at the next quiet (`p2p/amo_nbi.rs`).
    pub(crate) pending_fetches: RefCell<Vec<PendingFetch>>,
    /// Where the next `_any` wait or test starts looking (`p2p/wait_set.rs`).
    pub(crate) any_turn: Cell<usize>,
}

impl<B: Backend> std::fmt::Debug for Ctx<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx")
            .field("pe", &self.pe.my_pe)
            .field("options", &self.options)
            .field("team", &self.team)
            .finish_non_exhaustive()
    }
}

impl<B: Backend> Deref for Ctx<B> {
    type Target = PeState<B>;

    fn deref(&self) -> &PeState<B> {
        &self.pe
    }
}

impl<B: Backend> Ctx<B> {
    /// This context's queue. Work launched on it (a device-API kernel) is ordered with this
    /// context's operations, and [`Ctx::quiet`] waits for it.
    pub fn queue(&self) -> &B::Queue {
        &self.queue
    }

    /// The options the context was created with.
    pub fn options(&self) -> CtxOptions {
        self.options
    }

    /// The team the context was created on (`shmem_ctx_get_team`): its PE numbers are the
    /// ones the context's operations take.
    pub fn team(&self) -> &crate::Team {
        &self.team
    }

    /// Checks `pe` (a PE of this context's team) and `access`, and returns the range they
    /// name on that PE, for an operation that reads.
    pub(crate) fn read_range(&self, access: Access, pe: u32) -> Result<RemoteRange, ShmemError> {
        let world_pe = self.team.to_world(pe)?;
        self.pe.remote_range(access, world_pe)
    }

    /// As [`Ctx::read_range`], for an operation that stores: refused on a NOSTORE context.
    pub(crate) fn store_range(
        &self,
        access: Access,
        pe: u32,
        op: &'static str,
    ) -> Result<RemoteRange, ShmemError> {
        if self.options.nostore {
            return Err(ShmemError::StoreOnNostoreContext { op });
        }
        self.read_range(access, pe)
    }
}
