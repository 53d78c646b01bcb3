//! [`Shmem::launch_kernel`], and the state every thread of a launch shares.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;

use hw::{Backend, Device, KernelEvent};

use crate::TRACING_TARGET;
use crate::error::ShmemError;
use crate::kernel::dims::{Dim3, MAX_LAUNCH_THREADS, WARP_SIZE};
use crate::kernel::error::KernelError;
use crate::kernel::exec;
use crate::kernel::group::{Group, Scope};
use crate::kernel::park::Park;
use crate::kernel::thread::KernelThread;
use crate::shmem::Shmem;

impl<B: Backend> Shmem<B> {
    /// Runs `kernel` once for every thread of a `grid` of blocks of `block` threads on this PE,
    /// and returns what each thread returned, ordered by block and then thread (`x` fastest).
    ///
    /// A thread is an async closure given its [`KernelThread`]: its ids, and the SHMEM
    /// operations at thread, warp and block scope (`t.put(..)`, `t.warp().put(..)`,
    /// `t.block().put(..)`, as NVSHMEM's `put`, `put_warp` and `put_block`). Threads suspend
    /// only at those calls; the launch interleaves them there until every thread has
    /// returned, so a thread that waits for a signal lets the others run. docs/kernels.md has
    /// the model and what simulated time means.
    ///
    /// Not collective: each PE launches its own kernels. A kernel that calls the collectives
    /// over every PE (barrier_all, broadcast, ...) must be launched on every PE, and call
    /// them from one block per PE, in the same order everywhere, as NVSHMEM's collective
    /// launch asks.
    ///
    /// # Errors
    /// [`KernelError::InvalidDims`] for a dimension of zero, a block of more than
    /// [`crate::MAX_BLOCK_THREADS`] threads or a launch of more than
    /// [`crate::MAX_LAUNCH_THREADS`]; [`KernelError::Thread`] with the first error a
    /// thread returned (the launch stops there); [`KernelError::NeverArrived`] when threads
    /// wait at a warp or block call that the others never reach;
    /// [`KernelError::ForeignAwait`] when a thread awaits something that is not a kernel call.
    pub fn launch_kernel<R, F>(
        &self,
        grid: Dim3,
        block: Dim3,
        kernel: F,
    ) -> Result<Vec<R>, ShmemError>
    where
        F: AsyncFn(&KernelThread<'_, B>) -> Result<R, ShmemError>,
    {
        let name = std::any::type_name::<F>();
        let mut name = name.strip_prefix('&').unwrap_or(name);
        while let Some(outer) = name.strip_suffix("::{{closure}}") {
            name = outer;
        }
        self.launch_named_kernel(name, grid, block, kernel)
    }

    /// [`Shmem::launch_kernel`] with the kernel's name, which the race detector's reports
    /// give (docs/check.md); `launch_kernel` names a kernel by the function it is written in.
    ///
    /// # Errors
    /// As [`Shmem::launch_kernel`].
    pub fn launch_named_kernel<R, F>(
        &self,
        name: &str,
        grid: Dim3,
        block: Dim3,
        kernel: F,
    ) -> Result<Vec<R>, ShmemError>
    where
        F: AsyncFn(&KernelThread<'_, B>) -> Result<R, ShmemError>,
    {
        let launch = Launch::new(self, grid, block)?;
        self.device.note_kernel_launch();
        let xyz = |d: Dim3| [d.x, d.y, d.z];
        self.device.note_kernel_event(KernelEvent::Launch {
            name,
            grid: xyz(grid),
            block: xyz(block),
        });
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, %grid, %block, "launch_kernel");
        let threads: Vec<KernelThread<'_, B>> = (0..launch.n_threads())
            .map(|index| KernelThread::new(&launch, index))
            .collect();
        let futures = threads.iter().map(|t| Box::pin(kernel(t))).collect();
        let results = exec::drive(&launch, futures);
        self.device.note_kernel_event(KernelEvent::End);
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, ok = results.is_ok(), "kernel done");
        results
    }
}

/// What every thread of one launch shares: the PE, the sizes, the meeting points of warps and
/// blocks, and what each thread is suspended in.
pub(crate) struct Launch<'k, B: Backend> {
    pub(crate) shmem: &'k Shmem<B>,
    pub(crate) grid: Dim3,
    pub(crate) block_dim: Dim3,
    block_threads: usize,
    warps_per_block: usize,
    blocks: Vec<Group<B>>,
    warps: Vec<Group<B>>,
    /// What each thread is suspended in (see `park.rs`).
    pub(crate) parks: Vec<Cell<Park>>,
    /// Threads to poll next: every thread at first, then those released from a meeting.
    ready: RefCell<VecDeque<usize>>,
    /// The thread whose wait the PE blocks in when every thread waits (see `exec.rs`).
    pub(crate) block_in: Cell<Option<usize>>,
    /// The number of the next park, so that a thread parked again is told from one that
    /// never moved.
    next_park: Cell<u64>,
    /// The group that called a collective over every PE first: its scope, its index among
    /// that scope's groups, and the thread that called.
    world_group: Cell<Option<(Scope, usize, usize)>>,
}

impl<'k, B: Backend> Launch<'k, B> {
    fn new(shmem: &'k Shmem<B>, grid: Dim3, block_dim: Dim3) -> Result<Launch<'k, B>, ShmemError> {
        let invalid = |what, dims, reason| KernelError::InvalidDims { what, dims, reason };
        if let Some(reason) = grid.invalid(false) {
            return Err(invalid("grid", grid, reason).into());
        }
        if let Some(reason) = block_dim.invalid(true) {
            return Err(invalid("block", block_dim, reason).into());
        }
        let n_threads = grid.count() * block_dim.count();
        if n_threads > MAX_LAUNCH_THREADS {
            return Err(invalid(
                "grid",
                grid,
                "the launch would have more than 2^20 threads, whose state is all held at \
                 once; launch fewer blocks and loop over the work in each thread",
            )
            .into());
        }
        let block_threads = block_dim.count() as usize;
        let warps_per_block = block_threads.div_ceil(WARP_SIZE as usize);
        let n_blocks = grid.count() as usize;
        let blocks = (0..n_blocks)
            .map(|b| Group::new(Scope::Block, b * block_threads..(b + 1) * block_threads))
            .collect();
        let warps = (0..n_blocks * warps_per_block)
            .map(|w| {
                let (block, warp) = (w / warps_per_block, w % warps_per_block);
                let first = block * block_threads + warp * WARP_SIZE as usize;
                let end = (first + WARP_SIZE as usize).min((block + 1) * block_threads);
                Group::new(Scope::Warp, first..end)
            })
            .collect();
        let n_threads = n_threads as usize;
        Ok(Launch {
            shmem,
            grid,
            block_dim,
            block_threads,
            warps_per_block,
            blocks,
            warps,
            parks: (0..n_threads).map(|_| Cell::new(Park::Running)).collect(),
            ready: RefCell::new((0..n_threads).collect()),
            block_in: Cell::new(None),
            next_park: Cell::new(0),
            world_group: Cell::new(None),
        })
    }

    /// Tells a race detector around the backend what a thread of this launch did.
    pub(crate) fn note(&self, event: KernelEvent<'_>) {
        self.shmem.device.note_kernel_event(event);
    }

    /// Tells a race detector that the threads of `members` met.
    pub(crate) fn note_meeting(&self, members: &std::ops::Range<usize>) {
        let rank = |i: usize| u32::try_from(i).expect("a launch has at most 2^20 threads");
        self.note(KernelEvent::Meet {
            first: rank(members.start),
            end: rank(members.end),
        });
    }

    pub(crate) fn n_threads(&self) -> usize {
        self.parks.len()
    }

    /// The block index and thread index of `thread`.
    pub(crate) fn ids(&self, thread: usize) -> (Dim3, Dim3) {
        let block = (thread / self.block_threads) as u32;
        let rank = (thread % self.block_threads) as u32;
        (self.grid.index_of(block), self.block_dim.index_of(rank))
    }

    /// The rank of `thread` in its block.
    pub(crate) fn rank_in_block(&self, thread: usize) -> usize {
        thread % self.block_threads
    }

    /// The group `thread` meets in at `scope`, and its index among that scope's groups;
    /// `None` at thread scope.
    pub(crate) fn group(&self, thread: usize, scope: Scope) -> Option<(&Group<B>, usize)> {
        let block = thread / self.block_threads;
        match scope {
            Scope::Thread => None,
            Scope::Block => Some((&self.blocks[block], block)),
            Scope::Warp => {
                let warp =
                    block * self.warps_per_block + self.rank_in_block(thread) / WARP_SIZE as usize;
                Some((&self.warps[warp], warp))
            }
        }
    }

    /// The name of `thread`'s group at `scope`, for messages.
    pub(crate) fn group_name(&self, thread: usize, scope: Scope) -> String {
        let (block, index) = self.ids(thread);
        match scope {
            Scope::Thread => format!("thread {index} of block {block}"),
            Scope::Warp => format!(
                "warp {} of block {block}",
                self.rank_in_block(thread) / WARP_SIZE as usize
            ),
            Scope::Block => format!("block {block}"),
        }
    }

    /// Every warp and block, for reports of threads that never arrive.
    pub(crate) fn groups(&self) -> impl Iterator<Item = &Group<B>> {
        self.blocks.iter().chain(&self.warps)
    }

    /// Makes `threads` ready to be polled, before the threads that have not started: a
    /// released group runs on first, so a block finishes before the next one starts and
    /// the threads suspended at once stay few (each suspended thread of a program on
    /// coroutines holds a stack).
    pub(crate) fn wake(&self, threads: Vec<usize>) {
        let mut ready = self.ready.borrow_mut();
        for thread in threads.into_iter().rev() {
            ready.push_front(thread);
        }
    }

    pub(crate) fn next_ready(&self) -> Option<usize> {
        self.ready.borrow_mut().pop_front()
    }

    /// A fresh park number.
    pub(crate) fn next_park(&self) -> u64 {
        let park = self.next_park.get();
        self.next_park.set(park + 1);
        park
    }

    /// Records that `thread`'s group at `scope` calls the collectives over every PE; a second
    /// group of the same launch is refused.
    pub(crate) fn claim_world(&self, thread: usize, scope: Scope) -> Result<(), ShmemError> {
        let group = self.group(thread, scope).map_or(thread, |(_, index)| index);
        match self.world_group.get() {
            None => {
                self.world_group.set(Some((scope, group, thread)));
                Ok(())
            }
            Some((first_scope, first_group, _)) if (first_scope, first_group) == (scope, group) => {
                Ok(())
            }
            Some((first_scope, _, first_thread)) => Err(KernelError::WorldCollectiveGroups {
                first: self.group_name(first_thread, first_scope),
                second: self.group_name(thread, scope),
            }
            .into()),
        }
    }
}
