//! The host backend: one OS thread per PE in one process, symmetric segments in host memory.
//!
//! It is the first backend with real concurrency, and exists so that the synchronisation the
//! runtime depends on (waits, signals, barrier counters, quiet, the bootstrap rendezvous) is
//! real code that loom and shuttle can check: everything here is written against the facade
//! `crate::sync`. What the CUDA backend reuses of it (the rendezvous, the thread-per-PE launch
//! loop) lives in `crate::common`.
//!
//! Design:
//!
//! - **Completion at issue.** The issuing thread performs every operation before returning:
//!   a put is its stores, a get its loads, an atomic the matching atomic read-modify-write on
//!   the target word. Tickets are complete when issued. This is a legal and strong
//!   implementation of the contract; why each ordering is what it is is in `queue.rs`.
//! - **Memory.** A segment is a zero-filled allocation of `AtomicU64` words that the OS maps
//!   lazily, so a 1 GiB heap costs only the pages written. Byte ranges are copied word by
//!   word; partial words are merged with a CAS loop; 32-bit atomics are CAS loops on half a
//!   word (`segment.rs`).
//! - **Waits block.** `wait_until` checks the word, then sleeps on the PE's condvar; a writer
//!   to a PE's memory wakes it if it may sleep, with a store-buffering handshake of two
//!   `fence(SeqCst)` that needs no lock on the fast path (`waker.rs`). Nothing spins, which is
//!   what loom and shuttle need.
//! - **Time.** [`crate::Device::now`] is nanoseconds since the run started (a monotonic
//!   clock); waits and the exchange give up at their deadline with [`crate::QueueError::Deadline`]
//!   naming the PE and what it waited for. Under the model checkers there is no time: a wait
//!   that is never satisfied is a deadlock the checker reports.
//! - **Bootstrap.** [`crate::Device::exchange`] is a reusable, generation-counted all-gather
//!   under one lock (`crate::common::rendezvous`, which the CUDA backend uses too).
//!
//! Not provided: deadlock detection beyond the deadline (a PE that panics leaves the others
//! waiting until their deadlines), and InfiniBand's delayed visibility (this backend is
//! load/store everywhere).

mod device;
mod queue;
mod segment;
mod waker;
pub(crate) mod world;

use crate::backend::{Backend, LaunchOutput, Launcher};
use crate::caps::{Caps, Semantics};
use crate::common::threads::run_pe_threads;
use crate::error::LaunchError;
use crate::sync::{self, Arc};
use crate::topology::Topology;
use crate::types::Pe;

pub use device::HostDevice;
pub use queue::HostQueue;

use world::{Strength, World};

/// The largest segment a host PE may create: 64 GiB of address space (memory is committed
/// only when written, so this is a limit, not a cost).
const MAX_SEGMENT_BYTES: u64 = 64 << 30;

/// The host backend as a [`Backend`].
#[derive(Debug)]
pub enum HostBackend {}

impl Backend for HostBackend {
    type Device = HostDevice;
    type Queue = HostQueue;
}

/// A configured host run, ready to launch PEs.
#[derive(Debug)]
pub struct Host {
    topology: Topology,
    n_pes: u32,
    semantics: Semantics,
    strength: Strength,
}

/// Configures a [`Host`].
#[derive(Debug)]
pub struct HostBuilder {
    topology: Topology,
    n_pes: Option<u32>,
    semantics: Semantics,
    strength: Strength,
}

/// What a host run reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostReport {
    /// How many PEs ran.
    pub n_pes: u32,
    /// Wall-clock time of the run in nanoseconds (0 under the model checkers).
    pub wall_ns: u64,
}

/// An ordering of the backend weakened on purpose, so that a loom model can show that it
/// catches the bug (loom builds only).
#[cfg(rshmem_loom)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weakening {
    /// put-with-signal's signal update is Relaxed instead of AcqRel: the data may be unseen
    /// by a PE that sees the signal.
    RelaxedSignal,
    /// The wake-up handshake has no `fence(SeqCst)`s: a wake-up can be lost (a deadlock).
    NoWakeFence,
}

impl HostBuilder {
    /// Sets how many PEs run (default: one per GPU of the topology).
    pub fn pes(mut self, n_pes: u32) -> Self {
        self.n_pes = Some(n_pes);
        self
    }

    /// Sets the ordering rules the run declares in its [`Caps`] (default NVSHMEM; the backend
    /// is stronger than both).
    pub fn semantics(mut self, semantics: Semantics) -> Self {
        self.semantics = semantics;
        self
    }

    /// Weakens one ordering of the backend, to show that a model checker catches it.
    #[cfg(rshmem_loom)]
    pub fn weaken(mut self, weakening: Weakening) -> Self {
        match weakening {
            Weakening::RelaxedSignal => self.strength.signal_order = sync::Ordering::Relaxed,
            Weakening::NoWakeFence => self.strength.wake_fence = false,
        }
        self
    }

    /// Checks the configuration.
    ///
    /// # Errors
    /// [`LaunchError::Pes`] if the PE count is zero or larger than the topology's GPUs.
    pub fn build(self) -> Result<Host, LaunchError> {
        let gpus = self.topology.n_gpus();
        let n_pes = self.n_pes.unwrap_or(gpus);
        if n_pes == 0 || n_pes > gpus {
            return Err(LaunchError::Pes {
                requested: n_pes,
                reason: format!(
                    "topology {:?} has {gpus} GPUs; a run needs 1 to {gpus} PEs",
                    self.topology.name()
                ),
            });
        }
        Ok(Host {
            topology: self.topology,
            n_pes,
            semantics: self.semantics,
            strength: self.strength,
        })
    }
}

/// The shared state of a host run, for drivers that start the PE threads themselves (loom
/// models, which have no scoped threads). Clone it into each thread and call
/// [`HostWorld::device`] there, once per PE.
#[derive(Clone, Debug)]
pub struct HostWorld(Arc<World>);

impl HostWorld {
    /// `pe`'s device. Create it on the thread that runs the PE and use it only there.
    ///
    /// # Panics
    /// If `pe` is not a PE of the run.
    pub fn device(&self, pe: Pe) -> HostDevice {
        HostDevice::new(Arc::clone(&self.0), pe)
    }
}

impl Host {
    /// Starts configuring a host run on `topology` (it names the machine the PEs stand for;
    /// the host backend itself is one process).
    pub fn builder(topology: Topology) -> HostBuilder {
        HostBuilder {
            topology,
            n_pes: None,
            semantics: Semantics::Nvshmem,
            strength: Strength::FULL,
        }
    }

    /// The shared state of this run, without starting threads.
    pub fn into_world(self) -> HostWorld {
        let caps = Caps {
            backend_name: "host",
            semantics: self.semantics,
            max_segment_bytes: MAX_SEGMENT_BYTES,
            simulated_time: false,
        };
        HostWorld(Arc::new(World::new(
            self.topology,
            self.n_pes,
            caps,
            self.strength,
        )))
    }
}

impl Launcher for Host {
    type B = HostBackend;
    type Report = HostReport;

    fn n_pes(&self) -> u32 {
        self.n_pes
    }

    fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Runs each PE on a thread of its own and joins them all.
    ///
    /// # Panics
    /// In loom builds, which have no scoped threads: loom models start their threads
    /// themselves and take devices from [`Host::into_world`].
    fn launch<R, F>(self, pe_main: F) -> Result<LaunchOutput<R, HostReport>, LaunchError>
    where
        F: Fn(HostDevice) -> R + Sync,
        R: Send,
    {
        let n_pes = self.n_pes;
        let world = self.into_world();
        let start = sync::clock_now();
        let results = run_pe_threads(0..n_pes, |pe| pe_main(world.device(pe)))?;
        let report = HostReport {
            n_pes,
            wall_ns: sync::nanos_since(&start),
        };
        Ok((results, report))
    }
}
