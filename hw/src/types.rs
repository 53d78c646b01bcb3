//! Plain value types shared by every backend.

use std::fmt;

/// A processing element: one GPU and the process or task that drives it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Pe(pub u32);

impl Pe {
    /// The index of this PE as a `usize`, for indexing per-PE tables.
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for Pe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PE {}", self.0)
    }
}

/// A point in time in nanoseconds, read from [`crate::Device::now`]: virtual time on the
/// simulator, a monotonic clock on real hardware.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Instant(pub u64);

/// A span of time in nanoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Duration(pub u64);

impl Instant {
    /// The instant `d` after this one, saturating at the end of time.
    pub fn after(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }

    /// The time from `earlier` to this instant, zero if `earlier` is later.
    pub fn since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    /// A duration of `s` seconds.
    pub fn from_secs(s: u64) -> Duration {
        Duration(s.saturating_mul(1_000_000_000))
    }
}

/// Which memory a symmetric segment lives in.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum MemKind {
    /// Host memory, pinned and registered with the NIC.
    Host,
    /// GPU memory.
    Device,
    /// The program's static data: the main executable's writable data segment (its globals
    /// and statics), which a backend that runs each PE as a process of its own shares with
    /// the peers ([`crate::Device::share_static_data`]). No backend creates it with
    /// [`crate::Device::create_segment`]; a PE has it once it shared it.
    Static,
}

impl MemKind {
    /// How many kinds there are: the length of a per-PE table indexed by [`MemKind::index`].
    pub const COUNT: usize = 3;

    /// Every kind, in [`MemKind::index`] order.
    pub const ALL: [MemKind; MemKind::COUNT] = [MemKind::Host, MemKind::Device, MemKind::Static];

    /// This kind's index in per-PE tables of segments (host 0, device 1, static 2): the one
    /// mapping every backend uses, so tables and trace records agree.
    pub const fn index(self) -> usize {
        match self {
            MemKind::Host => 0,
            MemKind::Device => 1,
            MemKind::Static => 2,
        }
    }
}

/// A completion ticket of one [`crate::Queue`]. Tickets of a queue increase monotonically
/// in issue order; a ticket is complete once the operation it names has completed.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Ticket(pub u64);

/// A byte range inside one of the calling PE's own segments.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct LocalRange {
    /// The segment.
    pub kind: MemKind,
    /// Offset from the start of the segment, in bytes.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
}

/// A byte range inside a peer's segment (the peer may be the calling PE itself).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct RemoteRange {
    /// The PE that owns the memory.
    pub pe: Pe,
    /// The segment.
    pub kind: MemKind,
    /// Offset from the start of the segment, in bytes.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
}

/// The exported description of a segment that a peer imports to reach it
/// (an opaque key: a CUDA IPC handle, an rkey and base address, or a simulator id).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct SegmentKey(pub Vec<u8>);

/// Who copies the bytes of a put on the issuing GPU.
///
/// A backend whose timing is real ignores it; a simulator paces the put by the mover's rate
/// (the simulator's copy curves, `docs/calibration.md`). Each group is a mover of its own:
/// two warps copy side by side, while the puts of one warp follow one another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Copier {
    /// The whole GPU on the PE's behalf: a put made from the PE's own program, which a GPU
    /// runs with as many threads as the data needs (NVSHMEM's `putmem` from many blocks).
    Device,
    /// One thread block of a kernel, by its index in the launch.
    Block(u32),
    /// One warp of a kernel, by its index in the launch.
    Warp(u32),
    /// One thread of a kernel, by its index in the launch.
    Thread(u32),
}
