//! The waits a kernel thread suspends in.
//!
//! Each is a future that checks its condition when polled and, while it does not hold,
//! records in the thread's [`Park`] what it waits for and returns `Pending`. The executor
//! (`exec.rs`) reads the parks to know whom to poll again and, when every thread waits, what
//! the PE should block in; it then names that thread in `Launch::block_in`, and the thread's
//! wait calls the backend's blocking operation instead of checking once.

use std::future::poll_fn;
use std::task::Poll;

use hw::{Backend, Device, Queue, Ticket, WaitSpec};

use crate::error::ShmemError;
use crate::kernel::group::{Group, Shared};
use crate::kernel::launch::Launch;

/// What a thread is suspended in. Each park has a number of its own, so the executor can
/// tell a thread that moved on to another wait from one still in the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Park {
    /// Running, or suspended in something that is not a kernel wait.
    Running,
    /// Waiting for a ticket of a queue to complete: a get, which needs no other thread.
    Ticket {
        /// The park's number.
        park: u64,
    },
    /// Waiting for a word of this PE's memory, at byte `word` of its heap.
    Memory {
        /// The park's number.
        park: u64,
        /// The word's offset.
        word: u64,
    },
    /// Waiting for the other threads of its warp or block.
    Group {
        /// The park's number.
        park: u64,
    },
    /// Stepped aside so that the other threads run first (`KernelThread::yield_now`): ready
    /// again at the next check of the waiting threads.
    Yield {
        /// The park's number.
        park: u64,
    },
}

impl<B: Backend> Launch<'_, B> {
    /// Waits until `ticket` of `queue` has completed.
    ///
    /// # Errors
    /// [`ShmemError::Queue`] if the PE blocked in it and it did not complete within
    /// `RSHMEM_WAIT_TIMEOUT_MS`.
    pub(crate) async fn ticket(
        &self,
        thread: usize,
        queue: &B::Queue,
        ticket: Ticket,
    ) -> Result<(), ShmemError> {
        let park = self.next_park();
        let deadline = self.shmem.deadline();
        poll_fn(|_| {
            let done = if self.blocks_in(thread) {
                queue
                    .wait_ticket(ticket, deadline)
                    .map_err(ShmemError::from)
            } else if queue.is_complete(ticket) {
                Ok(())
            } else {
                self.parks[thread].set(Park::Ticket { park });
                return Poll::Pending;
            };
            self.parks[thread].set(Park::Running);
            Poll::Ready(done)
        })
        .await
    }

    /// Waits until `spec` holds on this PE's memory, and returns the word's value. Each check
    /// is the backend's `test` (a poll, with its cost in time and its consistency step).
    ///
    /// # Errors
    /// [`ShmemError::Queue`] if the PE blocked in it and nothing satisfied it within
    /// `RSHMEM_WAIT_TIMEOUT_MS`, or no PE could make progress.
    pub(crate) async fn memory(&self, thread: usize, spec: WaitSpec) -> Result<u64, ShmemError> {
        let park = self.next_park();
        let deadline = self.shmem.deadline();
        let device = self.shmem.device();
        poll_fn(|_| {
            let value = if self.blocks_in(thread) {
                device.wait_until(spec, deadline).map_err(ShmemError::from)
            } else if let Some(value) = device.test(spec) {
                Ok(value)
            } else {
                let word = spec.word.offset;
                self.parks[thread].set(Park::Memory { park, word });
                return Poll::Pending;
            };
            self.parks[thread].set(Park::Running);
            Poll::Ready(value)
        })
        .await
    }

    /// Waits until the call that `thread` arrived at in `generation` of `group` is over, and
    /// returns what the thread that performed it shared.
    pub(crate) async fn released(
        &self,
        thread: usize,
        group: &Group<B>,
        generation: u64,
    ) -> Shared<B> {
        let park = self.next_park();
        poll_fn(|_| match group.released_since(generation) {
            Some(shared) => {
                self.parks[thread].set(Park::Running);
                Poll::Ready(shared)
            }
            None => {
                self.parks[thread].set(Park::Group { park });
                Poll::Pending
            }
        })
        .await
    }

    /// Suspends `thread` once, until the executor next checks its waiting threads: the
    /// threads that are ready, and the waits that can move, go first.
    pub(crate) async fn yield_once(&self, thread: usize) {
        let park = self.next_park();
        let mut yielded = false;
        poll_fn(|_| {
            if yielded {
                self.parks[thread].set(Park::Running);
                return Poll::Ready(());
            }
            yielded = true;
            self.parks[thread].set(Park::Yield { park });
            Poll::Pending
        })
        .await;
    }

    /// Whether the executor asked `thread` to block the PE in its wait; the request is
    /// taken by the answer.
    fn blocks_in(&self, thread: usize) -> bool {
        let asked = self.block_in.get() == Some(thread);
        if asked {
            self.block_in.set(None);
        }
        asked
    }
}
