//! The traits a backend implements.

use crate::amo::{AmoOp, AmoWidth, Cmp, SignalOp};
use crate::caps::Caps;
use crate::error::{DeviceError, LaunchError, PeFailure, QueueError};
use crate::exchanged::Exchanged;
use crate::hang_report::{WordNames, describe_word};
use crate::topology::Topology;
use crate::types::{Copier, Instant, LocalRange, MemKind, Pe, RemoteRange, SegmentKey, Ticket};

/// A hardware backend: associated types only, so generic code has one type parameter.
pub trait Backend: Sized + 'static {
    /// One PE's endpoint: its GPU, its memory and its link to the others.
    type Device: Device<B = Self>;
    /// An ordered submission channel of one device. The runtime's contexts map onto queues.
    type Queue: Queue<B = Self>;
}

/// What [`Launcher::launch`] returns: the result of each PE this process ran, in PE order, and
/// the backend's report.
pub type LaunchOutput<R, Report> = (Vec<Result<R, PeFailure>>, Report);

/// Starts the PEs of a run.
pub trait Launcher {
    /// The backend the PEs run on.
    type B: Backend;
    /// What the backend reports about a finished run (simulated time, counters, ...).
    type Report;

    /// How many PEs the run has (in a multi-process run, across all its processes).
    fn n_pes(&self) -> u32;

    /// The topology the PEs run on.
    fn topology(&self) -> &Topology;

    /// Runs `pe_main` once per PE of this process, each with its own device, and returns each
    /// one's result in PE order (a panicking PE yields its [`PeFailure`]) and the backend's
    /// report. Launchers of one process run every PE; a process of a multi-process run (the
    /// CUDA backend under `rshmem run -n`) runs its own PE only and returns one result.
    ///
    /// # Errors
    /// [`LaunchError`] if the PEs could not be started at all.
    fn launch<R, F>(self, pe_main: F) -> Result<LaunchOutput<R, Self::Report>, LaunchError>
    where
        F: Fn(<Self::B as Backend>::Device) -> R + Sync,
        R: Send;
}

/// A wait on a word of the calling PE's own memory.
#[derive(Clone, Copy, Debug)]
pub struct WaitSpec {
    /// The word (its length equals `width`).
    pub word: LocalRange,
    /// The word's width.
    pub width: AmoWidth,
    /// Whether the word is compared as a signed integer.
    pub signed: bool,
    /// The comparison.
    pub cmp: Cmp,
    /// The value compared against.
    pub value: u64,
    /// What the caller is doing, for deadlock and deadline reports ("barrier_all", ...).
    pub purpose: &'static str,
}

impl WaitSpec {
    /// What a PE waiting on this spec waits for, for deadlock and deadline reports; `holds` is
    /// the word's value when the wait gave up, `names` the PE's words in the program's terms
    /// (without them, the word is named by segment and offset). Every backend words a wait
    /// this way.
    pub fn waiting_for(&self, holds: u64, names: Option<&WordNames>) -> String {
        format!(
            "{}: {} to become {} {} (it holds {holds})",
            self.purpose,
            describe_word(names, self.word.kind, self.word.offset),
            self.cmp.symbol(),
            self.value,
        )
    }
}

/// What a PE waiting on any of `specs` waits for, for deadline reports; `holds` has each
/// word's value when the wait gave up, `names` the PE's words ([`WaitSpec::waiting_for`]).
pub fn waiting_for_any(specs: &[WaitSpec], holds: &[u64], names: Option<&WordNames>) -> String {
    let each: Vec<String> = specs
        .iter()
        .zip(holds)
        .map(|(spec, &value)| spec.waiting_for(value, names))
        .collect();
    each.join(", or ")
}

/// One PE's endpoint.
///
/// A device is used only by the PE it was handed to; it is not shared between threads.
pub trait Device {
    /// The backend.
    type B: Backend;

    /// This PE.
    fn pe(&self) -> Pe;

    /// How many PEs the run has.
    fn n_pes(&self) -> u32;

    /// What the backend offers.
    fn caps(&self) -> &Caps;

    /// The topology of the run.
    fn topology(&self) -> &Topology;

    /// The current time. This is the only clock the runtime may read: virtual time on the
    /// simulator.
    fn now(&self) -> Instant;

    /// Creates this PE's segment of `kind`, `len_bytes` long and zero-filled, and returns the
    /// key peers import it with. A kind can have one segment per PE.
    ///
    /// # Errors
    /// [`DeviceError::OutOfMemory`] if the device cannot provide `len_bytes` of `kind`.
    fn create_segment(&self, kind: MemKind, len_bytes: u64) -> Result<SegmentKey, DeviceError>;

    /// Creates this PE's `kind` segment with room for `len_bytes`, of which only the first
    /// `backed_bytes` need memory behind them until [`Device::grow_segment`] backs more: for
    /// a symmetric heap whose limit is large and whose use is not known at start. It is
    /// shared and imported like any segment.
    ///
    /// The default backs all of it ([`Device::create_segment`]).
    ///
    /// # Errors
    /// As [`Device::create_segment`].
    fn create_growable_segment(
        &self,
        kind: MemKind,
        len_bytes: u64,
        backed_bytes: u64,
    ) -> Result<SegmentKey, DeviceError> {
        let _ = backed_bytes;
        self.create_segment(kind, len_bytes)
    }

    /// Backs the first `backed_bytes` of every PE's growable `kind` segment
    /// ([`Device::create_growable_segment`]), every PE's imports included. Collective: every
    /// PE calls it with the same length at the same point of its program, and it returns once
    /// this PE may access that much of every PE's segment. A length already backed returns
    /// at once (on every PE alike, since they all backed the same).
    ///
    /// # Ordering
    /// Orders nothing; new memory reads as zero.
    ///
    /// The default has nothing to do.
    ///
    /// # Errors
    /// [`DeviceError::OutOfMemory`] past the segment's length or the memory there is;
    /// [`DeviceError::Lost`] if a driver call or the exchange with the peers failed.
    fn grow_segment(
        &self,
        kind: MemKind,
        backed_bytes: u64,
        deadline: Instant,
    ) -> Result<(), DeviceError> {
        let _ = (kind, backed_bytes, deadline);
        Ok(())
    }

    /// Makes the program's own memory at `buffer_addr` (`len_bytes` of it, on this PE's side)
    /// the memory of this PE's growable `kind` segment from `offset_bytes`, which is where the
    /// segment's backing ends ([`Device::grow_segment`]), and maps it for every PE: afterwards
    /// the first `offset_bytes + len_bytes` are backed, and an access of any PE to the range
    /// reaches the buffer, as the program's own loads and stores through `buffer_addr` do.
    /// What memory qualifies is the backend's to say (on CUDA, one allocation of this PE's GPU
    /// that the program mapped with the driver's virtual-memory API, exportable between
    /// processes). Collective, as [`Device::grow_segment`]: every PE calls it with the same
    /// `offset_bytes` and `len_bytes`, and a PE that refuses its buffer fails every PE's call.
    ///
    /// # Ordering
    /// Orders nothing; the buffer keeps its contents.
    ///
    /// # Safety
    /// Not `unsafe`: the backend asks its driver what `buffer_addr` is and refuses memory that
    /// does not qualify, so a wrong address is an error, never an alias of something else.
    ///
    /// The default refuses: the backend cannot take a buffer into its segments.
    ///
    /// # Errors
    /// [`DeviceError::Refused`] naming what is wrong with this PE's or a peer's buffer, or that
    /// the backend cannot; [`DeviceError::Lost`] if a driver call or the exchange failed.
    fn attach_buffer(
        &self,
        kind: MemKind,
        offset_bytes: u64,
        buffer_addr: u64,
        len_bytes: u64,
        deadline: Instant,
    ) -> Result<(), DeviceError> {
        let _ = (kind, offset_bytes, buffer_addr, len_bytes, deadline);
        Err(DeviceError::Refused(
            "this backend cannot make a program's own buffer part of a symmetric heap".into(),
        ))
    }

    /// Undoes [`Device::attach_buffer`] of the range at `offset_bytes`, `len_bytes` long: no
    /// PE reaches the buffer through this PE's segment afterwards, and the buffer stays the
    /// program's. If the range ends where the segment's backing ends, the backing ends at
    /// `offset_bytes` again (the next [`Device::grow_segment`] backs it with new memory);
    /// otherwise the range stays without memory for the rest of the run. Every PE calls it
    /// with the same range, once no PE accesses the range any more (the caller's barrier).
    ///
    /// # Ordering
    /// Orders nothing; the caller's barrier has completed every access to the range.
    ///
    /// The default has nothing to do (no buffer was ever attached).
    ///
    /// # Errors
    /// [`DeviceError::Lost`] if a driver call failed.
    fn detach_buffer(
        &self,
        kind: MemKind,
        offset_bytes: u64,
        len_bytes: u64,
    ) -> Result<(), DeviceError> {
        let _ = (kind, offset_bytes, len_bytes);
        Ok(())
    }

    /// Makes this PE's static data (the main program's writable data segment: its globals
    /// and statics) a segment of kind [`MemKind::Static`], and returns the key peers import
    /// it with through [`Device::import_segment`] and its length in bytes. Offset 0 is the
    /// segment's first byte, so a global's offset is its address minus the segment's base
    /// ([`Device::load_store_addr`] of offset 0 on the PE itself); every PE runs the same
    /// program, so the offsets agree. `None` where the backend cannot: PEs that are threads of
    /// one process share one copy of the program's data; the simulator has it only when its
    /// host gives each PE a region of its own (`sim::SimBuilder::static_data`: each PE a
    /// loaded copy of a C program).
    ///
    /// [`Device::load_store_addr`] on a `Static` range gives that byte's address in this
    /// process: on the PE itself, the program's own variable.
    ///
    /// # Ordering
    /// Orders nothing; the data keeps the values it had.
    ///
    /// The default cannot.
    ///
    /// # Errors
    /// [`DeviceError::Lost`] if the backend can but the system refused (the mapping or the
    /// memory file failed), naming the call.
    fn share_static_data(&self) -> Result<Option<(SegmentKey, u64)>, DeviceError> {
        Ok(None)
    }

    /// Makes `peer`'s segment of `kind` reachable from this PE's queues.
    ///
    /// # Errors
    /// [`DeviceError::Import`] if the key does not describe that segment.
    fn import_segment(&self, peer: Pe, kind: MemKind, key: &SegmentKey) -> Result<(), DeviceError>;

    /// Makes every PE's segments of `kinds` (this PE's own included) reachable from this
    /// PE's queues, from the keys the PEs traded in `all`: each PE's contribution holds its
    /// keys from byte `offset` on, in the order of `kinds`, as [`crate::append_segment_key`]
    /// wrote them. The same as [`Device::import_segment`] for each PE and kind, which is
    /// what the default does; a backend whose PEs hold one shared `all` (the simulator)
    /// checks the keys once for all of them, so that a run of `n` PEs does not check `n²`.
    ///
    /// # Ordering
    /// Orders nothing.
    ///
    /// # Errors
    /// [`DeviceError::Import`] naming the first PE whose key is missing or does not describe
    /// its segment.
    fn import_segments(
        &self,
        all: &Exchanged,
        offset: usize,
        kinds: &[MemKind],
    ) -> Result<(), DeviceError> {
        // One buffer for every key: this runs for every PE's every segment.
        let mut buffer = SegmentKey(Vec::new());
        all.for_each_segment_key(offset, kinds, |peer, kind, key| {
            buffer.0.clear();
            buffer.0.extend_from_slice(key);
            self.import_segment(peer, kind, &buffer)
        })
    }

    /// The address at which this PE's own code reaches `range` of a peer (or of itself) with
    /// plain loads and stores, where the backend maps that memory for it: what
    /// `shmem_ptr` returns.
    ///
    /// `Device` memory is addressed as kernels on this PE's GPU see it, `Host` memory as this
    /// PE's host thread sees it. The address stays valid until the run ends. `None` where
    /// the backend gives no such address: the simulator models which peers are load/store
    /// reachable (the topology's [`crate::PathClass`]) and gives an address for a PE's own
    /// memory only in its addressable mode (`sim::SimBuilder::addressable_memory`), never for
    /// a peer's, whose memory must change only through simulated operations; the host
    /// backend's memory is atomic words that plain loads and stores must not touch.
    /// The runtime asks only for peers whose route is `Local` or `LoadStore`.
    ///
    /// # Panics
    /// If `range.pe`'s segment of `range.kind` was not imported or `range` lies outside it
    /// (contract violation).
    fn load_store_addr(&self, range: RemoteRange) -> Option<u64>;

    /// Bootstrap all-gather: every PE calls this collectively with its bytes and receives
    /// every PE's bytes in PE order. Used at setup and to check collective arguments; it is
    /// slow and not a data path. The result is shared ([`Exchanged`]): PEs of one process
    /// may hold the same one, so that a run of `n` PEs keeps `n` contributions, not `n²`.
    ///
    /// # Ordering
    /// None with respect to queue operations: it is out-of-band.
    ///
    /// # Errors
    /// [`QueueError`] if a peer never arrives (deadline or deadlock).
    fn exchange(&self, mine: &[u8], deadline: Instant) -> Result<Exchanged, QueueError>;

    /// Creates a queue.
    ///
    /// # Errors
    /// [`DeviceError`] if the device has no queue resources left.
    fn create_queue(&self) -> Result<<Self::B as Backend>::Queue, DeviceError>;

    /// Tells the backend that this PE launched a kernel. A backend that models time charges
    /// the launch to the PE (the simulator's `launch_ns`); the default does nothing, as a
    /// real launch costs what it costs.
    ///
    /// # Ordering
    /// None.
    fn note_kernel_launch(&self) {}

    /// Gives the backend this PE's words in the program's terms, which its reports of waits
    /// that never end use ([`WordNames`]); the runtime keeps filling the table as it allocates.
    /// The default ignores them: reports then name words by segment and offset.
    ///
    /// # Ordering
    /// None.
    fn set_word_names(&self, names: std::sync::Arc<WordNames>) {
        let _ = names;
    }

    /// Tells a race detector wrapped around the backend what a kernel of this PE did: which
    /// thread runs, which threads met, a thread's own accesses ([`crate::KernelEvent`]).
    /// Backends ignore it (the default); the runtime's kernel model sends it.
    ///
    /// # Ordering
    /// None: it reports, it does nothing.
    fn note_kernel_event(&self, event: crate::KernelEvent<'_>) {
        let _ = event;
    }

    /// Tells a race detector wrapped around the backend what a thread the PE's program started
    /// did: its start, its synchronisation and its own accesses ([`crate::HostThreadEvent`]).
    /// Backends ignore it (the default); the C API sends it on the simulator.
    ///
    /// # Ordering
    /// None: it reports, it does nothing.
    fn note_host_thread_event(&self, event: crate::HostThreadEvent) {
        let _ = event;
    }

    /// An address in this process from which this PE may *load* `range` (never store to it),
    /// where the backend lets plain loads stand in for get operations: the simulator's mapped
    /// loads (`sim::SimBuilder::mapped_loads`), for the PE's own addressable segments and those
    /// of peers it reaches by loads and stores (the topology's [`crate::PathClass::LoadStore`]).
    /// `None` by default: every read of a peer's memory is an operation. The address stays
    /// valid until the run ends; its loads are charged with [`Device::note_mapped_loads`].
    ///
    /// # Ordering
    /// A load sees what the backend has made visible in that memory by the PE's clock, like a
    /// get delivered at once; it is not ordered with the PE's operations in flight. So it
    /// returns what an operation would only where no write to those bytes is concurrent with
    /// it (data-race-free programs); a checked run (`rshmem check`) gives `None`, and every
    /// load is an operation again.
    ///
    /// # Panics
    /// As [`Device::load_store_addr`].
    fn mapped_load_addr(&self, range: RemoteRange) -> Option<u64> {
        let _ = range;
        None
    }

    /// Charges this PE for `bytes` it loaded from PE `pe`'s memory through
    /// [`Device::mapped_load_addr`]: a backend that models time adds their transfer time over
    /// the route to the PE's clock (no event: the loads overlap the other threads' work, as a
    /// GPU's many loads in flight do). The default does nothing.
    ///
    /// # Ordering
    /// None.
    fn note_mapped_loads(&self, pe: Pe, bytes: u64) {
        let _ = (pe, bytes);
    }

    /// Reads the calling PE's own memory with plain loads.
    ///
    /// # Ordering
    /// Sees this PE's own stores in program order, and remote updates only once they are
    /// visible to this PE (a wait, test, quiet or barrier that observed them, or eventually).
    ///
    /// # Panics
    /// If `src` is outside the segment or `out` has a different length (contract violation).
    fn read_local(&self, src: LocalRange, out: &mut [u8]);

    /// Writes the calling PE's own memory with plain stores.
    ///
    /// # Ordering
    /// Visible to this PE at once; to peers only after a later `quiet` or barrier.
    ///
    /// # Panics
    /// If `dst` is outside the segment or `data` has a different length.
    fn write_local(&self, dst: LocalRange, data: &[u8]);

    /// Blocks until the word satisfies the comparison, and returns its value.
    ///
    /// # Ordering
    /// Returns only after the update that satisfied it is complete. Afterwards every update
    /// to this PE's memory that is delivered is visible to this PE (on InfiniBand this is the
    /// consistency step that makes NIC writes visible to the GPU). It says nothing about the
    /// visibility of this PE's updates to others.
    ///
    /// # Errors
    /// [`QueueError::Deadline`] at `deadline`; [`QueueError::Deadlock`] when no PE can run.
    fn wait_until(&self, spec: WaitSpec, deadline: Instant) -> Result<u64, QueueError> {
        // Why a provided method: one word is the one-element case of many, and a backend
        // that waits on many words the same way it waits on one keeps a single wait loop.
        self.wait_until_any(&[spec], deadline)
            .map(|(_, value)| value)
    }

    /// Blocks until at least one of `specs` holds, and returns the index of one that holds
    /// (the lowest one that held when this PE looked) and its word's value. Waiting on many
    /// words at once is how a PE waits for whichever peer comes first without spinning
    /// (`wait_until_any`, `wait_until_some`); a loop over [`Device::test`] would keep a
    /// simulated PE running, so neither deadlock detection nor other PEs could progress.
    ///
    /// # Ordering
    /// As [`Device::wait_until`], for the spec whose index it returns.
    ///
    /// # Errors
    /// As [`Device::wait_until`]; a deadline report names every word.
    ///
    /// # Panics
    /// If `specs` is empty (contract violation: nothing could end the wait).
    fn wait_until_any(
        &self,
        specs: &[WaitSpec],
        deadline: Instant,
    ) -> Result<(usize, u64), QueueError>;

    /// Tests the word once; `Some(value)` if the comparison holds.
    ///
    /// # Ordering
    /// As [`Device::wait_until`] when it returns `Some`.
    fn test(&self, spec: WaitSpec) -> Option<u64>;
}

/// An ordered submission channel. Every operation returns a [`Ticket`]; tickets complete
/// in any order, and [`Queue::quiet`] waits for all of them.
///
/// Operations take byte ranges that the runtime has checked: a range outside the target
/// segment, or a segment that was not imported, is a contract violation and panics.
pub trait Queue {
    /// The backend.
    type B: Backend;

    /// Writes `data` into `dst`, its bytes copied by `copier`: the PE itself
    /// ([`Copier::Device`]) or a thread, warp or block of a kernel. A backend whose timing is
    /// real ignores `copier`; the simulator paces the put by its mover.
    ///
    /// # Ordering
    /// `data` is copied before this returns, so the source can be reused (blocking put).
    /// Delivery is unordered with other operations unless a [`Queue::fence`] (same target PE)
    /// or [`Queue::quiet`] separates them; words of one put may be delivered in any order.
    /// The ticket completes once the data is delivered.
    fn put(&self, dst: RemoteRange, data: &[u8], copier: Copier) -> Result<Ticket, QueueError>;

    /// Copies `src`, a range of the calling PE's own memory, into `dst`: a put from
    /// symmetric memory, with no copy through the caller's buffer (NVSHMEM's
    /// `putmem_on_stream`; on CUDA the copy engine does it).
    ///
    /// # Ordering
    /// As [`Queue::put`], except that `src` is read when the operation runs, at any time
    /// until its ticket completes: the caller must not change `src` before then.
    fn put_from_local(&self, dst: RemoteRange, src: LocalRange) -> Result<Ticket, QueueError>;

    /// Reads `src`; the bytes are taken with [`Queue::take_fetched`] once the ticket
    /// completes.
    ///
    /// # Ordering
    /// With [`crate::Semantics::Nvshmem`] fetching operations are unordered with each other
    /// unless a fence separates them. Not ordered by fence with respect to puts.
    fn get(&self, src: RemoteRange) -> Result<Ticket, QueueError>;

    /// Reads `src` into `out` at once, where the backend completes a get at issue: a blocking
    /// get with no ticket, no buffer of the backend's and no second copy. Returns `false`
    /// (and leaves `out` alone) where it does not; the caller then issues [`Queue::get`],
    /// waits for the ticket and takes the bytes.
    ///
    /// # Ordering
    /// As [`Queue::get`] whose ticket was then waited for: `out` holds the data when it
    /// returns `true`.
    ///
    /// The default says no, so that a backend that orders or times its operations (the
    /// simulator) keeps them on its own path.
    ///
    /// # Errors
    /// As [`Queue::get`].
    ///
    /// # Panics
    /// If `out` and `src` differ in length (contract violation).
    fn get_now(&self, src: RemoteRange, out: &mut [u8]) -> Result<bool, QueueError> {
        let _ = (src, out);
        Ok(false)
    }

    /// Reads `src` into the calling PE's own memory at `dst` (non-blocking get into
    /// symmetric memory). `dst` is written when the ticket completes.
    ///
    /// # Ordering
    /// Not ordered by fence; only quiet (or waiting for the ticket) completes it.
    fn get_into(&self, src: RemoteRange, dst: LocalRange) -> Result<Ticket, QueueError>;

    /// Performs `op` atomically on the word `dst` (its length is the op's width). When
    /// `fetch` is set the old value is kept for [`Queue::take_fetched`] (8 bytes,
    /// little-endian, zero-extended).
    ///
    /// # Ordering
    /// The update is ordered by fence like a put; the fetched value is not.
    /// Atomic only with respect to atomics of the same width on the same word.
    fn amo(&self, dst: RemoteRange, op: AmoOp, fetch: bool) -> Result<Ticket, QueueError>;

    /// Performs `op` atomically on the word `dst` at once, where the backend completes an
    /// atomic at issue, and returns the old value (zero-extended): a blocking fetching atomic
    /// with no ticket and no buffer. `None` (and nothing done) where it does not; the caller
    /// then issues [`Queue::amo`] with `fetch`, waits for the ticket and takes the value.
    ///
    /// # Ordering
    /// As [`Queue::amo`] whose ticket was then waited for.
    ///
    /// The default says no, so that a backend that orders or times its operations (the
    /// simulator) keeps them on its own path.
    ///
    /// # Errors
    /// As [`Queue::amo`].
    fn amo_now(&self, dst: RemoteRange, op: AmoOp) -> Result<Option<u64>, QueueError> {
        let _ = (dst, op);
        Ok(None)
    }

    /// Writes `data` into `dst`, copied by `copier` (as [`Queue::put`]), then applies `op`
    /// with `value` to the 64-bit word `signal`.
    ///
    /// # Ordering
    /// Once the signal update is visible, this put's data is delivered. Earlier puts are
    /// delivered first only if a fence separates them.
    fn put_signal(
        &self,
        dst: RemoteRange,
        data: &[u8],
        signal: RemoteRange,
        op: SignalOp,
        value: u64,
        copier: Copier,
    ) -> Result<Ticket, QueueError>;

    /// Orders delivery: for each target PE, every put, AMO update and put-with-signal issued
    /// on this queue before the fence is delivered before any issued after it.
    ///
    /// # Ordering
    /// Orders delivery, not completion. Does not order gets or fetched values.
    fn fence(&self) -> Result<(), QueueError>;

    /// Makes every operation issued on this queue after the call run only after every
    /// operation issued before it has completed: what a CUDA stream does between any two of
    /// its operations, and what on-stream calls promise.
    ///
    /// # Ordering
    /// Stronger than [`Queue::fence`]: completion rather than delivery, across every target
    /// PE. The default waits for the earlier operations ([`Queue::quiet`]); a queue that
    /// runs its operations one after another overrides it with nothing to do.
    ///
    /// # Errors
    /// As [`Queue::quiet`].
    fn serialize(&self, deadline: Instant) -> Result<(), QueueError> {
        self.quiet(deadline)
    }

    /// Blocks until every operation issued on this queue has completed.
    ///
    /// # Ordering
    /// With NVLink only, the updates are then visible to all PEs. With InfiniBand in the path
    /// they are delivered, and visible to a target PE once that PE runs a consistency step
    /// (its own wait, test, quiet or barrier) or eventually.
    ///
    /// # Errors
    /// [`QueueError`] if the deadline passes or no PE can run.
    fn quiet(&self, deadline: Instant) -> Result<(), QueueError>;

    /// Completes every operation issued on this queue without blocking, where the backend
    /// completes operations at issue (its quiet is then a fence and nothing to wait for), and
    /// returns `true`; `false` (and nothing done) where it cannot, and the caller calls
    /// [`Queue::quiet`] with a deadline. So a caller need not read the clock for a deadline
    /// that cannot be reached.
    ///
    /// # Ordering
    /// As [`Queue::quiet`] when it returns `true`.
    ///
    /// The default says no, so that a backend that orders or times its operations (the
    /// simulator) keeps them on its own path.
    ///
    /// # Errors
    /// As [`Queue::quiet`].
    fn quiet_now(&self) -> Result<bool, QueueError> {
        Ok(false)
    }

    /// Blocks until `ticket` has completed.
    ///
    /// # Errors
    /// As [`Queue::quiet`].
    fn wait_ticket(&self, ticket: Ticket, deadline: Instant) -> Result<(), QueueError>;

    /// Whether `ticket` has completed.
    fn is_complete(&self, ticket: Ticket) -> bool;

    /// Takes the bytes a completed fetching operation read. Each ticket's bytes can be taken
    /// once.
    ///
    /// # Panics
    /// If the ticket has not completed, did not fetch, or was already taken.
    fn take_fetched(&self, ticket: Ticket) -> Vec<u8>;
}
