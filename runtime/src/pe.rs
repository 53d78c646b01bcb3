//! [`PeState`]: what one PE's contexts share (its device, symmetric heaps, configuration and
//! place in the run), and the checks every operation makes before it reaches the hardware.

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use hw::{Backend, Caps, Device, Duration, Instant, LocalRange, Pe, RemoteRange};

use crate::config::Config;
use crate::error::ShmemError;
use crate::exit::ExitFlag;
use crate::memory::allocator::{Access, Span};
use crate::memory::heaps::Heaps;
use crate::memory::local::LocalWindow;
use crate::memory::space;
use crate::memory::sym::{AtomicElement, Sym, SymAddr};
use crate::p2p::lock::HeldLocks;

/// One PE's state, shared by the default context and every context the PE creates: the
/// device, the symmetric heaps and the PE's place in the run.
///
/// Reached through [`crate::Ctx`] (and so through [`crate::Shmem`]), which dereference to it.
pub struct PeState<B: Backend> {
    pub(crate) device: B::Device,
    // Why RefCell: allocation mutates the heaps behind `&self`, and only this PE uses them.
    pub(crate) heaps: RefCell<Heaps>,
    pub(crate) config: Config,
    pub(crate) my_pe: u32,
    pub(crate) n_pes: u32,
    /// Where a global_exit of any PE of this process shows (`exit.rs`).
    pub(crate) exit: Arc<ExitFlag>,
    /// The locks this PE holds (`p2p/lock.rs`).
    pub(crate) locks: HeldLocks,
    /// Where this process maps its own part of each heap (`memory/local.rs`).
    pub(crate) local_windows: Vec<LocalWindow>,
    /// This PE's words in the program's terms, which the backend's reports of waits use.
    pub(crate) names: Arc<hw::WordNames>,
}

impl<B: Backend> fmt::Debug for PeState<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PeState")
            .field("my_pe", &self.my_pe)
            .field("n_pes", &self.n_pes)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<B: Backend> PeState<B> {
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
    /// `KernelArg::Heap(sym.addr().0)` for an object of the device heap (its addresses are
    /// device segment offsets, the same on every PE).
    pub fn device(&self) -> &B::Device {
        &self.device
    }

    /// The configuration this PE runs with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The deadline of a blocking call that starts now.
    ///
    /// Every blocking call starts here, so this is also where a PE stops once another PE
    /// called global_exit (`exit.rs`): it unwinds rather than block.
    pub(crate) fn deadline(&self) -> Instant {
        self.exit.stop_if_exited();
        deadline(&self.device, &self.config)
    }

    /// Checks `pe` and `access`, and returns the range they name on `pe`, in the heap the
    /// access's address lies in. Unwinds the PE's program if the run was ended by global_exit.
    pub(crate) fn remote_range(&self, access: Access, pe: u32) -> Result<RemoteRange, ShmemError> {
        self.exit.stop_if_exited();
        let pe = self.check_pe(pe)?;
        Ok(remote(self.heaps.borrow().check(access)?, pe))
    }

    /// Checks `access`, and returns the range it names on this PE. Unwinds the PE's program
    /// if the run was ended by global_exit, so that a loop over local reads or tests stops.
    pub(crate) fn local_range(&self, access: Access) -> Result<LocalRange, ShmemError> {
        self.exit.stop_if_exited();
        Ok(local(self.heaps.borrow().check(access)?))
    }

    pub(crate) fn check_pe(&self, pe: u32) -> Result<Pe, ShmemError> {
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
pub(crate) fn deadline<D: Device>(device: &D, config: &Config) -> Instant {
    device
        .now()
        .after(Duration(config.wait_timeout_ms.saturating_mul(1_000_000)))
}

/// `span` of `pe`'s memory, in the segment of the heap whose window holds it.
pub(crate) fn remote(span: Span, pe: Pe) -> RemoteRange {
    let (kind, offset) = space::locate(span.offset);
    RemoteRange {
        pe,
        kind,
        offset,
        len: span.len_bytes,
    }
}

/// `span` of this PE's memory, in the segment of the heap whose window holds it.
pub(crate) fn local(span: Span) -> LocalRange {
    let (kind, offset) = space::locate(span.offset);
    LocalRange {
        kind,
        offset,
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
