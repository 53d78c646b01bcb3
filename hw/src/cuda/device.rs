//! [`CudaDevice`]: one PE's endpoint on its GPU.
//!
//! The PE's own memory is read and written with synchronous copies on a stream of the device
//! (through a pinned staging buffer, so that a copy has completed, not just been staged, when
//! the call returns); waits poll the word that way. Segment keys and the helpers that create
//! and keep segments are in `segments.rs`; the table of reachable segments in `reach.rs`.

use std::rc::Rc;
use std::sync::Arc;

use cudarc::driver::{CudaStream, sys};

use super::CudaBackend;
use super::chunks::NewChunk;
use super::error::{DriverCallError, During};
use super::host_shared::HostShared;
use super::memory::Segment;
use super::poll::poll_until;
use super::process::map_shared;
use super::queue::CudaQueue;
use super::reach::PeCtx;
use super::reservation::Reservation;
use super::segments::Key;
use super::staging::StagingPool;
use super::world::World;
use crate::backend::{Device, WaitSpec, waiting_for_any};
use crate::caps::Caps;
use crate::common::cpu_atomics;
use crate::common::fd_sharing::take_shared;
use crate::error::{DeviceError, QueueError};
use crate::exchanged::Exchanged;
use crate::sync;
use crate::sync::cross_process::{Ordering, fence};
use crate::topology::Topology;
use crate::types::{Instant, LocalRange, MemKind, Pe, RemoteRange, SegmentKey};

/// One PE's endpoint: its GPU, its memory, waits, clock and bootstrap, on a thread of its own
/// with the GPU's primary context current.
#[derive(Debug)]
pub struct CudaDevice {
    pub(super) ctx: Rc<PeCtx>,
    /// The stream of this PE's own synchronous copies.
    pub(super) local: Arc<CudaStream>,
}

impl CudaDevice {
    /// PE `pe`'s device; call it on the PE's thread, which it binds to the GPU's context.
    ///
    /// # Panics
    /// If the context cannot be made current (the GPU is lost).
    pub(crate) fn new(world: Arc<World>, pe: Pe) -> CudaDevice {
        let gpu = Arc::clone(world.gpu(pe));
        if let Err(e) = gpu.ctx.bind_to_thread().during("cuCtxSetCurrent") {
            panic!("{pe} cannot use GPU {}: {e}", gpu.ordinal);
        }
        let local = Arc::clone(world.local_stream(pe));
        let staging = StagingPool::new(Arc::clone(&gpu.ctx));
        CudaDevice {
            ctx: Rc::new(PeCtx::new(world, pe, gpu, staging)),
            local,
        }
    }

    /// What the device shares with its queues and kernels.
    pub(crate) fn pe_ctx(&self) -> &Rc<PeCtx> {
        &self.ctx
    }

    /// Copies `len` bytes from `src` to `dst` (addresses of any memory of the run) and waits
    /// until the copy has completed.
    fn copy_sync(&self, dst: u64, src: u64, len: usize) -> Result<(), DriverCallError> {
        // SAFETY: both ranges are mapped for this GPU (segments of the run or pinned staging)
        // and stay so until the copy completes, which the synchronisation below waits for.
        unsafe { sys::cuMemcpyAsync(dst, src, len, self.local.cu_stream()) }
            .during("cuMemcpyAsync")?;
        self.local.synchronize().during("cuStreamSynchronize")
    }

    /// Reads `out.len()` bytes at address `src` of this PE's memory of `kind`: host memory
    /// with the CPU, then an Acquire fence (as a get); GPU memory with a synchronous copy.
    fn read(&self, kind: MemKind, src: u64, out: &mut [u8]) -> Result<(), DriverCallError> {
        if out.is_empty() {
            return Ok(());
        }
        if kind != MemKind::Device {
            // SAFETY: the caller checked the range against the segment (`PeCtx::addr`), which
            // is host memory mapped in this process; `out` is a Rust slice.
            unsafe { std::ptr::copy_nonoverlapping(src as *const u8, out.as_mut_ptr(), out.len()) };
            // Why Acquire: later reads are not reordered before these loads (AArch64).
            fence(Ordering::Acquire);
            return Ok(());
        }
        let buffer = self.ctx.staging.borrow_mut().take(out.len())?;
        self.copy_sync(buffer.addr(), src, out.len())?;
        // SAFETY: the copy into the buffer has completed (copy_sync waited for it).
        out.copy_from_slice(unsafe { buffer.bytes(out.len()) });
        self.ctx.staging.borrow_mut().give_back(buffer);
        Ok(())
    }

    /// Writes `data` at address `dst` of this PE's memory of `kind`: host memory with the
    /// CPU, GPU memory with a synchronous copy.
    fn write(&self, kind: MemKind, dst: u64, data: &[u8]) -> Result<(), DriverCallError> {
        if data.is_empty() {
            return Ok(());
        }
        if kind != MemKind::Device {
            // SAFETY: as in `read`. Peers see the bytes after this PE's quiet or barrier.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst as *mut u8, data.len()) };
            return Ok(());
        }
        let mut buffer = self.ctx.staging.borrow_mut().take(data.len())?;
        // SAFETY: a buffer in the pool has no copy in flight.
        unsafe { buffer.bytes_mut(data.len()) }.copy_from_slice(data);
        self.copy_sync(dst, buffer.addr(), data.len())?;
        self.ctx.staging.borrow_mut().give_back(buffer);
        Ok(())
    }

    /// Reads the word of `spec` once; `Some(value)` if the comparison holds.
    fn check(&self, spec: &WaitSpec) -> Result<Option<u64>, DriverCallError> {
        let value = self.word(spec)?;
        let width = spec.width;
        Ok(spec
            .cmp
            .eval(width, spec.signed, value, width.truncate(spec.value))
            .then_some(value))
    }

    /// The current value of the word of `spec`, zero-extended.
    fn word(&self, spec: &WaitSpec) -> Result<u64, DriverCallError> {
        let len = spec.width.bytes();
        assert_eq!(spec.word.len, len, "wait: word length is not its width");
        let addr = self
            .ctx
            .addr(self.ctx.pe, spec.word.kind, spec.word.offset, len, "wait");
        if spec.word.kind != MemKind::Device {
            // SAFETY: the word is inside a host segment of this PE (checked by `addr`), which
            // peers update with CPU atomics of its width. Acquire: whoever sees the value sees
            // what its writer stored before (the writers' RMWs are AcqRel).
            return Ok(unsafe {
                cpu_atomics::load_at(addr as *mut u8, spec.width, Ordering::Acquire)
            });
        }
        let mut le = [0u8; 8];
        self.read(spec.word.kind, addr, &mut le[..len as usize])?;
        Ok(u64::from_le_bytes(le))
    }

    /// Panics with what failed: the device methods that cannot return an error have lost
    /// their GPU.
    fn lost(&self, what: &str, e: DriverCallError) -> ! {
        panic!(
            "{} on GPU {}: {what}: {e}",
            self.ctx.pe, self.ctx.gpu.ordinal
        )
    }
}

impl Device for CudaDevice {
    type B = CudaBackend;

    fn pe(&self) -> Pe {
        self.ctx.pe
    }

    fn n_pes(&self) -> u32 {
        self.ctx.world.n_pes
    }

    fn caps(&self) -> &Caps {
        &self.ctx.world.caps
    }

    fn topology(&self) -> &Topology {
        &self.ctx.world.topology
    }

    /// Nanoseconds since the run started, on the host's monotonic clock.
    fn now(&self) -> Instant {
        Instant(sync::nanos_since(&self.ctx.world.start))
    }

    /// A `Device` segment is physical memory of this PE's GPU (`cuMemCreate`, rounded up to
    /// the allocation granularity) mapped at a reserved address that every GPU of the run may
    /// read and write; a `Host` segment is pinned host memory in one process, and a memfd
    /// that every PE maps, registered with CUDA, between processes. Both are zeroed before
    /// this returns and live until the run ends.
    fn create_segment(&self, kind: MemKind, len_bytes: u64) -> Result<SegmentKey, DeviceError> {
        self.check_new_segment(kind, len_bytes)?;
        let (segment, shared) = self.new_segment(kind, len_bytes)?;
        let key = Key {
            pe: self.ctx.pe,
            kind_idx: kind.index(),
            base: segment.addr(),
            len_bytes,
            reserved_bytes: 0,
            shared,
        };
        self.keep_own(kind, segment, key)
    }

    /// A growable `Device` segment is an address range of `len_bytes` (rounded up to the
    /// allocation granularity) into which physical memory of this PE's GPU is mapped chunk by
    /// chunk: the first `backed_bytes` now, more on [`Device::grow_segment`]. In one process
    /// every GPU of the run may use each chunk at once; between processes each chunk is
    /// exported and the peers map it into a range they reserved as large. A `Host` segment is
    /// created whole, as by [`Device::create_segment`].
    fn create_growable_segment(
        &self,
        kind: MemKind,
        len_bytes: u64,
        backed_bytes: u64,
    ) -> Result<SegmentKey, DeviceError> {
        if kind == MemKind::Host {
            return self.create_segment(kind, len_bytes);
        }
        let world = &self.ctx.world;
        // Why only the backed part against the GPU's memory: the rest is address space, which
        // costs nothing until a growth maps memory there, and a growth the GPU cannot back
        // fails then (NVSHMEM reserves its NVSHMEM_MAX_MEMORY_PER_GPU, 128 GiB, the same way).
        self.check_new_segment(kind, backed_bytes.min(len_bytes))?;
        let shareable = world.multi_process();
        let oom = |e: DriverCallError| self.or_out_of_memory(e, kind, len_bytes);
        let mut reservation =
            Reservation::new(&self.ctx.gpu.ctx, len_bytes, shareable).map_err(oom)?;
        let first = reservation
            .grow(
                backed_bytes.min(len_bytes),
                &self.chunk_access(),
                &self.local,
                shareable,
            )
            .map_err(oom)?;
        let shared = match first {
            Some((size, Some(fd))) => Some(self.keep_export(fd, size)),
            _ => None,
        };
        let key = Key {
            pe: self.ctx.pe,
            kind_idx: kind.index(),
            base: reservation.addr(),
            len_bytes: reservation.mapped() as u64,
            reserved_bytes: reservation.size() as u64,
            shared,
        };
        self.keep_own(kind, Segment::Growable(reservation), key)
    }

    /// Maps new memory into this PE's growable segment, exchanges the new chunk's descriptor
    /// (between processes; in one process the exchange only waits for every PE to have
    /// grown), maps the peers' chunks into this process's ranges of theirs, and records every
    /// PE's new length.
    fn grow_segment(
        &self,
        kind: MemKind,
        backed_bytes: u64,
        deadline: Instant,
    ) -> Result<(), DeviceError> {
        let world = &self.ctx.world;
        let pe = self.ctx.pe;
        let shareable = world.multi_process();
        let access = self.chunk_access();
        let grown = world
            .with_growable(pe, kind, |reservation| {
                let room = reservation.size() as u64;
                reservation
                    .grow(backed_bytes, &access, &self.local, shareable)
                    .map_err(|e| match self.or_out_of_memory(e, kind, backed_bytes) {
                        // Past the segment's room, the room is the limit to name.
                        DeviceError::OutOfMemory { limit_bytes, .. } => DeviceError::OutOfMemory {
                            kind,
                            requested_bytes: backed_bytes,
                            limit_bytes: limit_bytes.min(room),
                        },
                        other => other,
                    })
            })
            .unwrap_or_else(|| {
                Err(DeviceError::Lost(format!(
                    "{pe} has no growable {kind:?} segment to grow (contract violation)"
                )))
            });
        let mine = match grown {
            Err(e) => NewChunk::Refused(e),
            Ok(Some((size, Some(fd)))) => NewChunk::Mapped(Some(self.keep_export(fd, size))),
            Ok(Some((_, None))) => NewChunk::Mapped(None),
            Ok(None) => NewChunk::Nothing,
        };
        let what = format!("growing the {kind:?} segments to {backed_bytes} bytes");
        self.share_chunk(kind, mine, &what, deadline)
    }

    /// Checks that the program's buffer is one allocation of this PE's GPU mapped with the
    /// driver's virtual-memory API (`cuMemRetainAllocationHandle`, `cuMemGetAddressRange`,
    /// its properties), exportable between processes, then maps its allocation after what the
    /// segment maps and shares it like a growth's chunk (`chunks.rs`).
    fn attach_buffer(
        &self,
        kind: MemKind,
        offset_bytes: u64,
        buffer_addr: u64,
        len_bytes: u64,
        deadline: Instant,
    ) -> Result<(), DeviceError> {
        self.attach(kind, offset_bytes, buffer_addr, len_bytes, deadline)
    }

    /// Unmaps the buffer's chunk from this PE's segment and, between processes, from this
    /// process's mappings of the peers' segments (`chunks.rs`).
    fn detach_buffer(
        &self,
        kind: MemKind,
        offset_bytes: u64,
        len_bytes: u64,
    ) -> Result<(), DeviceError> {
        self.detach(kind, offset_bytes, len_bytes)
    }

    /// In one process a segment's address is valid on every GPU of the run (its access was
    /// granted to all of them at creation), so importing records the address the key names.
    /// A segment of another process is mapped here from the descriptor its key names: GPU
    /// memory for this PE's GPU (`process.rs`), host memory as a shared mapping registered
    /// with CUDA (`host_shared.rs`).
    fn import_segment(&self, peer: Pe, kind: MemKind, key: &SegmentKey) -> Result<(), DeviceError> {
        let import_error = |reason: &str| DeviceError::Import {
            peer,
            kind,
            reason: reason.into(),
        };
        if peer.0 >= self.ctx.world.n_pes {
            return Err(import_error("no such PE"));
        }
        let key = Key::from_bytes(&key.0)
            .ok_or_else(|| import_error("the key is not a CUDA segment key"))?;
        if key.pe != peer || key.kind_idx != kind.index() {
            return Err(import_error("the key describes another segment"));
        }
        if self.ctx.world.remote_to(peer).is_some() {
            // A PE of another node: its memory is reached through its proxy, not mapped.
            return Ok(());
        }
        let (base, len_bytes) = match key.shared {
            Some(shared) if !shared.is_local() && key.reserved_bytes > 0 => {
                let gpu = &self.ctx.gpu;
                let mut reservation = Reservation::new(&gpu.ctx, key.reserved_bytes, true)
                    .map_err(|e| import_error(&e.to_string()))?;
                let (fd, size) = take_shared(&shared).map_err(|e| import_error(&e))?;
                reservation
                    .map_imported(&fd, size, &[gpu.ordinal])
                    .map_err(|e| import_error(&e.to_string()))?;
                let seen = (reservation.addr(), reservation.mapped() as u64);
                self.ctx
                    .world
                    .keep_growable_import(self.ctx.pe, peer, key.kind_idx, reservation);
                seen
            }
            Some(shared) if !shared.is_local() && kind != MemKind::Device => {
                let host = HostShared::import(&self.ctx.gpu.ctx, &shared)
                    .map_err(|reason| import_error(&reason))?;
                let seen = (host.addr(), host.len() as u64);
                self.ctx.world.keep_host_import(host);
                seen
            }
            Some(shared) if !shared.is_local() => {
                let gpu = &self.ctx.gpu;
                let vmm = map_shared(&gpu.ctx, &shared, &[gpu.ordinal])
                    .map_err(|reason| import_error(&reason))?;
                let base = vmm.addr();
                self.ctx.world.keep_import(vmm);
                (base, key.len_bytes)
            }
            _ => (key.base, key.len_bytes),
        };
        self.ctx.set_reachable(peer, key.kind_idx, base, len_bytes);
        Ok(())
    }

    /// The segment's address as this PE knows it: a `Device` segment is mapped for this
    /// PE's GPU (in this process at creation, or from the owner's exported descriptor); a
    /// `Host` or `Static` segment is host memory of this process (pinned, or a shared mapping
    /// registered with CUDA), portable and device-mapped, so its address is valid on the host
    /// and, through unified addressing, in kernels too.
    fn load_store_addr(&self, range: RemoteRange) -> Option<u64> {
        if self.ctx.world.remote_to(range.pe).is_some() {
            return None;
        }
        Some(self.ctx.addr(
            range.pe,
            range.kind,
            range.offset,
            range.len,
            "load_store_addr",
        ))
    }

    /// Between processes, when [`super::CudaBuilder::static_data`] allowed it: remaps the
    /// main program's data onto a memfd the first time (`crate::common::static_data`, as the
    /// process backend does), registered with CUDA like a `Host` segment; later calls return
    /// the same key. PEs that are threads of one process share one copy of the data: `None`.
    fn share_static_data(&self) -> Result<Option<(SegmentKey, u64)>, DeviceError> {
        let world = &self.ctx.world;
        let Some(memo) = world.static_data() else {
            return Ok(None);
        };
        let mut memo = memo.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(done) = memo.as_ref() {
            return Ok(Some(done.clone()));
        }
        let (fd, host) = HostShared::static_data(&self.ctx.gpu.ctx).map_err(|e| {
            DeviceError::Lost(format!("cannot share the program's static data: {e}"))
        })?;
        let len_bytes = host.len() as u64;
        let key = Key {
            pe: self.ctx.pe,
            kind_idx: MemKind::Static.index(),
            base: host.addr(),
            len_bytes,
            reserved_bytes: 0,
            shared: Some(self.keep_export(fd, host.len())),
        };
        let key = self.keep_own(MemKind::Static, Segment::Shared(host), key)?;
        *memo = Some((key.clone(), len_bytes));
        Ok(Some((key, len_bytes)))
    }

    fn exchange(&self, mine: &[u8], deadline: Instant) -> Result<Exchanged, QueueError> {
        self.ctx.world.exchange(self.ctx.pe, mine, deadline)
    }

    fn set_word_names(&self, names: std::sync::Arc<crate::WordNames>) {
        *self.ctx.names.borrow_mut() = Some(names);
    }

    fn create_queue(&self) -> Result<CudaQueue, DeviceError> {
        CudaQueue::new(Rc::clone(&self.ctx)).map_err(DeviceError::from)
    }

    /// A synchronous copy from the GPU; from host memory, CPU loads.
    ///
    /// # Ordering
    /// Reads memory after every copy and kernel that completed before it (this PE's own
    /// queues included once their tickets completed); NVLink writes of peers are visible
    /// once they completed. Host memory: loads then an Acquire fence, as the process backend.
    ///
    /// # Panics
    /// On a contract violation, or if the GPU is lost.
    fn read_local(&self, src: LocalRange, out: &mut [u8]) {
        assert_eq!(
            src.len,
            out.len() as u64,
            "read_local: range and buffer lengths differ"
        );
        let addr = self
            .ctx
            .addr(self.ctx.pe, src.kind, src.offset, src.len, "read_local");
        if let Err(e) = self.read(src.kind, addr, out) {
            self.lost("read_local", e);
        }
    }

    /// A synchronous copy to the GPU, complete when this returns; to host memory, CPU stores.
    ///
    /// # Ordering
    /// Visible to this PE at once. GPU memory: to peers as soon as it returns (stronger than
    /// the contract's "after a later quiet or barrier"); host memory: after a later quiet or
    /// barrier, whose SeqCst fence or release atomic orders the stores.
    ///
    /// # Panics
    /// On a contract violation, or if the GPU is lost.
    fn write_local(&self, dst: LocalRange, data: &[u8]) {
        assert_eq!(
            dst.len,
            data.len() as u64,
            "write_local: range and data lengths differ"
        );
        let addr = self
            .ctx
            .addr(self.ctx.pe, dst.kind, dst.offset, dst.len, "write_local");
        if let Err(e) = self.write(dst.kind, addr, data) {
            self.lost("write_local", e);
        }
    }

    /// Polls every word in turn with synchronous copies, pausing from about 1 µs up to 100 µs
    /// between rounds of reads. [`Device::wait_until`] is the one-word case.
    ///
    /// # Ordering
    /// The value read is in memory, so the update that wrote it has completed. Every peer
    /// operation is an NVLink copy or a system-scope atomic whose completion makes it visible
    /// in GPU memory, so after the wait every delivered update is visible to this PE's reads:
    /// no separate consistency step is needed.
    fn wait_until_any(
        &self,
        specs: &[WaitSpec],
        deadline: Instant,
    ) -> Result<(usize, u64), QueueError> {
        assert!(!specs.is_empty(), "wait_until_any: no word to wait on");
        let start = &self.ctx.world.start;
        let first_holding = || -> Result<Option<(usize, u64)>, DriverCallError> {
            for (i, spec) in specs.iter().enumerate() {
                if let Some(value) = self.check(spec)? {
                    return Ok(Some((i, value)));
                }
            }
            Ok(None)
        };
        match poll_until(start, deadline, first_holding)? {
            Some(found) => Ok(found),
            None => {
                let holds = specs
                    .iter()
                    .map(|spec| self.word(spec))
                    .collect::<Result<Vec<u64>, _>>()?;
                Err(QueueError::Deadline {
                    pe: self.ctx.pe,
                    waiting_for: waiting_for_any(specs, &holds, self.ctx.names.borrow().as_deref()),
                    deadline,
                })
            }
        }
    }

    /// One read of the word.
    ///
    /// # Ordering
    /// As [`Device::wait_until`] when it returns `Some`.
    ///
    /// # Panics
    /// If the GPU is lost.
    fn test(&self, spec: WaitSpec) -> Option<u64> {
        self.check(&spec).unwrap_or_else(|e| self.lost("test", e))
    }
}
