//! [`Shmem`]: one PE's handle to the runtime, its setup and teardown, and the checks every
//! operation makes before it reaches the hardware.
//!
//! The operations themselves live in `impl` blocks of their own files: `memory.rs`, `rma.rs`,
//! `amo.rs`, `wait.rs`, `signal.rs` and `ordering.rs`.

use std::cell::RefCell;
use std::fmt;

use hw::{
    Backend, Caps, Device, Duration, Instant, LocalRange, MemKind, Pe, RemoteRange, SegmentKey,
};

use crate::TRACING_TARGET;
use crate::config::Config;
use crate::error::ShmemError;
use crate::heap::{Access, Heap, Span};
use crate::ordering::Barrier;
use crate::sym::{AtomicElement, Sym, SymAddr};

/// The memory kind of the symmetric heap: GPU memory, the default of GPU-centric SHMEM
/// (SPEC section 5).
const HEAP_KIND: MemKind = MemKind::Device;

/// One PE's handle to the runtime: the default context, the symmetric heap and the PE's
/// place in the run. [`crate::run()`] creates one per PE and hands it to the PE's program.
///
/// A `Shmem` belongs to its PE: it is not `Sync` (nor `Send` when its device is not), and its
/// operations take `&self` because one PE's program is sequential.
pub struct Shmem<B: Backend> {
    pub(crate) device: B::Device,
    /// The queue of the default context.
    pub(crate) queue: B::Queue,
    // Why RefCell: allocation mutates the heap behind `&self`, and only this PE uses it.
    pub(crate) heap: RefCell<Heap>,
    pub(crate) config: Config,
    pub(crate) barrier: Barrier,
    pub(crate) my_pe: u32,
    pub(crate) n_pes: u32,
}

impl<B: Backend> fmt::Debug for Shmem<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shmem")
            .field("my_pe", &self.my_pe)
            .field("n_pes", &self.n_pes)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<B: Backend> Shmem<B> {
    /// Sets up this PE: creates its heap segment, trades segment keys with every PE, imports
    /// every segment (its own included, so a PE reaches itself like any peer), creates the
    /// default queue and the barrier counters, and synchronises with every PE.
    ///
    /// Collective: every PE of the run must call it.
    ///
    /// # Errors
    /// [`ShmemError::HeapSegment`] if the device refuses the heap's memory;
    /// [`ShmemError::Device`] if a peer's segment cannot be imported or no queue can be had;
    /// [`ShmemError::Queue`] if a peer never arrives; [`ShmemError::HeapExhausted`] if the
    /// heap cannot even hold the barrier counters.
    pub(crate) fn init(device: B::Device, config: Config) -> Result<Shmem<B>, ShmemError> {
        let my_pe = device.pe().0;
        let n_pes = device.n_pes();
        if config.info && my_pe == 0 {
            config.log();
        }
        let heap_bytes = config.symmetric_size_bytes;
        tracing::debug!(target: TRACING_TARGET, pe = my_pe, n_pes, bytes = heap_bytes, "init");
        let key = device
            .create_segment(HEAP_KIND, heap_bytes)
            .map_err(|source| ShmemError::HeapSegment { heap_bytes, source })?;
        let keys = device.exchange(&key.0, deadline(&device, &config))?;
        for (peer, key) in (0..n_pes).zip(keys) {
            device.import_segment(Pe(peer), HEAP_KIND, &SegmentKey(key))?;
        }
        let queue = device.create_queue()?;
        let mut heap = Heap::new(heap_bytes);
        // Why now: as the first allocation it lands at the same offset on every PE.
        let barrier = Barrier::new(&mut heap, n_pes)?;
        let shmem = Shmem {
            device,
            queue,
            heap: RefCell::new(heap),
            config,
            barrier,
            my_pe,
            n_pes,
        };
        shmem.sync_all()?;
        Ok(shmem)
    }

    /// Tears this PE down: completes its operations and waits for every PE to get here, so
    /// no peer still targets this PE's memory when it goes away.
    ///
    /// # Errors
    /// As [`Shmem::barrier_all`].
    pub(crate) fn finalize(&self) -> Result<(), ShmemError> {
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, "finalize");
        self.barrier_all()
    }

    /// The number of this PE, in `0..n_pes()`.
    pub fn my_pe(&self) -> u32 {
        self.my_pe
    }

    /// The number of PEs in the run.
    pub fn n_pes(&self) -> u32 {
        self.n_pes
    }

    /// The device clock in nanoseconds: virtual time on the simulator.
    pub fn now_ns(&self) -> u64 {
        self.device.now().0
    }

    /// What the backend offers.
    pub fn caps(&self) -> &Caps {
        self.device.caps()
    }

    /// This PE's device of the backend, for what the runtime does not wrap. With the CUDA
    /// backend that is the device-side API: `CudaDevice::compile_kernel` compiles a kernel
    /// behind `rshmem_device.cuh`, and a symmetric object is passed to it as
    /// `KernelArg::Heap(sym.addr().0)` (heap offsets are the same on every PE).
    pub fn device(&self) -> &B::Device {
        &self.device
    }

    /// The default context's queue. Work launched on it (a device-API kernel) is ordered with
    /// this PE's operations on the default context, and [`Shmem::quiet`] waits for it.
    pub fn queue(&self) -> &B::Queue {
        &self.queue
    }

    /// The configuration this PE runs with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The deadline of a blocking call that starts now.
    pub(crate) fn deadline(&self) -> Instant {
        deadline(&self.device, &self.config)
    }

    /// Checks `pe` and `access`, and returns the range they name on `pe`.
    pub(crate) fn remote_range(&self, access: Access, pe: u32) -> Result<RemoteRange, ShmemError> {
        let pe = self.check_pe(pe)?;
        Ok(remote(self.heap.borrow().check(access)?, pe))
    }

    /// Checks `access`, and returns the range it names on this PE.
    pub(crate) fn local_range(&self, access: Access) -> Result<LocalRange, ShmemError> {
        Ok(local(self.heap.borrow().check(access)?))
    }

    fn check_pe(&self, pe: u32) -> Result<Pe, ShmemError> {
        if pe < self.n_pes {
            Ok(Pe(pe))
        } else {
            Err(ShmemError::PeOutOfRange {
                pe,
                n_pes: self.n_pes,
            })
        }
    }
}

/// The deadline of a blocking call that starts now on `device`.
fn deadline<D: Device>(device: &D, config: &Config) -> Instant {
    device
        .now()
        .after(Duration(config.wait_timeout_ms.saturating_mul(1_000_000)))
}

/// `span` of `pe`'s heap.
pub(crate) fn remote(span: Span, pe: Pe) -> RemoteRange {
    RemoteRange {
        pe,
        kind: HEAP_KIND,
        offset: span.offset,
        len: span.len_bytes,
    }
}

/// `span` of this PE's heap.
pub(crate) fn local(span: Span) -> LocalRange {
    LocalRange {
        kind: HEAP_KIND,
        offset: span.offset,
        len: span.len_bytes,
    }
}

/// What a byte operation on `len_bytes` at `addr` claims: no alignment, no known owner.
pub(crate) fn byte_access(addr: SymAddr, len_bytes: u64) -> Access {
    Access {
        offset: addr.0,
        len_bytes,
        align: 1,
        owner: None,
    }
}

/// What an operation on the single atomic word `sym` claims: it must be one element, aligned
/// to the word's width.
///
/// # Errors
/// [`ShmemError::LengthMismatch`] if `sym` is not one element.
pub(crate) fn word_access<T: AtomicElement>(sym: Sym<T>) -> Result<Access, ShmemError> {
    same_len(sym.len(), 1)?;
    Ok(Access {
        align: T::WIDTH.bytes(),
        ..sym.access()
    })
}

/// Checks that the other side of an operation on a view of `expected` elements has as many.
///
/// # Errors
/// [`ShmemError::LengthMismatch`] if not.
pub(crate) fn same_len(expected: usize, actual: usize) -> Result<(), ShmemError> {
    if expected == actual {
        Ok(())
    } else {
        Err(ShmemError::LengthMismatch { expected, actual })
    }
}
