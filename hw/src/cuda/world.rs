//! What the PEs of a CUDA run share in this process: the GPUs, the segments, the bootstrap
//! and the clock.
//!
//! A run is either one process with a thread per PE (every PE is local), or one process per
//! PE started by `rshmem run -n` (one local PE; peers' memory is mapped from the file
//! descriptors they export, see `process.rs`).

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::CudaStream;

use super::device_api::state::SYNC_BYTES;
use super::driver::Gpu;
use super::error::{DriverCallError, During};
use super::host_shared::HostShared;
use super::memory::{Segment, Vmm};
use super::process;
use super::remote::Remote;
use super::reservation::Reservation;
use crate::bootstrap::Bootstrap;
use crate::caps::Caps;
use crate::common::fd_sharing::SharedMemory;
use crate::common::rendezvous::Rendezvous;
use crate::error::{DeviceError, QueueError};
use crate::exchanged::Exchanged;
use crate::sync::{self, Clock};
use crate::topology::Topology;
use crate::types::{Instant, MemKind, Pe, SegmentKey};

/// How the PEs exchange bytes: a rendezvous in memory, or the launcher's bootstrap.
#[derive(Debug)]
pub(crate) enum Exchange {
    // Boxed: a rendezvous is large under shuttle's lock types, a client is small.
    Threads(Box<Rendezvous>),
    Processes(Mutex<Box<dyn Bootstrap>>),
}

/// Everything the PEs of one run share in this process.
#[derive(Debug)]
pub(crate) struct World {
    pub(crate) n_pes: u32,
    pub(crate) caps: Caps,
    pub(crate) topology: Topology,
    /// Time zero of [`crate::Device::now`].
    pub(crate) start: Clock,
    exchange: Exchange,
    /// The first PE this process runs; it runs `gpus.len()` PEs from there.
    first_pe: u32,
    /// The GPU of each PE this process runs, from `first_pe`.
    gpus: Vec<Arc<Gpu>>,
    /// The stream of each local PE's own synchronous copies (local reads, writes and waits).
    local_streams: Vec<Arc<CudaStream>>,
    /// Every PE's segments by [`MemKind::index`] (only local PEs' are ever filled). The world owns
    /// them so that they are freed only when the run is over: a PE that returns early must
    /// not unmap memory a peer still writes.
    segments: Mutex<Vec<[Option<Segment>; MemKind::COUNT]>>,
    /// Peers' memory mapped into this process, and this process's exported descriptors:
    /// kept until the run ends, as segments are.
    imports: Mutex<Vec<Vmm>>,
    /// Peers' host memory (`Host` segments, static data) mapped into this process.
    host_imports: Mutex<Vec<HostShared>>,
    /// Peers' growable segments as mapped into this process (a multi-process run), by
    /// importing PE, owner and kind index: chunks are mapped in as the owners grow them.
    growable_imports: Mutex<Vec<(Pe, Pe, usize, Reservation)>>,
    exports: Mutex<Vec<OwnedFd>>,
    /// Every PE's synchronisation memory of the device-side API as mapped in this process,
    /// in PE order: made on first use by the threads of one process, at launch by each
    /// process of a multi-process run (it is collective there).
    /// A PE of another node has none here: its base is 0.
    device_sync: OnceLock<Result<Vec<Option<Vmm>>, DriverCallError>>,
    /// Whether `Device::share_static_data` may remap the program's data (a process per PE
    /// whose launcher allowed it), and once it did, the key and length it returned.
    static_data: Option<Mutex<Option<(SegmentKey, u64)>>>,
    /// The path to PEs of other nodes, where the run has any (`remote/`).
    remote: OnceLock<Remote>,
}

impl World {
    /// The shared state of a run of one process with a thread per PE, PE `i` on `gpus[i]`.
    pub(crate) fn for_threads(
        topology: Topology,
        caps: Caps,
        gpus: Vec<Arc<Gpu>>,
    ) -> Result<World, DriverCallError> {
        let n_pes = gpus.len() as u32;
        World::new(
            topology,
            caps,
            gpus,
            0,
            n_pes,
            Exchange::Threads(Box::new(Rendezvous::new(n_pes))),
            false,
        )
    }

    /// The shared state of the process that runs PE `pe` of `n_pes` on `gpu`, which may share
    /// the program's static data if `static_data`.
    pub(crate) fn for_process(
        topology: Topology,
        caps: Caps,
        (gpu, pe, n_pes): (Arc<Gpu>, Pe, u32),
        bootstrap: Box<dyn Bootstrap>,
        static_data: bool,
    ) -> Result<World, DriverCallError> {
        let exchange = Exchange::Processes(Mutex::new(bootstrap));
        World::new(
            topology,
            caps,
            vec![gpu],
            pe.0,
            n_pes,
            exchange,
            static_data,
        )
    }

    fn new(
        topology: Topology,
        caps: Caps,
        gpus: Vec<Arc<Gpu>>,
        first_pe: u32,
        n_pes: u32,
        exchange: Exchange,
        static_data: bool,
    ) -> Result<World, DriverCallError> {
        let local_streams = gpus
            .iter()
            .map(|gpu| gpu.ctx.new_stream().during("cuStreamCreate"))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(World {
            n_pes,
            caps,
            topology,
            start: sync::clock_now(),
            exchange,
            first_pe,
            segments: Mutex::new((0..n_pes).map(|_| [None, None, None]).collect()),
            imports: Mutex::new(Vec::new()),
            host_imports: Mutex::new(Vec::new()),
            growable_imports: Mutex::new(Vec::new()),
            exports: Mutex::new(Vec::new()),
            gpus,
            local_streams,
            device_sync: OnceLock::new(),
            static_data: static_data.then(|| Mutex::new(None)),
            remote: OnceLock::new(),
        })
    }

    /// Sets the path to PEs of other nodes (once, at join).
    pub(crate) fn set_remote(&self, remote: Remote) {
        let _ = self.remote.set(remote);
    }

    /// The path to `pe` if it is a PE of another node (or every peer is reached through the
    /// network, `RSHMEM_TRANSPORT=ofi`).
    pub(crate) fn remote_to(&self, pe: Pe) -> Option<&Remote> {
        self.remote.get().filter(|remote| remote.reaches(pe))
    }

    /// The path to PEs of other nodes, if the run has one.
    pub(crate) fn remote(&self) -> Option<&Remote> {
        self.remote.get()
    }

    /// The PEs this process runs.
    pub(crate) fn local_pes(&self) -> std::ops::Range<u32> {
        self.first_pe..self.first_pe + self.gpus.len() as u32
    }

    /// Whether each PE is a process of its own (peers' memory comes through descriptors).
    pub(crate) fn multi_process(&self) -> bool {
        matches!(self.exchange, Exchange::Processes(_))
    }

    fn local_index(&self, pe: Pe) -> usize {
        assert!(
            self.local_pes().contains(&pe.0),
            "{pe} does not run in this process"
        );
        (pe.0 - self.first_pe) as usize
    }

    /// Local PE `pe`'s GPU.
    pub(crate) fn gpu(&self, pe: Pe) -> &Arc<Gpu> {
        &self.gpus[self.local_index(pe)]
    }

    /// Local PE `pe`'s stream for its own synchronous copies.
    pub(crate) fn local_stream(&self, pe: Pe) -> &Arc<CudaStream> {
        &self.local_streams[self.local_index(pe)]
    }

    /// Tells the launcher, when the run has one, that this process ends the job with
    /// `status` (the bootstrap's global exit), so that it ends the other ranks and names this
    /// one. Best effort: a client busy in an exchange is not waited for.
    pub(crate) fn global_exit(&self, status: i32) {
        if let Exchange::Processes(client) = &self.exchange
            && let Ok(client) = client.try_lock()
        {
            let _ = client.global_exit(status);
        }
    }

    /// Every PE's `mine`, in PE order: the bootstrap exchange of the run.
    pub(crate) fn exchange(
        &self,
        pe: Pe,
        mine: &[u8],
        deadline: Instant,
    ) -> Result<Exchanged, QueueError> {
        match &self.exchange {
            Exchange::Threads(rendezvous) => rendezvous.exchange(pe, mine, &self.start, deadline),
            Exchange::Processes(client) => {
                let wait_ns = deadline.0.saturating_sub(sync::nanos_since(&self.start));
                let until = std::time::Instant::now() + std::time::Duration::from_nanos(wait_ns);
                if let Some(gathered) = self.remote().and_then(|r| r.exchange(mine, until)) {
                    return gathered
                        .map(Exchanged::from)
                        .map_err(|e| QueueError::Deadline {
                            pe,
                            waiting_for: e,
                            deadline,
                        });
                }
                let mut client = client.lock().unwrap_or_else(|e| e.into_inner());
                client
                    .allgather(mine, until)
                    .map(Exchanged::from)
                    .map_err(|e| QueueError::Deadline {
                        pe,
                        waiting_for: format!("the bootstrap exchange between processes: {e}"),
                        deadline,
                    })
            }
        }
    }

    /// The base address of every PE's synchronisation memory for the device-side API
    /// ([`SYNC_BYTES`] of zeroed device memory on the PE's GPU, mapped for every GPU of the
    /// run). In one process it is made on first use, and `caller`'s context is current again
    /// when this returns; a multi-process run made it at launch ([`World::share_device_sync`]).
    ///
    /// # Errors
    /// The driver call that failed making it; the error is kept for the run.
    pub(crate) fn device_sync_bases(&self, caller: &Gpu) -> Result<Vec<u64>, DriverCallError> {
        let made = self.device_sync.get_or_init(|| {
            let access = self.ordinals();
            self.gpus
                .iter()
                .zip(&self.local_streams)
                .map(|(gpu, stream)| {
                    Vmm::new(&gpu.ctx, SYNC_BYTES, &access, stream, false).map(Some)
                })
                .collect()
        });
        // Making the memory bound each GPU's context to this thread in turn.
        caller.ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        made.as_ref()
            .map(|memory| {
                memory
                    .iter()
                    .map(|vmm| vmm.as_ref().map_or(0, Vmm::addr))
                    .collect()
            })
            .map_err(Clone::clone)
    }

    /// In a multi-process run, makes this process's synchronisation memory, shares it with
    /// every other process and maps theirs (collective: every process calls it at launch).
    ///
    /// # Errors
    /// A driver or bootstrap error, as text.
    pub(crate) fn share_device_sync(&self, pe: Pe, deadline: Instant) -> Result<(), String> {
        let gpu = self.gpu(pe);
        let mine = Vmm::new(
            &gpu.ctx,
            SYNC_BYTES,
            &[gpu.ordinal],
            self.local_stream(pe),
            true,
        )
        .map_err(|e| e.to_string())?;
        if let Some(remote) = self.remote() {
            // Before the exchange below: no kernel of another node reaches it before then.
            remote.publish_sync(mine.addr(), SYNC_BYTES);
        }
        let fd = mine.export_fd().map_err(|e| e.to_string())?;
        let shared = SharedMemory::of(&fd, mine.size());
        let all = self
            .exchange(pe, &shared.to_bytes(), deadline)
            .map_err(|e| e.to_string())?;
        let mut mine = Some(mine);
        let mut memory = Vec::with_capacity(all.len());
        for (peer, bytes) in all.iter().enumerate() {
            if peer == pe.idx() {
                memory.push(mine.take());
                continue;
            }
            if self.remote_to(Pe(peer as u32)).is_some() {
                // Its GPU memory is not mapped here: kernels do not reach it.
                memory.push(None);
                continue;
            }
            let theirs = SharedMemory::from_bytes(bytes)
                .ok_or_else(|| format!("PE {peer} sent a malformed synchronisation key"))?;
            let vmm = process::map_shared(&gpu.ctx, &theirs, &[gpu.ordinal])
                .map_err(|e| format!("mapping PE {peer}'s synchronisation memory: {e}"))?;
            memory.push(Some(vmm));
        }
        self.keep_export(fd);
        self.device_sync
            .set(Ok(memory))
            .map_err(|_| "the synchronisation memory was made twice".to_string())
    }

    /// The ordinals of this process's GPUs: who may access a segment made here (in a
    /// multi-process run, each importer grants its own GPU access to what it maps).
    pub(crate) fn ordinals(&self) -> Vec<u32> {
        let mut ordinals: Vec<u32> = self.gpus.iter().map(|gpu| gpu.ordinal).collect();
        // PEs may share a GPU; an access list names each GPU once.
        ordinals.sort_unstable();
        ordinals.dedup();
        ordinals
    }

    /// Whether `pe` already has a segment of `kind`.
    pub(crate) fn has_segment(&self, pe: Pe, kind: MemKind) -> bool {
        self.segments.lock().unwrap_or_else(|e| e.into_inner())[pe.idx()][kind.index()].is_some()
    }

    /// Keeps `pe`'s new segment of `kind` until the run ends.
    ///
    /// # Errors
    /// [`DeviceError::Lost`] if `pe` has one already.
    pub(crate) fn keep_segment(
        &self,
        pe: Pe,
        kind: MemKind,
        segment: Segment,
    ) -> Result<(), DeviceError> {
        let mut segments = self.segments.lock().unwrap_or_else(|e| e.into_inner());
        let slot = &mut segments[pe.idx()][kind.index()];
        if slot.is_some() {
            return Err(already_has(pe, kind));
        }
        *slot = Some(segment);
        Ok(())
    }

    /// Keeps a peer's memory mapped until the run ends.
    pub(crate) fn keep_import(&self, vmm: Vmm) {
        self.imports
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(vmm);
    }

    /// Keeps a peer's host memory mapped until the run ends.
    pub(crate) fn keep_host_import(&self, host: HostShared) {
        self.host_imports
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(host);
    }

    /// The memo of `Device::share_static_data` if this process may share its static data.
    pub(crate) fn static_data(&self) -> Option<&Mutex<Option<(SegmentKey, u64)>>> {
        self.static_data.as_ref()
    }

    /// Runs `grow` on `pe`'s growable `kind` segment; `None` if it has no such segment (none,
    /// or one that does not grow).
    pub(crate) fn with_growable<R>(
        &self,
        pe: Pe,
        kind: MemKind,
        grow: impl FnOnce(&mut Reservation) -> R,
    ) -> Option<R> {
        let mut segments = self.segments.lock().unwrap_or_else(|e| e.into_inner());
        match &mut segments[pe.idx()][kind.index()] {
            Some(Segment::Growable(reservation)) => Some(grow(reservation)),
            _ => None,
        }
    }

    /// Keeps `owner`'s growable segment of kind `kind_idx` as mapped for `importer`.
    pub(crate) fn keep_growable_import(
        &self,
        importer: Pe,
        owner: Pe,
        kind_idx: usize,
        reservation: Reservation,
    ) {
        self.growable_imports
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((importer, owner, kind_idx, reservation));
    }

    /// Runs `grow` on `owner`'s growable segment of kind `kind_idx` as `importer` mapped it;
    /// `None` if it did not.
    pub(crate) fn with_growable_import<R>(
        &self,
        importer: Pe,
        owner: Pe,
        kind_idx: usize,
        grow: impl FnOnce(&mut Reservation) -> R,
    ) -> Option<R> {
        let mut imports = self
            .growable_imports
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        imports
            .iter_mut()
            .find(|(i, o, k, _)| (*i, *o, *k) == (importer, owner, kind_idx))
            .map(|(_, _, _, reservation)| grow(reservation))
    }

    /// Keeps an exported descriptor open until the run ends (peers take copies of it).
    pub(crate) fn keep_export(&self, fd: OwnedFd) {
        self.exports
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(fd);
    }
}

/// The error of a second segment of one kind.
pub(crate) fn already_has(pe: Pe, kind: MemKind) -> DeviceError {
    DeviceError::Lost(format!("{pe} already has a {kind:?} segment"))
}
