//! [`KernelThread`]: one thread of a launch, its ids, and the calls only a single thread
//! makes (`p`, `g`, plain loads and stores, and the meetings `sync_threads`/`sync_warp`).

use std::ops::Deref;

use hw::{Backend, KernelEvent, KernelMemory, Queue, ThreadAccess};

use crate::TRACING_TARGET;
use crate::error::ShmemError;
use crate::kernel::dims::{Dim3, WARP_SIZE};
use crate::kernel::group::Scope;
use crate::kernel::launch::Launch;
use crate::kernel::scope::Scoped;
use crate::memory::sym::{Element, Sym};
use crate::pe::same_len;

/// One thread of a kernel launch ([`crate::Shmem::launch_kernel`]).
///
/// It dereferences to its thread-scoped operations ([`Scoped`] on the default context), so
/// `t.put(..)` is NVSHMEM's `put` from one thread; [`KernelThread::warp`] and
/// [`KernelThread::block`] give the `_warp` and `_block` variants.
pub struct KernelThread<'k, B: Backend> {
    here: Scoped<'k, B>,
    block_idx: Dim3,
    thread_idx: Dim3,
}

impl<B: Backend> std::fmt::Debug for KernelThread<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelThread")
            .field("pe", &self.my_pe())
            .field("block_idx", &self.block_idx)
            .field("thread_idx", &self.thread_idx)
            .finish()
    }
}

impl<'k, B: Backend> Deref for KernelThread<'k, B> {
    type Target = Scoped<'k, B>;

    fn deref(&self) -> &Scoped<'k, B> {
        &self.here
    }
}

impl<'k, B: Backend> KernelThread<'k, B> {
    pub(crate) fn new(launch: &'k Launch<'k, B>, index: usize) -> KernelThread<'k, B> {
        let (block_idx, thread_idx) = launch.ids(index);
        KernelThread {
            here: Scoped::new(launch, index),
            block_idx,
            thread_idx,
        }
    }

    /// This thread's block in the grid (`blockIdx`).
    pub fn block_idx(&self) -> Dim3 {
        self.block_idx
    }

    /// This thread in its block (`threadIdx`).
    pub fn thread_idx(&self) -> Dim3 {
        self.thread_idx
    }

    /// The size of every block (`blockDim`).
    pub fn block_dim(&self) -> Dim3 {
        self.launch().block_dim
    }

    /// The size of the grid (`gridDim`).
    pub fn grid_dim(&self) -> Dim3 {
        self.launch().grid
    }

    /// This thread's rank in its block, `x` fastest.
    pub fn thread_rank(&self) -> u32 {
        self.launch().rank_in_block(self.index()) as u32
    }

    /// This block's rank in the grid, `x` fastest.
    pub fn block_rank(&self) -> u32 {
        (self.index() / self.block_dim().count() as usize) as u32
    }

    /// This thread's rank in the whole launch: block rank times block size plus thread
    /// rank, the `tid` of a grid-stride loop.
    pub fn global_rank(&self) -> u32 {
        self.index() as u32
    }

    /// How many threads the launch has: the stride of a grid-stride loop.
    pub fn grid_threads(&self) -> u32 {
        self.launch().n_threads() as u32
    }

    /// This thread's warp in its block.
    pub fn warp_id(&self) -> u32 {
        self.thread_rank() / WARP_SIZE
    }

    /// This thread's lane in its warp.
    pub fn lane_id(&self) -> u32 {
        self.thread_rank() % WARP_SIZE
    }

    /// The number of this PE.
    pub fn my_pe(&self) -> u32 {
        self.launch().shmem.my_pe()
    }

    /// The number of PEs in the run.
    pub fn n_pes(&self) -> u32 {
        self.launch().shmem.n_pes()
    }

    /// The operations of this thread's warp: every thread of the warp makes each call, with
    /// the same arguments, and it is done once for all of them (`_warp` in NVSHMEM).
    pub fn warp(&self) -> Scoped<'k, B> {
        self.here.at(Scope::Warp)
    }

    /// The operations of this thread's block: every thread of the block makes each call,
    /// with the same arguments, and it is done once for all of them (`_block` in NVSHMEM).
    pub fn block(&self) -> Scoped<'k, B> {
        self.here.at(Scope::Block)
    }

    /// Waits until every thread of the block has called it (`__syncthreads`).
    ///
    /// # Errors
    /// The group errors of [`Scoped`]: another thread of the block meets it with a different
    /// call, or never calls it.
    pub async fn sync_threads(&self) -> Result<(), ShmemError> {
        self.block().meet_only("sync_threads").await
    }

    /// Waits until every thread of the warp has called it (`__syncwarp`).
    ///
    /// # Errors
    /// As [`KernelThread::sync_threads`], for the warp.
    pub async fn sync_warp(&self) -> Result<(), ShmemError> {
        self.warp().meet_only("sync_warp").await
    }

    /// Lets the launch's other threads run before this one goes on: it is ready again when
    /// the launch next checks its waiting threads, after every ready thread has run and
    /// every wait has been checked once (a GPU thread's `__nanosleep` in a spin loop).
    ///
    /// A thread that only yields while it waits for a plain store of another PE keeps its
    /// PE from blocking in the backend; wait with `wait_until` or `signal_wait_until`.
    pub async fn yield_now(&self) {
        self.launch().yield_once(self.index()).await;
    }

    /// Writes the single element `dst` on PE `pe` from this thread (`p`).
    ///
    /// # Ordering
    /// As [`crate::Ctx::put`].
    ///
    /// # Errors
    /// As [`crate::Ctx::p`].
    pub async fn p<T: Element>(&self, dst: Sym<T>, value: T, pe: u32) -> Result<(), ShmemError> {
        self.put(dst, &[value], pe).await
    }

    /// Reads the single element `src` from PE `pe` (`g`). The thread waits for the value;
    /// the other threads run meanwhile, so the gets of many threads overlap.
    ///
    /// # Ordering
    /// As [`crate::Ctx::get`].
    ///
    /// # Errors
    /// As [`crate::Ctx::g`].
    pub async fn g<T: Element>(&self, src: Sym<T>, pe: u32) -> Result<T, ShmemError> {
        same_len(src.len(), 1)?;
        let ctx = self.ctx();
        let range = ctx.read_range(src.access(), pe)?;
        tracing::trace!(target: TRACING_TARGET, pe = self.my_pe(), peer = pe, op = "g (kernel)", offset = range.offset);
        let ticket = ctx.queue.get(range)?;
        self.launch()
            .ticket(self.index(), &ctx.queue, ticket)
            .await?;
        let bytes = ctx.queue.take_fetched(ticket);
        assert_eq!(
            bytes.len(),
            size_of::<T>(),
            "backend contract violation: a get of one element returned {} bytes",
            bytes.len()
        );
        Ok(bytemuck::pod_read_unaligned(&bytes))
    }

    /// Reads this PE's own part of `sym` with plain loads.
    ///
    /// # Errors
    /// As [`crate::Ctx::local`].
    pub fn local<T: Element>(&self, sym: Sym<T>) -> Result<Vec<T>, ShmemError> {
        self.note_access(sym, ThreadAccess::Read)?;
        self.ctx().local(sym)
    }

    /// Writes `values` to this PE's own part of `sym` with plain stores.
    ///
    /// # Errors
    /// As [`crate::Ctx::set_local`].
    pub fn set_local<T: Element>(&self, sym: Sym<T>, values: &[T]) -> Result<(), ShmemError> {
        self.note_access(sym, ThreadAccess::Write)?;
        self.ctx().set_local(sym, values)
    }

    /// Tells a race detector around the backend that this thread accesses its PE's part of
    /// `sym`, so that it checks the access against the other threads'.
    pub(crate) fn note_access<T: Element>(
        &self,
        sym: Sym<T>,
        access: ThreadAccess,
    ) -> Result<(), ShmemError> {
        let range = self.ctx().local_range(sym.access())?;
        self.launch().note(KernelEvent::Access {
            memory: KernelMemory::Symmetric(range.kind),
            at: range.offset,
            len_bytes: range.len,
            access,
        });
        Ok(())
    }
}
