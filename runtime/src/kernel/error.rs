//! The errors of kernel launches. Each message names the problem and the fix.

use crate::error::ShmemError;
use crate::kernel::dims::Dim3;

/// A kernel could not be launched or did not finish.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// A grid or block size cannot be launched.
    #[error("cannot launch a {what} of {dims}: {reason}")]
    InvalidDims {
        /// "grid" or "block".
        what: &'static str,
        /// The size asked for.
        dims: Dim3,
        /// What is wrong and how to fix it.
        reason: &'static str,
    },
    /// Threads of one warp or block made different calls where they met.
    #[error(
        "the threads of {group} made different {scope}-scoped calls: thread {first_thread} \
         called {first}, thread {thread} called {call}; every thread of a {scope} must make \
         the same {scope}-scoped calls in the same order with the same arguments"
    )]
    CallMismatch {
        /// The warp or block.
        group: String,
        /// "warp" or "block".
        scope: &'static str,
        /// The thread that arrived first.
        first_thread: Dim3,
        /// Its call.
        first: String,
        /// A thread whose call differs.
        thread: Dim3,
        /// That thread's call.
        call: String,
    },
    /// Some threads of a warp or block wait at a scoped call that others never reach.
    #[error(
        "{group} can never finish {call}: {arrived} of {size} threads wait there, but \
         {missing}; every thread of a {scope} must reach each of its {scope}-scoped calls \
         (do not return early or branch around them)"
    )]
    NeverArrived {
        /// The warp or block.
        group: String,
        /// "warp" or "block".
        scope: &'static str,
        /// The call the threads wait at.
        call: String,
        /// How many threads wait there.
        arrived: u32,
        /// How many threads the group has.
        size: u32,
        /// Where the missing threads are.
        missing: String,
    },
    /// Collectives over every PE were called from two groups of one launch.
    #[error(
        "collectives over every PE were called from {first} and from {second} of one launch; \
         call them from one group per PE (one block, as NVSHMEM's _block collectives ask), \
         in the same order on every PE"
    )]
    WorldCollectiveGroups {
        /// The group that called one first.
        first: String,
        /// The other group.
        second: String,
    },
    /// A context created in a kernel was destroyed while handles to it were still held.
    #[error(
        "ctx_destroy: {holders} other handle(s) to the context are still held; every thread \
         of the group must pass its handle to ctx_destroy and keep no clone"
    )]
    ContextInUse {
        /// How many handles besides the one destroyed.
        holders: usize,
    },
    /// The operation of a warp or block call failed in the thread that made it for the group.
    #[error(
        "{call} of {group} failed in thread {performer}, which made it for the group: {message}"
    )]
    GroupCallFailed {
        /// The warp or block.
        group: String,
        /// The call.
        call: String,
        /// The thread that made it (the last to arrive); it returned the error itself.
        performer: Dim3,
        /// Its error.
        message: String,
    },
    /// A thread awaited something other than a kernel operation, which nothing would resume.
    #[error(
        "thread {thread} of block {block} awaited a future that is not a kernel operation; a \
         kernel thread may only await the calls of KernelThread and Scoped"
    )]
    ForeignAwait {
        /// The block.
        block: Dim3,
        /// The thread.
        thread: Dim3,
    },
    /// A thread's call failed; the launch stopped there.
    #[error("thread {thread} of block {block} failed: {source}")]
    Thread {
        /// The block.
        block: Dim3,
        /// The thread.
        thread: Dim3,
        /// Why.
        source: Box<ShmemError>,
    },
}
