//! The link between a PE's coroutine and the world: borrowing the world, yielding, blocking.

use std::cell::{RefCell, RefMut};
use std::rc::Rc;

use corosensei::Yielder;
use hw::{QueueError, WaitSpec};

use crate::threads::PeThreads;
use crate::world::{Blocked, World};

/// State shared by the executor and every device and queue handle of a run.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) world: RefCell<World>,
    /// Each PE's handle while its program runs, for the threads its program starts
    /// ([`crate::threads`]), which reach their PE from outside its device.
    pub(crate) handles: RefCell<Vec<Option<PeHandle>>>,
}

impl Shared {
    pub(crate) fn new(world: World) -> Shared {
        let n_pes = world.n_pes as usize;
        Shared {
            world: RefCell::new(world),
            handles: RefCell::new(vec![None; n_pes]),
        }
    }
}

/// What a device or queue needs to act for its PE.
#[derive(Clone)]
pub(crate) struct PeHandle {
    pub(crate) shared: Rc<Shared>,
    pub(crate) pe: u32,
    executor: Executor,
    /// The threads of the PE's program.
    pub(crate) threads: Rc<PeThreads>,
}

/// How a PE gives control back: which executor runs it.
#[derive(Clone)]
enum Executor {
    /// The yielder of this PE's coroutine ([`crate::exec`]). It lives on the coroutine's
    /// stack for as long as the PE's program runs; `suspend` checks that the world says this
    /// PE is running before touching it, so a handle smuggled out of its PE panics instead of
    /// using a dead pointer.
    Coroutine(*const Yielder<(), ()>),
    /// The rounds of the shuttle executor ([`crate::exec_shuttle`]).
    #[cfg(rshmem_shuttle)]
    ShuttleTask(Rc<crate::exec_shuttle::Rounds>),
}

impl std::fmt::Debug for PeHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeHandle")
            .field("pe", &self.pe)
            .finish_non_exhaustive()
    }
}

impl PeHandle {
    pub(crate) fn new(shared: Rc<Shared>, pe: u32, yielder: &Yielder<(), ()>) -> PeHandle {
        PeHandle {
            shared,
            pe,
            executor: Executor::Coroutine(yielder),
            threads: Rc::new(PeThreads::new()),
        }
    }

    /// The handle of a PE that runs as a shuttle task.
    #[cfg(rshmem_shuttle)]
    pub(crate) fn for_shuttle_task(
        shared: Rc<Shared>,
        pe: u32,
        rounds: Rc<crate::exec_shuttle::Rounds>,
    ) -> PeHandle {
        PeHandle {
            shared,
            pe,
            executor: Executor::ShuttleTask(rounds),
            threads: Rc::new(PeThreads::new()),
        }
    }

    pub(crate) fn world(&self) -> RefMut<'_, World> {
        self.shared.world.borrow_mut()
    }

    /// Gives control back to the executor until the world resumes this PE. The world must
    /// not be borrowed.
    fn suspend(&self) {
        match &self.executor {
            Executor::Coroutine(yielder) => {
                let running = self.world().running;
                assert_eq!(
                    running,
                    Some(self.pe),
                    "a device or queue of PE {} was used outside that PE's program",
                    self.pe
                );
                // SAFETY: the world says this PE's coroutine is the one running, and a handle
                // of PE `pe` is only created inside that coroutine with its own yielder, which
                // outlives the coroutine body.
                unsafe { (**yielder).suspend(()) };
            }
            #[cfg(rshmem_shuttle)]
            Executor::ShuttleTask(rounds) => rounds.suspend(self.pe),
        }
        if let Some(reason) = self.world().abort.clone() {
            // The run is over (time limit, a read of dropped bytes): unwind this PE's program;
            // the executor reports it. Without the panic hook: the run's failure says why
            // once, where a panic would print it again for every PE.
            std::panic::resume_unwind(Box::new(reason));
        }
    }

    /// Yields if this PE's clock ran past the next event, so that everything before its
    /// clock has happened. Call before observing or changing what other PEs can see.
    pub(crate) fn pace(&self) {
        self.yield_if(World::must_yield);
    }

    /// [`PeHandle::pace`] before a wait until any of `specs` holds: if this PE must yield, the
    /// world tests the words when it resumes the PE and blocks it at once if none holds
    /// ([`World::reschedule_to_test`]); returns when the PE runs again, with the error its
    /// wait ended with if it blocked and was woken by one (its deadline).
    pub(crate) fn pace_before_wait(
        &self,
        specs: &[WaitSpec],
        deadline_ns: u64,
    ) -> Result<(), QueueError> {
        // A PE of several threads lets another thread run when it yields, and the shuttle
        // executor orders PEs of one instant itself: both take the ordinary way.
        if self.threads.several() || !matches!(self.executor, Executor::Coroutine(_)) {
            self.pace();
            return Ok(());
        }
        loop {
            {
                let mut w = self.world();
                if !w.must_yield(self.pe) {
                    return Ok(());
                }
                w.reschedule_to_test(self.pe, specs, deadline_ns);
            }
            self.suspend();
            self.world().take_wake(self.pe)?;
        }
    }

    /// Yields if this PE's clock ran too far past the next event to post an operation (see
    /// `world::ISSUE_LOOKAHEAD_NS`). Call before posting an operation.
    pub(crate) fn pace_post(&self) {
        self.switch_point();
        self.yield_if(World::must_yield_to_post);
    }

    /// Lets shuttle run another PE of the same round here, before this PE posts an operation
    /// (see [`crate::exec_shuttle`]); nothing for a coroutine.
    fn switch_point(&self) {
        #[cfg(rshmem_shuttle)]
        if let Executor::ShuttleTask(rounds) = &self.executor {
            rounds.switch_point();
        }
    }

    /// Yields until the world resumes this PE at its clock, if `must_yield` says so. A PE
    /// with several threads then lets its other ready threads run, which may move its clock
    /// on, so it looks again.
    fn yield_if(&self, must_yield: impl Fn(&mut World, u32) -> bool) {
        loop {
            let must = {
                let mut w = self.world();
                let must = must_yield(&mut w, self.pe);
                if must {
                    w.reschedule(self.pe);
                }
                must
            };
            if !must {
                return;
            }
            self.suspend();
            if !self.threads.several() {
                return;
            }
            let _ = self.threads.preempt(self);
        }
    }

    /// Blocks on `what` until the world wakes this PE (with several threads, the calling
    /// thread, [`PeThreads::block`]); returns what it was woken with.
    pub(crate) fn block(&self, what: Blocked, deadline_ns: u64) -> Result<(), QueueError> {
        if self.threads.several() {
            return self.threads.block(self, what, &[], deadline_ns);
        }
        self.world().block(self.pe, what, deadline_ns);
        self.wait_woken()
    }

    /// Blocks until any of `specs` holds, as [`PeHandle::block`].
    pub(crate) fn block_on_words(
        &self,
        specs: &[WaitSpec],
        deadline_ns: u64,
    ) -> Result<(), QueueError> {
        if self.threads.several() {
            return self
                .threads
                .block(self, Blocked::Memory, specs, deadline_ns);
        }
        self.world().block_on_words(self.pe, specs, deadline_ns);
        self.wait_woken()
    }

    /// Suspends a PE the world already marked blocked, until it is woken, whichever of its
    /// threads runs.
    pub(crate) fn wait_woken(&self) -> Result<(), QueueError> {
        self.suspend();
        self.world().take_wake(self.pe)
    }
}
