//! The process backend: one PE per OS process of one node, memory shared as memfds, waits that
//! sleep on a futex (docs/process-backend.md).
//!
//! It is what runs OpenSHMEM C programs unchanged: each PE is a process of its own (`rshmem run
//! -n N`, the processes find each other through the launcher's bootstrap), so each has its own
//! globals, which the backend can share as a segment of their own ([`crate::MemKind::Static`]).
//! These PEs have no GPU; `Host` and `Device` segments are both host memory.
//!
//! Design:
//!
//! - **Memory** (`crate::common::memfd`, shared with the CUDA backend's host segments): every
//!   segment is a `memfd_create` file sized with `ftruncate` (sparse) and mapped `MAP_SHARED`. Its key is the owner's pid, the descriptor and the
//!   length (`crate::common::fd_sharing`); an importer takes the descriptor with `pidfd_getfd`
//!   and maps it at an address of its own. Peers' memory is therefore ordinary memory of this
//!   process: `load_store_addr` gives an address for every segment, as `shmem_ptr` needs.
//! - **Completion at issue** (`queue.rs`): a put is a copy into the peer's mapping, an atomic
//!   a CPU atomic on it; tickets are complete when returned. Why each ordering suffices on
//!   x86-64 and AArch64 is written per operation there.
//! - **Waits sleep** (`wake.rs`): spin, yield, then `FUTEX_WAIT` on the PE's control block,
//!   which writers wake only when someone sleeps; a store-buffering handshake of two SeqCst
//!   fences loses no wake-up.
//! - **Static data** (`crate::common::static_data`, shared with the CUDA backend): when enabled, the main program's writable data segment
//!   is remapped onto a memfd and shared like a segment.
//! - **Launch**: [`Process`] opens the job's bootstrap ([`crate::bootstrap::from_env`]); under
//!   `rshmem run -n N`, `mpirun` or `srun` this process is PE `rank` of `N`, without a
//!   launcher it is a single PE. It is a
//!   [`Launcher`] (runs `pe_main` on the calling thread), and [`Process::join`] hands the
//!   device to callers that have no closure around the program (the C API's `shmem_init`).

mod device;
mod join;
mod queue;
mod wake;

pub use crate::common::paths::{PeerPath, nodes_of, peer_paths};
pub use crate::common::static_data::loaded_data_range;

use std::sync::Arc;

use crate::backend::{Backend, LaunchOutput, Launcher};
use crate::bootstrap::{self, Bootstrap};
use crate::caps::{Caps, Semantics};
use crate::common::fd_sharing;
use crate::common::threads::panic_message;
use crate::error::{LaunchError, PeFailure};
use crate::topology::Topology;
use crate::types::Pe;

pub use device::ProcessDevice;
pub use queue::ProcessQueue;

/// The largest segment a PE may create: 64 GiB of address space (a memfd is sparse, so memory
/// is committed only when written: this is a limit, not a cost).
const MAX_SEGMENT_BYTES: u64 = 64 << 30;

/// How long joining the run may wait for the launcher and the other processes.
const JOIN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// What runs around every blocking sleep of a PE (a futex wait, a bootstrap exchange): it is
/// given the sleep and must call it once. A caller that serialises its threads with a lock
/// (the C API under `SHMEM_THREAD_MULTIPLE`) releases the lock around it, so that its other
/// threads run while this PE sleeps.
pub type AroundSleep = Arc<dyn Fn(&mut dyn FnMut()) + Send + Sync>;

/// The process backend as a [`Backend`].
#[derive(Debug)]
pub enum ProcessBackend {}

impl Backend for ProcessBackend {
    type Device = ProcessDevice;
    type Queue = ProcessQueue;
}

/// This process's PE of a run, configured and ready to join.
pub struct Process {
    /// The job's bootstrap, opened by `build`; `None` for a single PE.
    bootstrap: Option<Box<dyn Bootstrap>>,
    /// Every PE's node id, in PE order, from the bootstrap.
    nodes: Vec<u32>,
    topology: Topology,
    semantics: Semantics,
    static_data: bool,
    around_sleep: AroundSleep,
}

impl std::fmt::Debug for Process {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Process")
            .field("bootstrap", &self.bootstrap)
            .field("nodes", &self.nodes)
            .field("topology", &self.topology.name())
            .field("semantics", &self.semantics)
            .field("static_data", &self.static_data)
            .finish_non_exhaustive()
    }
}

/// Configures a [`Process`].
pub struct ProcessBuilder {
    topology: Option<Topology>,
    semantics: Semantics,
    static_data: bool,
    around_sleep: Option<AroundSleep>,
    bootstrap: Option<Box<dyn Bootstrap>>,
}

impl std::fmt::Debug for ProcessBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessBuilder")
            .field("semantics", &self.semantics)
            .field("static_data", &self.static_data)
            .finish_non_exhaustive()
    }
}

/// What a process's run reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessReport {
    /// How many PEs the run has, across its processes.
    pub n_pes: u32,
    /// Wall-clock time of this process's PE, from joining to the return of its program, in
    /// nanoseconds.
    pub wall_ns: u64,
}

impl ProcessBuilder {
    /// Sets the topology the run declares (default: where the bootstrap placed the PEs,
    /// [`Topology::single_host`] when every PE is on one node, else one host per node, its PEs
    /// joined by load/store links and each behind a NIC, [`Topology::hosts_with_nics`]). It
    /// is a declaration: the path to each peer follows the bootstrap's nodes.
    pub fn topology(mut self, topology: Topology) -> Self {
        self.topology = Some(topology);
        self
    }

    /// Sets the ordering rules the run declares in its [`Caps`] (default OpenSHMEM 1.5, the
    /// rules of the C programs this backend runs; the backend is stronger than both).
    pub fn semantics(mut self, semantics: Semantics) -> Self {
        self.semantics = semantics;
        self
    }

    /// Lets [`crate::Device::share_static_data`] remap the program's static data (default
    /// off). The remap must run before the program has other threads, since a store made
    /// while it copies is lost: only a caller that owns the program's start (the C API's
    /// `shmem_init`) turns it on.
    pub fn static_data(mut self, enabled: bool) -> Self {
        self.static_data = enabled;
        self
    }

    /// Sets what runs around every blocking sleep ([`AroundSleep`]; default: just sleep).
    pub fn around_sleep(mut self, around_sleep: AroundSleep) -> Self {
        self.around_sleep = Some(around_sleep);
        self
    }

    /// Sets the job's bootstrap, opened by the caller (the MPI communicator's or the unique
    /// id's, which `nvshmemx_init_attr` names); `None`, the default, opens the environment's.
    pub fn bootstrap(mut self, bootstrap: Option<Box<dyn Bootstrap>>) -> Self {
        self.bootstrap = bootstrap;
        self
    }

    /// Opens the job's bootstrap, unless [`Self::bootstrap`] gave one
    /// ([`bootstrap::from_env`]: `rshmem run`'s socket, PMIx, PMI or MPI, as
    /// `RSHMEM_BOOTSTRAP` chooses) and checks the configuration. Without a launcher this
    /// process is a single PE.
    ///
    /// # Errors
    /// [`LaunchError::Init`] naming the variable or the launcher's refusal when the bootstrap
    /// cannot be opened; [`LaunchError::Pes`] when the topology has fewer GPUs than the run
    /// PEs.
    pub fn build(self) -> Result<Process, LaunchError> {
        let deadline = std::time::Instant::now() + JOIN_TIMEOUT;
        let bootstrap = match self.bootstrap {
            Some(given) => Some(given),
            None => bootstrap::from_env(deadline).map_err(|e| LaunchError::Init(e.to_string()))?,
        };
        let mut bootstrap = bootstrap;
        let n_pes = bootstrap.as_ref().map_or(1, |b| b.size());
        let nodes = match bootstrap.as_mut() {
            Some(b) => nodes_of(b.as_mut(), deadline).map_err(|e| {
                LaunchError::Init(format!("PE {}: the nodes of the run: {e}", b.rank()))
            })?,
            None => vec![0],
        };
        let topology = match self.topology {
            Some(topology) => topology,
            None => crate::common::paths::nodes_topology(&nodes)
                .map_err(|e| LaunchError::Init(format!("the topology of {n_pes} PEs: {e}")))?,
        };
        if topology.n_gpus() < n_pes {
            return Err(LaunchError::Pes {
                requested: n_pes,
                reason: format!(
                    "topology {:?} has {} GPUs, fewer than the {n_pes} processes of the run; \
                     give a topology with one GPU per process, or none",
                    topology.name(),
                    topology.n_gpus()
                ),
            });
        }
        Ok(Process {
            bootstrap,
            nodes,
            topology,
            semantics: self.semantics,
            static_data: self.static_data,
            around_sleep: self
                .around_sleep
                .unwrap_or_else(|| Arc::new(|sleep: &mut dyn FnMut()| sleep())),
        })
    }
}

impl Process {
    /// Starts configuring this process's PE.
    pub fn builder() -> ProcessBuilder {
        ProcessBuilder {
            topology: None,
            semantics: Semantics::OpenShmem15,
            static_data: false,
            around_sleep: None,
            bootstrap: None,
        }
    }

    /// Joins the run: lets the other processes of this node take this one's descriptors,
    /// shares the control block of every PE of this node, and, where the run spans nodes (or
    /// `RSHMEM_TRANSPORT=ofi` asks), opens the network path and trades its addresses
    /// (collective: every process of the run joins once). Returns this process's device.
    ///
    /// # Errors
    /// [`LaunchError::Init`] naming what failed: the bootstrap, `prctl`, the control block's
    /// memfd, taking a peer's, or the network path.
    pub fn join(self) -> Result<ProcessDevice, LaunchError> {
        let deadline = std::time::Instant::now() + JOIN_TIMEOUT;
        let (pe, n_pes, client) = match self.bootstrap {
            None => (Pe(0), 1, None),
            Some(client) => {
                let rank = client.rank();
                fd_sharing::allow_peers_to_take_fds().map_err(|e| {
                    LaunchError::Init(format!(
                        "PE {rank}: cannot let the run's other processes map this one's memory \
                         (prctl PR_SET_PTRACER): {e}"
                    ))
                })?;
                (Pe(rank), client.size(), Some(client))
            }
        };
        let caps = Caps {
            backend_name: "process",
            semantics: self.semantics,
            max_segment_bytes: MAX_SEGMENT_BYTES,
            simulated_time: false,
        };
        join::join(join::Joining {
            pe,
            n_pes,
            caps,
            nodes: self.nodes,
            topology: self.topology,
            client,
            static_data: self.static_data,
            around_sleep: self.around_sleep,
            deadline,
        })
    }
}

impl Launcher for Process {
    type B = ProcessBackend;
    type Report = ProcessReport;

    fn n_pes(&self) -> u32 {
        self.bootstrap.as_ref().map_or(1, |b| b.size())
    }

    fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Joins the run ([`Process::join`]) and runs `pe_main` on the calling thread with this
    /// process's device; returns its result alone (a panic becomes its [`PeFailure`]).
    fn launch<R, F>(self, pe_main: F) -> Result<LaunchOutput<R, ProcessReport>, LaunchError>
    where
        F: Fn(ProcessDevice) -> R + Sync,
        R: Send,
    {
        let n_pes = self.n_pes();
        let start = std::time::Instant::now();
        let device = self.join()?;
        let pe = crate::backend::Device::pe(&device);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pe_main(device)))
            .map_err(|payload| PeFailure {
                pe,
                message: panic_message(&*payload),
            });
        let report = ProcessReport {
            n_pes,
            wall_ns: start.elapsed().as_nanos() as u64,
        };
        Ok((vec![result], report))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C API keeps the device in a process-wide global behind its lock, and moves queues
    /// between threads with it.
    #[test]
    fn a_device_is_send_and_sync_and_a_queue_is_send() {
        fn send_and_sync<T: Send + Sync>() {}
        fn send<T: Send>() {}
        send_and_sync::<ProcessDevice>();
        send::<ProcessQueue>();
    }
}
