//! The errors of the SHMEM API. Each message names the problem and the fix.

use hw::MemKind;

use crate::config::{ConfigError, DEFAULT_HEAP_VAR, format_size, heap_size_var};

/// An operation of the SHMEM API could not be done.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShmemError {
    /// A PE argument is not a PE of this run.
    #[error("PE {pe} does not exist: this run has {n_pes} PEs; pass a PE below n_pes()")]
    PeOutOfRange {
        /// The PE asked for.
        pe: u32,
        /// The number of PEs of the run.
        n_pes: u32,
    },
    /// An address is not inside any live allocation of the symmetric heap.
    #[error(
        "symmetric address {offset:#x} is not in any live allocation of the symmetric heap; \
         use a Sym returned by malloc/calloc/align (or a view of one)"
    )]
    NotInHeap {
        /// The byte offset into the heap.
        offset: u64,
    },
    /// A pointer that lies in no symmetric memory this process holds.
    #[error(
        "address {addr:#x} is not symmetric: it lies neither in this PE's symmetric heap nor \
         in the program's static data; allocate the object with shmem_malloc, or make it a \
         global or static variable of the program"
    )]
    NotSymmetric {
        /// The address in this process.
        addr: u64,
    },
    /// An access starts inside an allocation but runs past its end.
    #[error(
        "access to bytes {offset:#x}..{:#x} runs outside its allocation {alloc_offset:#x}..{:#x}; \
         keep each access inside one allocation (Sym::slice checks this)",
        offset.saturating_add(*len_bytes),
        alloc_offset.saturating_add(*alloc_len_bytes)
    )]
    OutsideAllocation {
        /// The byte offset of the access.
        offset: u64,
        /// The length of the access.
        len_bytes: u64,
        /// Where the allocation starts.
        alloc_offset: u64,
        /// The allocation's length.
        alloc_len_bytes: u64,
    },
    /// A typed access is not naturally aligned.
    #[error(
        "symmetric address {offset:#x} is not aligned to {align} bytes as its element type needs; \
         use an offset that is a multiple of {align}, or the *_bytes operations"
    )]
    Misaligned {
        /// The byte offset of the access.
        offset: u64,
        /// The alignment the element type needs, in bytes.
        align: u64,
    },
    /// An alignment argument is not a power of two.
    #[error("alignment {align} is not a power of two; pass 8, 16, 64, 4096, ...")]
    InvalidAlignment {
        /// The alignment asked for, in bytes.
        align: u64,
    },
    /// A symmetric heap has no free block large enough.
    #[error(
        "{} exhausted: asked for {requested_bytes} bytes ({}), but {} of its {heap_bytes} \
         bytes ({}) are in use and only {free_bytes} are free (possibly fragmented); raise its \
         limit, e.g. set {}={}",
        heap_name(*kind),
        format_size(*requested_bytes),
        heap_bytes.saturating_sub(*free_bytes),
        format_size(*heap_bytes),
        heap_size_var(*kind),
        format_size(suggested_heap_bytes(*heap_bytes, *requested_bytes))
    )]
    HeapExhausted {
        /// The heap.
        kind: MemKind,
        /// How much was asked for, in bytes.
        requested_bytes: u64,
        /// How much of the heap is free in total, in bytes.
        free_bytes: u64,
        /// The size of the heap, in bytes.
        heap_bytes: u64,
    },
    /// The device would not provide a symmetric heap's memory.
    #[error(
        "cannot create the {} of {} bytes: {source}; set {} to a size the device grants, \
         or to 0 for no {}",
        heap_name(*kind),
        format_size(*heap_bytes),
        heap_size_var(*kind),
        heap_name(*kind)
    )]
    HeapSegment {
        /// The heap.
        kind: MemKind,
        /// The heap size asked for, in bytes.
        heap_bytes: u64,
        /// Why the device refused.
        source: hw::DeviceError,
    },
    /// The device would not back more of a growing heap's memory.
    #[error(
        "cannot back the first {} of the {} (it grows as allocations need it, up to {}): \
         {source}; free memory on the device, or set {} lower so that allocations fail \
         before the device runs out",
        format_size(*backed_bytes),
        heap_name(*kind),
        heap_size_var(*kind),
        heap_size_var(*kind)
    )]
    HeapGrowth {
        /// The heap.
        kind: MemKind,
        /// The bytes from the heap's start that needed memory.
        backed_bytes: u64,
        /// Why the device refused.
        source: hw::DeviceError,
    },
    /// A program's buffer could not be taken into the device heap.
    #[error("cannot register the {len_bytes}-byte buffer as symmetric memory: {reason}")]
    BufferRegistration {
        /// The buffer's length.
        len_bytes: u64,
        /// Why.
        reason: String,
    },
    /// PEs called a collective operation with different arguments.
    #[error(
        "{what} differ between PEs: {values}; every PE must make the same collective calls \
         with the same arguments"
    )]
    CollectiveMismatch {
        /// What differs ("malloc arguments", ...).
        what: &'static str,
        /// Which PEs passed what.
        values: String,
    },
    /// A handle refers to an allocation that was freed.
    #[error(
        "symmetric address {offset:#x} belongs to an allocation that was freed; \
         do not use a Sym after free"
    )]
    FreedAllocation {
        /// The byte offset of the handle.
        offset: u64,
    },
    /// `free` was given a view that does not start where its allocation starts.
    #[error(
        "free needs the Sym that malloc returned, but {offset:#x} is inside the allocation \
         starting at {alloc_offset:#x}; free the whole allocation"
    )]
    NotAllocationStart {
        /// The byte offset passed to free.
        offset: u64,
        /// Where its allocation starts.
        alloc_offset: u64,
    },
    /// A view asked for elements outside the view it was made from.
    #[error(
        "elements {start}..{end} are outside a symmetric view of {len} elements; \
         ask for a range within 0..{len}"
    )]
    OutOfBounds {
        /// The first element asked for.
        start: usize,
        /// One past the last element asked for.
        end: usize,
        /// The length of the view.
        len: usize,
    },
    /// A local buffer and a symmetric view have different lengths.
    #[error(
        "the symmetric view has {expected} elements but the other side has {actual}; \
         pass buffers of equal length (Sym::slice makes a shorter view)"
    )]
    LengthMismatch {
        /// The number of elements of the symmetric view.
        expected: usize,
        /// The number of elements of the other side.
        actual: usize,
    },
    /// A PE number is not a PE of the team (or context's team) it is counted in.
    #[error("PE {pe} is not in {team}, which has {n_pes} PEs; pass a PE below the team's n_pes()")]
    PeNotInTeam {
        /// The PE asked for, in the team's numbering.
        pe: u32,
        /// The team.
        team: &'static str,
        /// The team's size.
        n_pes: u32,
    },
    /// A team was used after `team_destroy`.
    #[error("{team} was destroyed; make a new team with team_split_strided or team_split_2d")]
    TeamDestroyed {
        /// The team.
        team: &'static str,
    },
    /// A split asks for a team that cannot exist.
    #[error("invalid team split: {reason}")]
    InvalidTeamSplit {
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// No team slot is free on every member of a new team.
    #[error(
        "no team slot is free on every member of the new team (RSHMEM_TEAMS_MAX={max}); destroy \
         teams no longer used, or raise RSHMEM_TEAMS_MAX (at most 64)"
    )]
    TeamsExhausted {
        /// The number of slots.
        max: u32,
    },
    /// A predefined team cannot be destroyed.
    #[error("{op} refuses {team}: the predefined teams live from init to finalize")]
    PredefinedTeam {
        /// The team.
        team: &'static str,
        /// The call.
        op: &'static str,
    },
    /// A team has as many contexts as its configuration allows.
    #[error(
        "{team} already has {max} contexts; destroy one with ctx_destroy, or ask for more \
         (TeamConfig::num_contexts, or RSHMEM_CONTEXTS_MAX for the predefined teams)"
    )]
    ContextsExhausted {
        /// The team.
        team: &'static str,
        /// Its limit.
        max: u32,
    },
    /// A store on a context created with NOSTORE.
    #[error("{op} on a context created with NOSTORE; use a context without NOSTORE for stores")]
    StoreOnNostoreContext {
        /// The operation.
        op: &'static str,
    },
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A blocking operation did not complete (deadline passed, deadlock, or a lost queue).
    #[error(transparent)]
    Queue(#[from] hw::QueueError),
    /// The device could not provide what was asked (memory, queues) or was lost.
    #[error(transparent)]
    Device(#[from] hw::DeviceError),
    /// A call or setting asks for a heap that this run does not have (its size is 0).
    #[error(
        "{wanted_by} asks for the {}, which does not exist in this run; set {} to its size, \
         e.g. {}=1g",
        heap_name(*kind),
        heap_size_var(*kind),
        heap_size_var(*kind)
    )]
    NoSuchHeap {
        /// The heap asked for.
        kind: MemKind,
        /// What asked for it: "malloc_with_hints(DEVICE_HEAP)",
        /// "SHMEM_SYMMETRIC_HEAP_DEFAULT=HOST", ...
        wanted_by: String,
    },
    /// `malloc_with_hints` was given both heap hints.
    #[error(
        "malloc_with_hints got both HOST_HEAP and DEVICE_HEAP; pass one of them, or neither \
         for the default heap ({DEFAULT_HEAP_VAR})"
    )]
    ConflictingHeapHints,
    /// PEs were started with different heap settings.
    #[error(
        "the symmetric heap settings differ between PEs: {values}; give every PE the same \
         SHMEM_DEVICE_SYMMETRIC_SIZE, SHMEM_SYMMETRIC_SIZE and SHMEM_SYMMETRIC_HEAP_DEFAULT"
    )]
    HeapSettingsDiffer {
        /// Which PEs have which settings.
        values: String,
    },
    /// A collective call was refused on other members of the team, so no member ran it.
    #[error(
        "{op} was refused on team {pes} because of their arguments (each says why); fix the \
         arguments there and call it again on every member"
    )]
    CollectiveFailedOnPeer {
        /// The collective.
        op: &'static str,
        /// The team PEs that refused it ("PEs 1, 3").
        pes: String,
    },
    /// A buffer of a collective call is too short for what the call moves into or out of it.
    #[error(
        "{op}: {buffer} has {len} elements but the call needs {needed}; pass a longer view \
         (Sym::slice) or allocate more"
    )]
    CollectiveBufferTooSmall {
        /// The collective.
        op: &'static str,
        /// Which buffer: "dest" or "source".
        buffer: &'static str,
        /// Its length in elements.
        len: usize,
        /// The elements the call needs.
        needed: u64,
    },
    /// source and dest of a collective overlap where the collective forbids it.
    #[error("{op}: source and dest overlap; pass separate arrays{allowed}")]
    CollectiveOverlap {
        /// The collective.
        op: &'static str,
        /// What overlap the collective does allow, if any, as the end of the message.
        allowed: &'static str,
    },
    /// A collective's source does not split into one equal block per team PE.
    #[error(
        "{op}: source has {len} elements, which do not split into {n_pes} equal blocks (one per \
         team PE); pass a multiple of {n_pes} elements"
    )]
    CollectiveUnevenBlocks {
        /// The collective.
        op: &'static str,
        /// The source's length in elements.
        len: usize,
        /// The team's size.
        n_pes: u32,
    },
    /// A strided collective was given a stride of 0.
    #[error("{op}: a stride of 0 sends every element to one place; pass strides of at least 1")]
    CollectiveZeroStride {
        /// The collective.
        op: &'static str,
    },
    /// A kernel launch failed, or a call in it ([`crate::Shmem::launch_kernel`]).
    #[error(transparent)]
    Kernel(#[from] crate::kernel::KernelError),
    /// A strided operation of two blocks or more has a stride of 0 on one side.
    #[error(
        "{op}: the {side} stride is {stride} elements, so every block of {block_len} would be \
         the same one; pass a {side} stride of at least 1 (strides count elements from one \
         block's start to the next)"
    )]
    StrideTooShort {
        /// The operation.
        op: &'static str,
        /// "destination" or "source".
        side: &'static str,
        /// The stride given, in elements.
        stride: usize,
        /// The elements per block.
        block_len: usize,
    },
    /// A strided operation reaches past the end of one side.
    #[error(
        "{op}: {nblocks} blocks of {block_len} at a {side} stride of {stride} reach element \
         {} of the {side}, which has {len}; lower the count or the stride, or pass a longer \
         {side}",
        end - 1
    )]
    StridedOutOfBounds {
        /// The operation.
        op: &'static str,
        /// "destination" or "source".
        side: &'static str,
        /// The stride, in elements.
        stride: usize,
        /// The elements per block.
        block_len: usize,
        /// The number of blocks.
        nblocks: usize,
        /// One past the last element touched.
        end: usize,
        /// The side's length in elements.
        len: usize,
    },
    /// A sized operation (put32, get64, ...) was given a length that is not a whole number of
    /// its elements.
    #[error(
        "{op} moves {size_bytes}-byte elements but was given {len_bytes} bytes; pass a \
         multiple of {size_bytes} bytes, or use the *_bytes operations"
    )]
    SizedLength {
        /// The operation.
        op: &'static str,
        /// The length given, in bytes.
        len_bytes: usize,
        /// The element size of the operation, in bytes.
        size_bytes: u64,
    },
    /// set_lock or test_lock on a lock this PE already holds: it would wait for itself.
    #[error(
        "{op} on the lock at {offset:#x}, which this PE already holds; locks are not \
         recursive: clear_lock it first"
    )]
    LockAlreadyHeld {
        /// The call.
        op: &'static str,
        /// The lock's heap offset.
        offset: u64,
    },
    /// clear_lock on a lock this PE does not hold.
    #[error(
        "clear_lock on the lock at {offset:#x}, which this PE does not hold; acquire it with \
         set_lock (or a test_lock that returned true) first"
    )]
    LockNotHeld {
        /// The lock's heap offset.
        offset: u64,
    },
}

/// A heap's name in messages.
fn heap_name(kind: MemKind) -> &'static str {
    match kind {
        MemKind::Host => "host heap",
        MemKind::Device => "device heap",
        MemKind::Static => "static data",
    }
}

/// The heap size to suggest when `requested_bytes` did not fit in `heap_bytes`: the next power
/// of two that holds both, since sizes are easiest to write that way ("2g").
fn suggested_heap_bytes(heap_bytes: u64, requested_bytes: u64) -> u64 {
    heap_bytes
        .saturating_add(requested_bytes)
        .checked_next_power_of_two()
        .unwrap_or(u64::MAX)
}
