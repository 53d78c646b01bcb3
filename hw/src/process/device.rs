//! [`ProcessDevice`]: this process's PE: its segments and its peers', its control block and
//! theirs, its clock and its bootstrap.
//!
//! What a device and its queues share is one [`PeState`] behind an `Arc`. The table of
//! reachable segments is a `OnceLock` per PE and kind: filled once at creation or import (at
//! setup), read with one Acquire load on every put and atomic, so the hot paths take no lock.

use std::ffi::CStr;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{Ordering, fence};
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::amo::AmoWidth;
use crate::backend::{Device, WaitSpec, waiting_for_any};
use crate::bootstrap::Bootstrap;
use crate::caps::Caps;
use crate::common::cpu_atomics;
use crate::common::fd_sharing::{SHARED_MEMORY_BYTES, SharedMemory, take_shared};
use crate::common::memfd::{Mapping, shared_memory};
use crate::common::static_data;
use crate::error::{DeviceError, QueueError};
use crate::exchanged::Exchanged;
use crate::hang_report::WordNames;
use crate::topology::Topology;
use crate::types::{Instant, LocalRange, MemKind, Pe, RemoteRange, SegmentKey};

use super::queue::ProcessQueue;
use super::wake::{Control, MAX_NAP, MAX_WATCHED_WORDS, SpinPolicy, Watched};
use super::{AroundSleep, PeerPath, ProcessBackend};
use crate::ofi::allgather::{Gathered, NetworkAllgather};
use crate::ofi::network::{NETWORK_KEY_BYTES, NETWORK_NAP, Network};

/// What a device and its queues share.
pub(crate) struct PeState {
    pub(crate) pe: Pe,
    pub(super) n_pes: u32,
    pub(super) caps: Caps,
    pub(super) topology: Topology,
    /// Time zero of [`Device::now`].
    pub(super) start: std::time::Instant,
    pub(super) client: Option<Mutex<Box<dyn Bootstrap>>>,
    pub(super) around_sleep: AroundSleep,
    /// Every PE's control block, in PE order; `None` for a PE on another node.
    pub(super) controls: Vec<Option<Control>>,
    /// How this PE reaches each PE, in PE order.
    pub(super) paths: Vec<PeerPath>,
    /// How this PE's waits spin before they sleep.
    pub(super) spin: SpinPolicy,
    /// Every PE's process id, in PE order: a key names its owner's process.
    pub(super) pids: Vec<u32>,
    /// The exchange over the network path, where the run has one and at most
    /// [`crate::ofi::allgather::MAX_PES`] PEs. Before `network`, whose endpoint it
    /// registered with.
    pub(super) allgather: Option<NetworkAllgather>,
    /// The network path, when the run spans nodes or `RSHMEM_TRANSPORT=ofi` chose it
    /// (`ofi/network.rs`). Before `segments`, so that it is dropped first: its registrations are
    /// of those mappings.
    pub(crate) network: Option<Network>,
    /// Reachable segments by PE and [`MemKind::index`], this PE's own included.
    pub(super) segments: Vec<[OnceLock<Mapping>; MemKind::COUNT]>,
    /// This PE's descriptors, kept open so that peers can take copies.
    pub(super) exports: Mutex<Vec<OwnedFd>>,
    /// Whether the static data may be remapped, and its key once it was.
    pub(super) static_data: bool,
    pub(super) static_key: Mutex<Option<(SegmentKey, u64)>>,
    /// This PE's words in the program's terms, for reports of waits (`set_word_names`).
    pub(super) names: OnceLock<std::sync::Arc<WordNames>>,
}

impl PeState {
    /// `pe`'s segment of `kind`.
    ///
    /// # Panics
    /// If it was not created or imported (contract violation).
    #[inline]
    pub(crate) fn segment(&self, pe: Pe, kind: MemKind) -> &Mapping {
        self.segments
            .get(pe.idx())
            .and_then(|s| s[kind.index()].get())
            .unwrap_or_else(|| {
                panic!(
                    "{} used {pe}'s {kind:?} segment without importing it",
                    self.pe
                )
            })
    }

    /// The network, when this PE reaches `pe` through it; `None` when `pe`'s memory is
    /// mapped here.
    #[inline]
    pub(crate) fn network_to(&self, pe: Pe) -> Option<&Network> {
        match self.paths[pe.idx()] {
            PeerPath::SharedMemory => None,
            PeerPath::Network => self.network.as_ref(),
        }
    }

    /// The network, when it is open: then every atomic goes through it, to peers of this node
    /// too, so that each word has one atomicity domain (the provider's atomics may be the
    /// target's CPU applying them without the instructions this PE's CPU atomics use).
    #[inline]
    pub(crate) fn atomics_network(&self) -> Option<&Network> {
        self.network.as_ref()
    }

    /// Called after this PE wrote `range` of a PE's memory through its mapping: wakes that
    /// PE's sleepers if one waits for those bytes. Writes through the network land in the
    /// target's process and wake no one there (its waiters look often instead, `ofi/network.rs`).
    #[inline]
    pub(crate) fn notify(&self, range: RemoteRange) {
        if self.paths[range.pe.idx()] == PeerPath::SharedMemory
            && let Some(control) = &self.controls[range.pe.idx()]
        {
            control.notify(range.kind, range.offset, range.len);
        }
    }

    /// The wall-clock point of a contract deadline; `None` for one too far to represent.
    fn until(&self, deadline: Instant) -> Option<std::time::Instant> {
        self.start
            .checked_add(std::time::Duration::from_nanos(deadline.0))
    }
}

/// Every process's `mine`, in PE order, through the launcher's bootstrap, sleeping inside
/// `around_sleep`; just `mine` for a single PE.
pub(super) fn allgather(
    client: Option<&Mutex<Box<dyn Bootstrap>>>,
    around_sleep: &AroundSleep,
    mine: &[u8],
    until: std::time::Instant,
) -> Result<Exchanged, String> {
    let Some(client) = client else {
        return Ok(Exchanged::from(vec![mine.to_vec()]));
    };
    let mut result = None;
    around_sleep(&mut || {
        let mut client = client.lock().unwrap_or_else(|e| e.into_inner());
        result = Some(client.allgather(mine, until).map_err(|e| e.to_string()));
    });
    result
        .unwrap_or_else(|| Err("the around-sleep hook did not run the exchange".to_string()))
        .map(Exchanged::from)
}

/// This process's PE of a run (see the module docs of `hw::process`).
#[derive(Debug)]
pub struct ProcessDevice {
    pub(super) state: std::sync::Arc<PeState>,
}

impl std::fmt::Debug for PeState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeState")
            .field("pe", &self.pe)
            .field("n_pes", &self.n_pes)
            .field("static_data", &self.static_data)
            .finish_non_exhaustive()
    }
}

/// The memfd name of a segment of `kind`, as `/proc/PID/maps` shows it.
fn memfd_name(kind: MemKind) -> &'static CStr {
    match kind {
        MemKind::Host => c"rshmem-host-segment",
        MemKind::Device => c"rshmem-device-segment",
        MemKind::Static => c"rshmem-static-data",
    }
}

impl ProcessDevice {
    /// The job's bootstrap, for telling the launcher about a global exit; `None` for a single
    /// PE that no launcher started. The guard waits while another thread of this process is
    /// in an exchange.
    pub fn bootstrap(&self) -> Option<MutexGuard<'_, Box<dyn Bootstrap>>> {
        self.state
            .client
            .as_ref()
            .map(|client| client.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Makes `mapping` (with its descriptor `fd`) this PE's segment of `kind` and returns its
    /// key.
    fn keep_own(
        &self,
        kind: MemKind,
        fd: OwnedFd,
        mapping: Mapping,
    ) -> Result<SegmentKey, DeviceError> {
        let state = &self.state;
        let mut key = SharedMemory::of(&fd, mapping.len()).to_bytes();
        let slot = &state.segments[state.pe.idx()][kind.index()];
        slot.set(mapping).map_err(|_| already_has(state.pe, kind))?;
        lock(&state.exports).push(fd);
        if let (Some(network), Some(mapping)) = (&state.network, slot.get()) {
            let network_key = network
                .register(state.pe, kind, mapping)
                .map_err(|e| DeviceError::Lost(format!("registering the {kind:?} segment: {e}")))?;
            key.extend_from_slice(&network_key);
        }
        Ok(SegmentKey(key))
    }

    /// The values of the words of `specs` now, for a deadline report.
    fn words(&self, specs: &[WaitSpec]) -> Vec<u64> {
        specs.iter().map(|spec| self.load_word(spec)).collect()
    }

    /// The word of `spec`, loaded Relaxed: a satisfied check is followed by the consistency
    /// step's SeqCst fence, an acquire fence after this load (C11 fence rules).
    fn load_word(&self, spec: &WaitSpec) -> u64 {
        assert_eq!(
            spec.word.len,
            spec.width.bytes(),
            "wait: word length is not its width"
        );
        let own = self.state.segment(self.state.pe, spec.word.kind);
        cpu_atomics::load(own, spec.word.offset, spec.width, Ordering::Relaxed)
    }

    fn check(&self, spec: &WaitSpec) -> Option<u64> {
        let value = self.load_word(spec);
        let width: AmoWidth = spec.width;
        spec.cmp
            .eval(width, spec.signed, value, width.truncate(spec.value))
            .then_some(value)
    }
}

/// The error of a second segment of one kind.
fn already_has(pe: Pe, kind: MemKind) -> DeviceError {
    DeviceError::Lost(format!("{pe} already has a {kind:?} segment"))
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Device for ProcessDevice {
    type B = ProcessBackend;

    fn pe(&self) -> Pe {
        self.state.pe
    }

    fn n_pes(&self) -> u32 {
        self.state.n_pes
    }

    fn caps(&self) -> &Caps {
        &self.state.caps
    }

    fn topology(&self) -> &Topology {
        &self.state.topology
    }

    fn now(&self) -> Instant {
        Instant(self.state.start.elapsed().as_nanos() as u64)
    }

    /// A memfd of `len_bytes` (sparse: pages cost memory once touched), mapped shared.
    fn create_segment(&self, kind: MemKind, len_bytes: u64) -> Result<SegmentKey, DeviceError> {
        let limit_bytes = self.state.caps.max_segment_bytes;
        let oom = DeviceError::OutOfMemory {
            kind,
            requested_bytes: len_bytes,
            limit_bytes,
        };
        if kind == MemKind::Static {
            return Err(DeviceError::Lost(
                "the static data is the program's: share it with share_static_data, not \
                 create_segment"
                    .to_string(),
            ));
        }
        let len = usize::try_from(len_bytes)
            .ok()
            .filter(|_| len_bytes <= limit_bytes);
        let Some(len) = len else {
            return Err(oom);
        };
        if self.state.segments[self.state.pe.idx()][kind.index()]
            .get()
            .is_some()
        {
            return Err(already_has(self.state.pe, kind));
        }
        let (fd, mapping) = shared_memory(memfd_name(kind), len).map_err(|e| {
            tracing::warn!("a {len_bytes}-byte {kind:?} segment: {e}");
            oom
        })?;
        self.keep_own(kind, fd, mapping)
    }

    /// Maps the peer's memfd, taken with `pidfd_getfd`; a second import of the same segment
    /// does nothing.
    fn import_segment(&self, peer: Pe, kind: MemKind, key: &SegmentKey) -> Result<(), DeviceError> {
        let state = &self.state;
        let import_error = |reason: String| DeviceError::Import { peer, kind, reason };
        let (shared, network_key) = key.0.split_at(SHARED_MEMORY_BYTES.min(key.0.len()));
        let shared = SharedMemory::from_bytes(shared)
            .ok_or_else(|| import_error("the key is not a process-backend key".into()))?;
        if let Some(network) = &state.network {
            let network_key: &[u8; NETWORK_KEY_BYTES] = network_key.try_into().map_err(|_| {
                import_error(
                    "the key has no network key, though the network path is open: every PE \
                     must run the same rshmem"
                        .to_string(),
                )
            })?;
            network.import(peer, kind, network_key);
        }
        if state.controls.get(peer.idx()).is_some_and(Option::is_none) {
            // On another node: its memory is reached through the network alone.
            return Ok(());
        }
        let owner = *state
            .pids
            .get(peer.idx())
            .ok_or_else(|| import_error("no such PE".into()))?;
        if shared.pid != owner {
            return Err(import_error(format!(
                "the key names process {}, but {peer} is process {owner}",
                shared.pid
            )));
        }
        let slot = &state.segments[peer.idx()][kind.index()];
        if let Some(mapping) = slot.get() {
            return if mapping.len() as u64 == shared.size {
                Ok(())
            } else {
                Err(import_error(format!(
                    "the key is for {} bytes, the segment has {}",
                    shared.size,
                    mapping.len()
                )))
            };
        }
        if peer == state.pe {
            return Err(import_error("this PE has not created that segment".into()));
        }
        let (fd, size) = take_shared(&shared).map_err(import_error)?;
        let mapping = Mapping::map(fd.as_fd(), size)
            .map_err(|e| import_error(format!("mmap of {size} bytes: {e}")))?;
        // A second import racing this one from another thread keeps the first mapping.
        let _ = slot.set(mapping);
        Ok(())
    }

    /// The mapping's base plus the offset, for every segment of a PE of this node: their
    /// memory is mapped in this process. `None` for a PE on another node.
    fn load_store_addr(&self, range: RemoteRange) -> Option<u64> {
        self.state.controls[range.pe.idx()].as_ref()?;
        let mapping = self.state.segment(range.pe, range.kind);
        Some(mapping.span(range.offset, range.len, "load_store_addr") as u64)
    }

    /// Refuses: PEs as processes have no GPU, and the program's buffers are memory of its own
    /// that the peers' processes do not map.
    fn attach_buffer(
        &self,
        _kind: MemKind,
        _offset_bytes: u64,
        _buffer_addr: u64,
        _len_bytes: u64,
        _deadline: Instant,
    ) -> Result<(), DeviceError> {
        Err(DeviceError::Refused(
            "PEs as processes without GPUs cannot take a program's buffer into the heap; run on \
             the simulator (oshrun --sim) or on GPUs (oshrun --gpu), or allocate the buffer with \
             nvshmem_malloc"
                .into(),
        ))
    }

    /// Remaps the main program's data onto a memfd the first time (`static_data.rs`), when
    /// [`super::ProcessBuilder::static_data`] allowed it; later calls return the same key.
    fn share_static_data(&self) -> Result<Option<(SegmentKey, u64)>, DeviceError> {
        if !self.state.static_data {
            return Ok(None);
        }
        let mut shared = lock(&self.state.static_key);
        if let Some(done) = shared.as_ref() {
            return Ok(Some(done.clone()));
        }
        let (fd, mapping) = static_data::share().map_err(|e| {
            DeviceError::Lost(format!("cannot share the program's static data: {e}"))
        })?;
        let len_bytes = mapping.len() as u64;
        let key = self.keep_own(MemKind::Static, fd, mapping)?;
        *shared = Some((key.clone(), len_bytes));
        Ok(Some((key, len_bytes)))
    }

    fn exchange(&self, mine: &[u8], deadline: Instant) -> Result<Exchanged, QueueError> {
        let state = &self.state;
        // Past the representable: as good as never.
        let far = || std::time::Instant::now() + std::time::Duration::from_secs(1 << 30);
        let until = state.until(deadline).unwrap_or_else(far);
        let waited = |e: String| QueueError::Deadline {
            pe: state.pe,
            waiting_for: e,
            deadline,
        };
        if let (Some(over), Some(network)) = (&state.allgather, &state.network) {
            match over.exchange(network, mine, until, &*state.around_sleep) {
                Ok(Gathered::All(all)) => return Ok(Exchanged::from(all)),
                // Every PE saw the same lengths, so every PE comes here too.
                Ok(Gathered::TooLarge) => {}
                Err(e) => return Err(waited(e)),
            }
        }
        allgather(state.client.as_ref(), &state.around_sleep, mine, until).map_err(|e| {
            QueueError::Deadline {
                pe: state.pe,
                waiting_for: format!("the bootstrap exchange between processes: {e}"),
                deadline,
            }
        })
    }

    fn set_word_names(&self, names: std::sync::Arc<crate::WordNames>) {
        // Why ignore a second table: the runtime gives one per PE, at start.
        let _ = self.state.names.set(names);
    }

    fn create_queue(&self) -> Result<ProcessQueue, DeviceError> {
        Ok(ProcessQueue::new(std::sync::Arc::clone(&self.state)))
    }

    fn read_local(&self, src: LocalRange, out: &mut [u8]) {
        assert_eq!(
            src.len,
            out.len() as u64,
            "read_local: range and buffer lengths differ"
        );
        let own = self.state.segment(self.state.pe, src.kind);
        // SAFETY: `out` is a distinct buffer of `src.len` bytes. Peers may write the range
        // meanwhile: what they wrote is ordered by their fences and this PE's waits, as the
        // contract says.
        unsafe { own.read_to(src.offset, src.len, out.as_mut_ptr(), "read_local") };
    }

    fn write_local(&self, dst: LocalRange, data: &[u8]) {
        assert_eq!(
            dst.len,
            data.len() as u64,
            "write_local: range and data lengths differ"
        );
        // Peers see the bytes after this PE's quiet or barrier, which fence.
        self.state
            .segment(self.state.pe, dst.kind)
            .write(dst.offset, data, "write_local");
    }

    fn wait_until_any(
        &self,
        specs: &[WaitSpec],
        deadline: Instant,
    ) -> Result<(usize, u64), QueueError> {
        assert!(!specs.is_empty(), "wait_until_any: no word to wait on");
        let state = &self.state;
        // One sleep for all words, published so that writes to others do not wake it.
        let mut watched = [Watched {
            kind: MemKind::Host,
            offset: 0,
        }; MAX_WATCHED_WORDS];
        for (slot, spec) in watched.iter_mut().zip(specs) {
            *slot = Watched {
                kind: spec.word.kind,
                offset: spec.word.offset,
            };
        }
        let words = (specs.len() <= MAX_WATCHED_WORDS).then(|| &watched[..specs.len()]);
        let first_holding = || {
            if let Some(network) = &state.network {
                network.progress();
            }
            specs
                .iter()
                .enumerate()
                .find_map(|(i, spec)| self.check(spec).map(|value| (i, value)))
        };
        let control = state.controls[state.pe.idx()]
            .as_ref()
            .expect("a PE's own control block is always mapped");
        match control.wait_for(
            words,
            first_holding,
            state.spin,
            state.until(deadline),
            // A write through the network wakes no sleeper: look more often.
            if state.network.is_some() {
                NETWORK_NAP
            } else {
                MAX_NAP
            },
            &state.around_sleep,
        ) {
            Some(found) => {
                consistency_step();
                Ok(found)
            }
            None => Err(QueueError::Deadline {
                pe: state.pe,
                waiting_for: waiting_for_any(
                    specs,
                    &self.words(specs),
                    state.names.get().map(|names| &**names),
                ),
                deadline,
            }),
        }
    }

    fn test(&self, spec: WaitSpec) -> Option<u64> {
        let value = self.check(&spec)?;
        consistency_step();
        Some(value)
    }
}

/// The consistency step after a satisfied wait or test. Every write to a peer ends with a
/// `fence(SeqCst)` (the writer's wake-up check), so after this fence the PE sees every write
/// whose fence came first in the single total order of SeqCst fences: the contract's "every
/// update that is delivered is visible". On x86-64 it is an `mfence`, on AArch64 a `dmb ish`.
fn consistency_step() {
    fence(Ordering::SeqCst);
}
