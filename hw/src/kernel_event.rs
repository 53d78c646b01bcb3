//! What the runtime's kernel model tells a race detector wrapped around a backend about the
//! threads of a launch ([`crate::Device::note_kernel_event`]), and what a PE's program tells
//! it about the threads it starts ([`crate::Device::note_host_thread_event`]).
//!
//! Why in the contract: the detector is a decorator over any backend, and a program may reach
//! it through [`crate::any::AnyBackend`]; a device method is the one path that crosses every
//! wrapper. Backends ignore these events.

use crate::MemKind;

/// One event of a kernel launch on the PE of the device that is told.
///
/// Threads are numbered by their rank in the launch: block rank times block size plus the
/// thread's rank in its block (`x` fastest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelEvent<'a> {
    /// A launch of the kernel `name` (for reports) starts: `grid` blocks of `block` threads.
    Launch {
        /// The kernel's name.
        name: &'a str,
        /// Blocks in x, y and z.
        grid: [u32; 3],
        /// Threads of a block in x, y and z.
        block: [u32; 3],
    },
    /// Thread `thread` runs: what the device sees until the next `Run` or `End` is its.
    Run {
        /// The thread's rank in the launch.
        thread: u32,
    },
    /// The threads `first..end` (a warp, or a whole block) met: what each did before the
    /// meeting is ordered before what each does after it (`__syncwarp`, `__syncthreads`,
    /// and the start and end of a warp or block call).
    Meet {
        /// The first thread of the group.
        first: u32,
        /// One past its last thread.
        end: u32,
    },
    /// The running thread accessed `len_bytes` bytes of this PE's memory at `at`.
    Access {
        /// Which memory `at` is in.
        memory: KernelMemory,
        /// The offset in symmetric or shared memory, the address in global memory.
        at: u64,
        /// How many bytes.
        len_bytes: u64,
        /// How.
        access: ThreadAccess,
    },
    /// The launch ended: every thread has returned, or the launch failed.
    End,
}

/// The memory a kernel thread's access is in (or a host thread's: [`HostThreadEvent`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KernelMemory {
    /// The PE's symmetric memory of this kind; the access's `at` is an offset in it.
    Symmetric(MemKind),
    /// The `__shared__` memory of the running thread's block; `at` is an offset in it.
    Shared,
    /// Global memory that is not symmetric (`cudaMalloc`; for a host thread, any memory of the
    /// process that is not symmetric); `at` is its address.
    Global,
}

/// How a kernel thread accessed memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ThreadAccess {
    /// A plain load.
    Read,
    /// A plain store.
    Write,
    /// A volatile load: it synchronises like an atomic load (CUDA's spin on a flag).
    VolatileRead,
    /// A volatile store: it synchronises like an atomic store.
    VolatileWrite,
    /// An atomic read-modify-write; `fetch` when the thread used the old value.
    Atomic {
        /// Whether the old value was returned to the thread.
        fetch: bool,
    },
}

/// One event of the threads a PE's program started (`pthread_create` on the simulator), told
/// by the program's side of the PE. Thread 0 is the PE's first thread; the others are numbered
/// as they start. Each event names the thread it is of, as the program's side knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostThreadEvent {
    /// `parent` started `child`: what `parent` did before is ordered before all `child` does.
    Start {
        /// The thread that started it.
        parent: u32,
        /// The new thread.
        child: u32,
    },
    /// `thread` released what it did so far into `object` (a mutex unlocked, a barrier
    /// reached, the thread's end): a thread that acquires `object` later is ordered after it.
    Release {
        /// The releasing thread.
        thread: u32,
        /// What it released into.
        object: SyncObject,
    },
    /// `thread` acquired what every release into `object` so far released (a mutex locked, a
    /// barrier left, a thread joined).
    Acquire {
        /// The acquiring thread.
        thread: u32,
        /// What it acquired from.
        object: SyncObject,
    },
    /// `thread` accessed `len_bytes` bytes of this PE's memory at `at`: symmetric memory by
    /// offset, any other memory ([`KernelMemory::Global`]) by address. A host thread's
    /// volatile access is a plain one (C gives `volatile` no ordering); an atomic load is a
    /// [`ThreadAccess::VolatileRead`], an atomic store a [`ThreadAccess::VolatileWrite`].
    Access {
        /// The accessing thread.
        thread: u32,
        /// Which memory `at` is in.
        memory: KernelMemory,
        /// The offset in symmetric memory, else the address.
        at: u64,
        /// How many bytes.
        len_bytes: u64,
        /// How.
        access: ThreadAccess,
    },
}

/// What a host thread's synchronisation releases into and acquires from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SyncObject {
    /// A mutex, barrier or other object of the program, by its address.
    Address(u64),
    /// The end of a thread, which its join acquires.
    ThreadEnd(u32),
    /// The PE's lock around SHMEM calls, which every call of a thread takes.
    CallLock,
}
