//! How a PE's threads take turns: who runs next, giving the PE away and getting it back, and
//! the PE's wait in the world while none of its threads can run.

use corosensei::CoroutineResult;
use hw::{QueueError, WaitSpec};

use super::{PeThreads, State, ThreadError, ThreadId, Unparked, Woke};
use crate::handle::PeHandle;
use crate::world::{Blocked, ThreadWait};

pub(super) fn park_on(
    h: &PeHandle,
    why: String,
    deadline_ns: Option<u64>,
) -> Result<Unparked, ThreadError> {
    let me = h.threads.current.get();
    h.threads.table.borrow_mut().threads[me as usize].state = State::Parked { why, deadline_ns };
    match h.threads.switch_away(h, me) {
        Woke::Again => Ok(Unparked::Woken),
        Woke::TimedOut => Ok(Unparked::TimedOut),
        Woke::Failed(err) => Err(err.into()),
    }
}

/// Ends thread `id` with `retval`: wakes its joiner and picks who runs next.
pub(super) fn finish(h: &PeHandle, id: ThreadId, retval: usize) {
    let joiner = {
        let mut table = h.threads.table.borrow_mut();
        let thread = &mut table.threads[id as usize];
        thread.state = State::Done;
        thread.retval = retval;
        thread.joiner
    };
    h.threads.live.set(h.threads.live.get() - 1);
    if let Some(joiner) = joiner {
        h.threads.unpark(joiner);
    }
    // The first thread may wait in `exit_current` for the last one.
    h.threads.unpark(0);
    let next = h.threads.pick(h);
    h.threads.handoff.set(Some(next));
}

/// Suspends nested thread `me` to thread 0's dispatcher, which runs the handed-over thread.
pub(super) fn suspend_nested(h: &PeHandle, me: ThreadId) {
    let yielder = h.threads.table.borrow().threads[me as usize].yielder;
    // SAFETY: set by the thread's coroutine when it started, and this runs on that coroutine
    // (only the current thread suspends itself), so the yielder on its stack is alive.
    unsafe { &*yielder }.suspend(());
}

impl PeThreads {
    pub(super) fn unpark(&self, id: ThreadId) {
        let mut table = self.table.borrow_mut();
        if let Some(thread) = table.threads.get_mut(id as usize)
            && matches!(thread.state, State::Parked { .. })
        {
            thread.state = State::Ready;
            thread.woke = Some(Woke::Again);
        }
    }

    /// Lets another ready thread run, if there is one (then true); the caller stays ready.
    pub(crate) fn preempt(&self, h: &PeHandle) -> bool {
        let me = self.current.get();
        let others_ready = {
            let mut table = self.table.borrow_mut();
            let any = table
                .threads
                .iter()
                .enumerate()
                .any(|(i, t)| i as ThreadId != me && matches!(t.state, State::Ready));
            if any {
                table.threads[me as usize].state = State::Ready;
            }
            any
        };
        if others_ready {
            self.switch_away(h, me);
        }
        others_ready
    }

    /// The calling thread `me` waits for the world's `what` (for memory, any of `specs`):
    /// what [`PeHandle::block`] does when the PE has several threads.
    pub(crate) fn block(
        &self,
        h: &PeHandle,
        what: Blocked,
        specs: &[WaitSpec],
        deadline_ns: u64,
    ) -> Result<(), QueueError> {
        let me = self.current.get();
        // Why only around memory waits: a thread waiting for a word may wait for another
        // thread's call; a quiet or a ticket only for the world.
        let depth = matches!(what, Blocked::Memory)
            .then(|| self.release_lock(me))
            .flatten();
        self.table.borrow_mut().threads[me as usize].state = State::World {
            what,
            specs: specs.to_vec(),
            deadline_ns,
        };
        let woke = self.switch_away(h, me);
        if let Some(depth) = depth {
            self.lock(h, depth).map_err(|err| match err {
                ThreadError::Wait(err) => err,
                other => QueueError::Lost(other.to_string()),
            })?;
        }
        match woke {
            Woke::Again | Woke::TimedOut => Ok(()),
            Woke::Failed(err) => Err(err),
        }
    }

    /// The calling thread `me`, no longer running (its state says why), gives the PE to the
    /// next thread; returns when `me` runs again, with what it was woken with.
    fn switch_away(&self, h: &PeHandle, me: ThreadId) -> Woke {
        let next = self.pick(h);
        if next != me {
            if me == 0 {
                self.dispatch(next);
            } else {
                self.handoff.set(Some(next));
                suspend_nested(h, me);
            }
        }
        self.table.borrow_mut().threads[me as usize]
            .woke
            .take()
            .unwrap_or(Woke::Again)
    }

    /// Thread 0 runs nested threads, starting with `first`, until one hands the PE back to it.
    fn dispatch(&self, first: ThreadId) {
        let mut target = first;
        while target != 0 {
            let taken = self.table.borrow_mut().threads[target as usize]
                .coroutine
                .take();
            let Some(mut coroutine) = taken else {
                unreachable!("thread {target} was picked without a coroutine")
            };
            let step = coroutine.resume(());
            let mut table = self.table.borrow_mut();
            let thread = &mut table.threads[target as usize];
            match step {
                CoroutineResult::Yield(()) => thread.coroutine = Some(coroutine),
                CoroutineResult::Return(()) => {
                    crate::stacks::give_back(thread.stack_bytes, coroutine.into_stack());
                }
            }
            drop(table);
            target = self
                .handoff
                .take()
                .expect("a thread suspended without naming the next one");
        }
        self.current.set(0);
    }

    /// The next thread to run, made current: a ready one drawn by the world's choice source,
    /// after waiting in the world for what the threads wait for while none is ready.
    fn pick(&self, h: &PeHandle) -> ThreadId {
        loop {
            let ready: Vec<ThreadId> = {
                let table = self.table.borrow();
                (0..table.threads.len() as ThreadId)
                    .filter(|&i| matches!(table.threads[i as usize].state, State::Ready))
                    .collect()
            };
            if !ready.is_empty() {
                let draw = h.world().next_thread(ready.len());
                let next = ready[draw];
                self.table.borrow_mut().threads[next as usize].state = State::Running;
                self.current.set(next);
                return next;
            }
            self.wait_in_world(h);
        }
    }

    /// Blocks the PE until what any of its threads waits for happens, then makes ready every
    /// thread that waited for the world, every timed thread whose deadline passed, and, if the
    /// wait failed (a deadlock, the end of the run), every waiting thread, with the failure.
    fn wait_in_world(&self, h: &PeHandle) {
        if self.words_changed(h) {
            return;
        }
        let now_ns = h.world().clock_ns(h.pe);
        let Some((waits, deadline_ns)) = self.waits(h, now_ns) else {
            // A thread passed its deadline: it is ready now.
            return;
        };
        h.world().block_threads(h.pe, waits, deadline_ns);
        let outcome = h.wait_woken();
        let now_ns = h.world().clock_ns(h.pe);
        let mut table = self.table.borrow_mut();
        for thread in &mut table.threads {
            let woke = match (&thread.state, &outcome) {
                (State::World { .. }, Ok(())) => Woke::Again,
                (State::Parked { deadline_ns, .. }, Ok(())) => match deadline_ns {
                    Some(deadline) if *deadline <= now_ns => Woke::TimedOut,
                    _ => continue,
                },
                (State::World { .. } | State::Parked { .. }, Err(err)) => Woke::Failed(err.clone()),
                _ => continue,
            };
            thread.state = State::Ready;
            thread.woke = Some(woke);
        }
    }

    /// Makes ready every thread waiting for words of memory of which one holds already, and
    /// says whether there was one. Why: a word may change while the PE runs another of its
    /// threads, and the world wakes only a blocked PE for a write, so the PE looks before it
    /// blocks (as a single thread's wait tests before it blocks).
    fn words_changed(&self, h: &PeHandle) -> bool {
        let mut w = h.world();
        w.observe(h.pe);
        let mut table = self.table.borrow_mut();
        let mut any = false;
        for thread in &mut table.threads {
            if let State::World {
                what: Blocked::Memory,
                specs,
                ..
            } = &thread.state
                && specs.iter().any(|spec| w.evaluate(h.pe, spec).is_some())
            {
                thread.state = State::Ready;
                thread.woke = Some(Woke::Again);
                any = true;
            }
        }
        any
    }

    /// What the PE's threads wait for, and the earliest deadline. A thread whose deadline
    /// passed is made ready instead, and then `None` is returned.
    fn waits(&self, h: &PeHandle, now_ns: u64) -> Option<(Vec<ThreadWait>, u64)> {
        let mut table = self.table.borrow_mut();
        let mut waits = Vec::new();
        let mut earliest = u64::MAX;
        let mut due = false;
        for (id, thread) in table.threads.iter_mut().enumerate() {
            let thread_id = id as ThreadId;
            match &thread.state {
                State::World {
                    what,
                    specs,
                    deadline_ns,
                } => {
                    if *deadline_ns <= now_ns {
                        let err = h.world().thread_deadline_error(h.pe, *what, specs);
                        thread.state = State::Ready;
                        thread.woke = Some(Woke::Failed(err));
                        due = true;
                        continue;
                    }
                    earliest = earliest.min(*deadline_ns);
                    waits.push(ThreadWait::World {
                        thread: thread_id,
                        what: *what,
                        specs: specs.clone(),
                    });
                }
                State::Parked { why, deadline_ns } => {
                    if let Some(deadline) = *deadline_ns {
                        if deadline <= now_ns {
                            thread.state = State::Ready;
                            thread.woke = Some(Woke::TimedOut);
                            due = true;
                            continue;
                        }
                        earliest = earliest.min(deadline);
                    }
                    waits.push(ThreadWait::Parked {
                        thread: thread_id,
                        why: why.clone(),
                        timed: deadline_ns.is_some(),
                    });
                }
                State::Running | State::Ready | State::Done => {}
            }
        }
        (!due).then_some((waits, earliest))
    }
}
