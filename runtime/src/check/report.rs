//! What the detector reports: a pair of conflicting accesses that nothing orders.

use std::fmt;

/// The kind of a recorded access to symmetric memory.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum AccessKind {
    /// A put (blocking or not), `p` included.
    Put,
    /// A get read at the source (blocking, `g`, or the read side of `get_nbi`).
    Get,
    /// The bytes a non-blocking get writes into the issuer's own memory.
    GetNbiLanding,
    /// An atomic that writes (with or without fetching the old value).
    AtomicUpdate,
    /// An atomic fetch that does not write.
    AtomicFetch,
    /// The data of a put-with-signal.
    PutSignalData,
    /// The signal update of a put-with-signal (an atomic).
    SignalUpdate,
    /// A plain load of the PE's own memory (`local`, `signal_fetch`).
    LocalRead,
    /// The source of an on-stream put, read in the PE's own memory while the put is in
    /// flight.
    PutSource,
    /// A plain store to the PE's own memory (`set_local`, `calloc`'s zeroing).
    LocalWrite,
    /// A kernel thread's volatile load (races between threads only).
    VolatileRead,
    /// A kernel thread's volatile store (races between threads only).
    VolatileWrite,
    /// A kernel thread's atomic on this PE's memory (races between threads only).
    ThreadAtomic,
}

impl AccessKind {
    /// Whether the access changes memory.
    pub fn writes(self) -> bool {
        !matches!(
            self,
            AccessKind::Get
                | AccessKind::AtomicFetch
                | AccessKind::LocalRead
                | AccessKind::PutSource
                | AccessKind::VolatileRead
        )
    }

    /// Whether the access is an atomic: two atomics never race (rule R6).
    pub fn is_atomic(self) -> bool {
        matches!(
            self,
            AccessKind::AtomicUpdate
                | AccessKind::AtomicFetch
                | AccessKind::SignalUpdate
                | AccessKind::VolatileRead
                | AccessKind::VolatileWrite
                | AccessKind::ThreadAtomic
        )
    }

    /// The name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            AccessKind::Put => "put",
            AccessKind::Get => "get",
            AccessKind::GetNbiLanding => "get_nbi landing",
            AccessKind::AtomicUpdate => "atomic update",
            AccessKind::AtomicFetch => "atomic fetch",
            AccessKind::PutSignalData => "put_signal data",
            AccessKind::SignalUpdate => "signal update",
            AccessKind::LocalRead => "local read",
            AccessKind::PutSource => "on-stream put source",
            AccessKind::LocalWrite => "local write",
            AccessKind::VolatileRead => "volatile read",
            AccessKind::VolatileWrite => "volatile write",
            AccessKind::ThreadAtomic => "thread atomic",
        }
    }
}

impl fmt::Display for AccessKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One side of a race: which PE accessed which bytes of whose memory, and how.
///
/// Two races with equal accesses are the same race (the same operation sites), whatever the
/// epochs or the seed that showed them.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct RaceAccess {
    /// The PE that issued the access.
    pub pe: u32,
    /// What it did.
    pub kind: AccessKind,
    /// The PE whose symmetric memory was accessed.
    pub target: u32,
    /// Which of its memories: a heap or the program's static data.
    pub memory: hw::MemKind,
    /// The first byte of the whole operation, as an offset in that memory.
    pub offset: u64,
    /// The length of the whole operation in bytes.
    pub len_bytes: u64,
    /// The thread that made the access, for races between the threads of a kernel launch or
    /// of a PE's program.
    pub thread: Option<ThreadAt>,
}

/// The thread that made an access, for races between threads of one PE.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum ThreadAt {
    /// A thread of a kernel launch: its block in the grid and its index in the block.
    Kernel {
        /// `blockIdx` (x, y, z).
        block: [u32; 3],
        /// `threadIdx` (x, y, z).
        thread: [u32; 3],
    },
    /// A thread the PE's program started (0: its first thread, which runs `main`).
    Host {
        /// The thread's number in its PE, in the order the threads started.
        thread: u32,
    },
}

impl fmt::Display for ThreadAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ThreadAt::Kernel { block, thread } => {
                let [bx, by, bz] = block;
                let [tx, ty, tz] = thread;
                write!(f, "block ({bx},{by},{bz}) thread ({tx},{ty},{tz})")
            }
            ThreadAt::Host { thread: 0 } => f.write_str("thread 0 (main)"),
            ThreadAt::Host { thread } => write!(f, "thread {thread}"),
        }
    }
}

/// Why the first access of a race is not ordered before the second.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum RaceCause {
    /// No rule orders them (docs/ordering.md).
    Unordered,
    /// The first is a write that crossed InfiniBand to PE `target`. It is ordered before the
    /// second, but no consistency step of `target` (its wait, test, quiet or barrier) made it
    /// visible before the second, which reads or writes that memory other than through a NIC
    /// (rule R8).
    InfinibandVisibility {
        /// The PE whose memory the write landed in.
        target: u32,
    },
    /// Two threads of one kernel launch on one PE, with no meeting of their warp or block,
    /// atomic or volatile access ordering the first before the second.
    KernelThreads {
        /// The kernel's name.
        kernel: String,
        /// Which memory: symmetric (then [`RaceAccess::memory`] says which), the block's
        /// `__shared__` memory (offsets in it) or global memory (addresses).
        memory: hw::KernelMemory,
    },
    /// Two threads a PE's program started, with no start, join, mutex, barrier or atomic
    /// ordering the first before the second.
    HostThreads {
        /// Which memory: symmetric (then [`RaceAccess::memory`] says which) or the process's
        /// other memory (addresses, as [`hw::KernelMemory::Global`]).
        memory: hw::KernelMemory,
    },
}

impl fmt::Display for RaceCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RaceCause::Unordered => {
                f.write_str("no ordering rule puts the first before the second")
            }
            RaceCause::InfinibandVisibility { target } => write!(
                f,
                "the first crossed InfiniBand and no consistency step of PE {target} (its wait, \
                 test, quiet or barrier) made it visible before the second; with InfiniBand, \
                 synchronisation guarantees visibility only of a PE's own objects (R8)"
            ),
            RaceCause::KernelThreads { kernel, memory } => {
                let memory = match memory {
                    hw::KernelMemory::Symmetric(_) => "symmetric memory",
                    hw::KernelMemory::Shared => "__shared__ memory",
                    hw::KernelMemory::Global => "global memory",
                };
                write!(
                    f,
                    "two threads of kernel {kernel} access {memory} with no __syncthreads, \
                     __syncwarp, atomic or volatile access between them"
                )
            }
            RaceCause::HostThreads { memory } => {
                let memory = match memory {
                    hw::KernelMemory::Symmetric(_) => "symmetric memory",
                    hw::KernelMemory::Shared | hw::KernelMemory::Global => "memory",
                };
                write!(
                    f,
                    "two threads of the PE's program access {memory} with no pthread_create, \
                     pthread_join, mutex, barrier or atomic between them"
                )
            }
        }
    }
}

impl fmt::Display for RaceAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "PE {}: {} of {} B at offset {:#x}",
            self.pe, self.kind, self.len_bytes, self.offset
        )?;
        if self.target != self.pe {
            write!(f, " of PE {}", self.target)?;
        }
        if let Some(thread) = self.thread {
            write!(f, " by {thread}")?;
        }
        Ok(())
    }
}

/// A data race on symmetric memory: two accesses by different PEs to overlapping bytes, at
/// least one a write, not both atomics, and no rule orders the first before the second.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Race {
    /// The access issued first.
    pub first: RaceAccess,
    /// The access issued second, which the first is not ordered before.
    pub second: RaceAccess,
    /// The first byte both touch, as a symmetric offset.
    pub conflict_offset: u64,
    /// The first access's epoch: its issuer's count of accesses up to and including it.
    pub first_epoch: u64,
    /// The second access's epoch.
    pub second_epoch: u64,
    /// Why the first is not ordered before the second.
    pub cause: RaceCause,
}

impl Race {
    /// The operation sites: equal for reports of the same race from different runs.
    pub fn site(&self) -> (RaceAccess, RaceAccess) {
        (self.first, self.second)
    }
}

impl fmt::Display for Race {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "race on PE {}'s byte {:#x}: {} (epoch {}), then {} (epoch {}): {}",
            self.first.target,
            self.conflict_offset,
            self.first,
            self.first_epoch,
            self.second,
            self.second_epoch,
            self.cause
        )
    }
}
