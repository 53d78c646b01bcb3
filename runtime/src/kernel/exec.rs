//! The executor of a launch: it polls threads until each has returned, and decides what the
//! PE does when every thread waits.
//!
//! Threads are polled in order, all of them first, then those released from a meeting of
//! their warp or block. When none is ready, every unfinished thread waits: for a ticket (a
//! get), for a word of this PE's memory, or for the rest of its group. The executor checks
//! each ticket and memory wait once more, and if none has moved the PE waits in the backend:
//!
//! - for the oldest ticket, if a thread waits for one: a ticket completes without help from
//!   any other thread, so this never deadlocks, and the others are checked when it wakes;
//! - on the word, if every memory wait is on one word: the backend wakes the PE exactly when
//!   it changes;
//! - on several words the backend cannot wait at once, so the PE polls them in turn (each
//!   poll costs the backend's poll time) for up to [`SPIN_LIMIT_NS`], then blocks on the
//!   first waiting thread's word. A program in which that word is only written after
//!   another waiting thread moves on is then reported as a deadlock;
//! - if every thread waits for members of its group that will never arrive, the launch
//!   fails with [`KernelError::NeverArrived`], naming them.

use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use hw::Backend;

use crate::error::ShmemError;
use crate::kernel::error::KernelError;
use crate::kernel::launch::Launch;
use crate::kernel::park::Park;

/// How long the PE polls several words, in its clock, before it blocks on one of them.
pub(crate) const SPIN_LIMIT_NS: u64 = 100_000;

/// Runs every thread's future to its end, and returns their values in thread order.
///
/// # Errors
/// As [`crate::Shmem::launch_kernel`].
pub(crate) fn drive<B, R, Fut>(
    launch: &Launch<'_, B>,
    futures: Vec<Pin<Box<Fut>>>,
) -> Result<Vec<R>, ShmemError>
where
    B: Backend,
    Fut: Future<Output = Result<R, ShmemError>>,
{
    let mut threads = Threads {
        results: futures.iter().map(|_| None).collect(),
        futures: futures.into_iter().map(Some).collect(),
        finished: 0,
        waiting: Vec::new(),
    };
    let mut spin_since_ns = None;
    loop {
        while let Some(thread) = launch.next_ready() {
            threads.poll(launch, thread)?;
        }
        if threads.finished == threads.futures.len() {
            break;
        }
        if threads.recheck(launch)? {
            spin_since_ns = None;
            continue;
        }
        match stall(launch, &threads.waiting, &mut spin_since_ns) {
            Stall::BlockIn(thread) => {
                threads.waiting.retain(|&t| t != thread);
                launch.block_in.set(Some(thread));
                let polled = threads.poll(launch, thread);
                launch.block_in.set(None);
                polled?;
                spin_since_ns = None;
            }
            Stall::Spin => {}
            Stall::Stuck => return Err(never_arrived(launch, &threads.futures).into()),
        }
    }
    Ok(threads
        .results
        .into_iter()
        .map(|value| value.expect("every thread has returned"))
        .collect())
}

/// The threads' futures, their values once they return, and who waits on a ticket or word.
struct Threads<R, Fut> {
    futures: Vec<Option<Pin<Box<Fut>>>>,
    results: Vec<Option<R>>,
    finished: usize,
    /// Threads parked on a ticket or a word, which only a new check can move on; each once.
    waiting: Vec<usize>,
}

impl<R, Fut: Future<Output = Result<R, ShmemError>>> Threads<R, Fut> {
    /// Polls `thread`, which is not in `waiting`, once: it runs until it returns or suspends
    /// in its next wait.
    fn poll<B: Backend>(
        &mut self,
        launch: &Launch<'_, B>,
        thread: usize,
    ) -> Result<(), ShmemError> {
        let Some(future) = self.futures[thread].as_mut() else {
            return Ok(());
        };
        launch.note(hw::KernelEvent::Run {
            thread: u32::try_from(thread).expect("a launch has at most 2^20 threads"),
        });
        let mut cx = Context::from_waker(Waker::noop());
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(Ok(value)) => {
                self.results[thread] = Some(value);
                self.futures[thread] = None;
                self.finished += 1;
            }
            Poll::Ready(Err(source)) => {
                let (block, thread) = launch.ids(thread);
                return Err(KernelError::Thread {
                    block,
                    thread,
                    source: Box::new(source),
                }
                .into());
            }
            Poll::Pending => match launch.parks[thread].get() {
                Park::Running => {
                    let (block, thread) = launch.ids(thread);
                    return Err(KernelError::ForeignAwait { block, thread }.into());
                }
                Park::Ticket { .. } | Park::Memory { .. } | Park::Yield { .. } => {
                    self.waiting.push(thread);
                }
                // Its group wakes it (`Launch::wake`).
                Park::Group { .. } => {}
            },
        }
        Ok(())
    }

    /// Checks every waiting thread once more; returns whether any moved on. A thread that
    /// yielded and yields again has not moved: else a spin loop with a back-off would keep
    /// the PE from ever blocking in the wait that the loop waits for.
    fn recheck<B: Backend>(&mut self, launch: &Launch<'_, B>) -> Result<bool, ShmemError> {
        let mut moved = false;
        for thread in std::mem::take(&mut self.waiting) {
            let before = launch.parks[thread].get();
            self.poll(launch, thread)?;
            let after = launch.parks[thread].get();
            let yields_again =
                matches!(before, Park::Yield { .. }) && matches!(after, Park::Yield { .. });
            moved |= self.futures[thread].is_none() || (after != before && !yields_again);
        }
        Ok(moved)
    }
}

/// What the PE does when no thread can move.
#[derive(Debug, PartialEq, Eq)]
enum Stall {
    /// Block in this thread's wait.
    BlockIn(usize),
    /// Check the waiting threads again (each check of a word is a poll that takes time).
    Spin,
    /// Nothing can ever move.
    Stuck,
}

fn stall<B: Backend>(
    launch: &Launch<'_, B>,
    waiting: &[usize],
    spin_since_ns: &mut Option<u64>,
) -> Stall {
    let parks = || {
        waiting
            .iter()
            .map(|&thread| (thread, launch.parks[thread].get()))
    };
    let oldest_ticket = parks()
        .filter_map(|(thread, park)| match park {
            Park::Ticket { park } => Some((park, thread)),
            _ => None,
        })
        .min();
    if let Some((_, thread)) = oldest_ticket {
        return Stall::BlockIn(thread);
    }
    let words = || {
        parks().filter_map(|(thread, park)| match park {
            Park::Memory { word, .. } => Some((thread, word)),
            _ => None,
        })
    };
    // The lowest-numbered waiting thread: `waiting` is in no particular order.
    let Some((first, word)) = words().min() else {
        // A thread that yielded runs again at the next check; only then is nothing movable.
        let yielded = parks().any(|(_, park)| matches!(park, Park::Yield { .. }));
        return if yielded { Stall::Spin } else { Stall::Stuck };
    };
    if words().all(|(_, other)| other == word) {
        return Stall::BlockIn(first);
    }
    let now_ns = launch.shmem.now_ns();
    let since_ns = *spin_since_ns.get_or_insert(now_ns);
    if now_ns.saturating_sub(since_ns) >= SPIN_LIMIT_NS {
        Stall::BlockIn(first)
    } else {
        Stall::Spin
    }
}

/// The report of a launch in which every unfinished thread waits in a warp or block call.
fn never_arrived<B: Backend, T>(launch: &Launch<'_, B>, futures: &[Option<T>]) -> KernelError {
    /// Missing threads named one by one; the rest are counted.
    const NAMED: usize = 3;
    for group in launch.groups() {
        let Some((call, arrived)) = group.pending() else {
            continue;
        };
        let first = group.members.start;
        let missing: Vec<usize> = group
            .members
            .clone()
            .filter(|&thread| !group.has_parked(thread))
            .collect();
        let mut named: Vec<String> = missing
            .iter()
            .take(NAMED)
            .map(|&thread| {
                let (_, index) = launch.ids(thread);
                if futures[thread].is_none() {
                    return format!("thread {index} returned");
                }
                match launch.groups().find(|g| g.has_parked(thread)) {
                    Some(other) => format!(
                        "thread {index} waits at {} of {}",
                        other.pending().map_or_else(String::new, |(call, _)| call),
                        launch.group_name(thread, other.scope)
                    ),
                    None => format!("thread {index} is elsewhere"),
                }
            })
            .collect();
        if missing.len() > NAMED {
            named.push(format!("{} more are missing", missing.len() - NAMED));
        }
        return KernelError::NeverArrived {
            group: launch.group_name(first, group.scope),
            scope: group.scope.name(),
            call,
            arrived,
            size: group.size(),
            missing: named.join(", "),
        };
    }
    unreachable!("a launch is stuck only when every unfinished thread waits in a group")
}
