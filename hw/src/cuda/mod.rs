//! The CUDA backend: PEs as threads of one process or one process per PE, PE `i` on GPU `i`,
//! GPUs joined by NVLink, operations initiated by the host or by kernels.
//!
//! The driver is loaded at run time through cudarc (bindings of CUDA 13.0), so this module
//! builds on a machine without CUDA; [`probe`] says whether CUDA can run here, and why not.
//!
//! Design:
//!
//! - **Threads.** The launcher starts a thread per PE (`crate::common`'s launch loop) and
//!   makes that PE's GPU's primary context current on it. PE `i` runs on GPU `i`; with
//!   [`CudaBuilder::share_gpus`], on GPU `i % n_gpus`, so that two-PE tests run on one GPU;
//!   with [`CudaBuilder::gpus`], on the list's GPU `i % len` (`placement.rs`). Primary
//!   contexts stay retained for the process, and the atomics kernel stays loaded in them, so a
//!   run starts in about a millisecond after the first (`driver.rs`).
//! - **Memory.** A device segment is CUDA virtual memory: physical memory of the PE's GPU
//!   (`cuMemCreate`) mapped at a reserved address that every GPU of the run may read and
//!   write (`cuMemSetAccess`). In one process that address means the same memory on every
//!   GPU and on the host, so importing a peer's segment records its base address from the
//!   key. A host segment is pinned host memory. Segments live until the run ends
//!   (`memory.rs`). The device heap is a growable segment, address space into which memory is
//!   mapped piece by piece (`reservation.rs`); a piece can also be a buffer the program
//!   allocated itself and registered (`program_buffer.rs`, `chunks.rs`).
//! - **Queues.** A queue is a non-blocking stream: puts and gets are `cuMemcpyAsync` through
//!   pinned staging buffers, atomics and signals a one-thread kernel with system-scope atomics
//!   compiled by NVRTC (`kernel.rs`), tickets the events recorded after each operation. The
//!   stream runs operations in issue order, so fence is free and quiet waits for the last
//!   event (`queue.rs`).
//! - **Waits.** A PE reads its own memory with synchronous copies; `wait_until` polls the word
//!   with a backoff from about 1 µs to 100 µs (`poll.rs`) until the deadline.
//! - **Bootstrap.** [`crate::Device::exchange`] is `crate::common`'s rendezvous, the one the
//!   host backend uses.
//! - **Processes.** Started by `rshmem run -n N` (see [`crate::bootstrap`]), each process runs
//!   one PE, its rank, and exchanges through the launcher's bootstrap instead. Device
//!   segments are then made exportable, and their keys carry a file descriptor that peers take
//!   with `pidfd_getfd` and map at addresses of their own (`process.rs`); the device-side
//!   API's synchronisation memory is shared that way at launch. `Host` segments and the
//!   program's static data ([`CudaBuilder::static_data`]) are then memfds every PE maps, as in
//!   the process backend (`crate::common::memfd`, `crate::common::static_data`), registered
//!   with CUDA (`host_shared.rs`).
//! - **Host memory.** Host-initiated operations whose ranges are all host memory are done by
//!   the CPU at issue, after the stream's earlier operations (`queue/cpu.rs`); waits and local
//!   reads and writes of host memory are CPU loads and stores.
//!
//! Done: host-initiated put, get, get-into, every atomic of [`crate::AmoKind`] at 32 and 64
//! bits, put-with-signal, fence, quiet, tickets, waits, device and host segments, on one host
//! with NVLink between all GPUs; the device-side API, kernels that call SHMEM compiled by NVRTC
//! behind a shipped header ([`device_api`]); PEs sharing a GPU for tests; one process per PE
//! under `rshmem run -n`; device-side collectives over every PE. It has run on two H200s over
//! NV18 (docs/litmus-on-gpu.md, BENCHMARKS.md). PEs of other nodes (or every peer under
//! `RSHMEM_TRANSPORT=ofi`) are reached through their proxy threads over libfabric
//! (`remote/`), host-initiated and on-stream operations only. Not yet: kernels that reach
//! other nodes, GPU-initiated InfiniBand.

mod chunks;
mod device;
pub mod device_api;
mod device_heap;
mod driver;
mod error;
mod host_shared;
mod kernel;
mod memory;
mod nvrtc;
mod placement;
mod poll;
mod process;
mod program_buffer;
mod queue;
mod reach;
mod remote;
mod reservation;
mod segments;
mod staging;
mod watchdog;
mod world;

pub use watchdog::report_pending_hangs;

use std::sync::{Arc, Mutex};

use cudarc::driver::sys;

use crate::backend::{Backend, LaunchOutput, Launcher};
use crate::bootstrap::{self, Bootstrap};
use crate::caps::{Caps, Semantics};
use crate::common::fd_sharing;
use crate::common::paths;
use crate::common::threads::run_pe_threads;
use crate::error::LaunchError;
use crate::sync;
use crate::topology::{NV18, Topology, TopologyError};
use crate::types::Pe;

pub use device::CudaDevice;
pub use device_api::{DEVICE_STATE_BYTES, DeviceApiError, DeviceKernel, KernelArg, KernelOptions};
pub use device_heap::{ShareHeapError, share_device_heap};
pub use driver::{GpuInfo, GpuInventory, probe};
pub use error::{CudaUnavailable, DriverCallError};
pub use nvrtc::NvrtcError;
pub use queue::CudaQueue;

use driver::Gpu;
use error::During;
use world::World;

/// The CUDA backend as a [`Backend`].
#[derive(Debug)]
pub enum CudaBackend {}

impl Backend for CudaBackend {
    type Device = CudaDevice;
    type Queue = CudaQueue;
}

/// A checked CUDA run, ready to launch PEs.
#[derive(Debug)]
pub struct Cuda {
    n_pes: u32,
    /// The GPUs the PEs run on, by ordinal: PE `i` on `ordinals[i % ordinals.len()]`.
    ordinals: Vec<u32>,
    topology: Topology,
    semantics: Semantics,
    inventory: GpuInventory,
    /// Set when this process is one PE of a multi-process job.
    process: Option<ProcessPe>,
    static_data: bool,
    /// Every PE's node id, in PE order (all 0 on one node).
    nodes: Vec<u32>,
}

/// This process's PE of a multi-process job: its rank, and the job's bootstrap until the
/// world takes it.
#[derive(Debug)]
struct ProcessPe {
    rank: u32,
    /// Its place among its node's ranks, which picks its GPU as NVSHMEM does.
    local_rank: u32,
    bootstrap: Mutex<Option<Box<dyn Bootstrap>>>,
}

/// How long opening and joining the job may wait for the launcher and the other processes.
const BOOTSTRAP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// Configures a [`Cuda`] run.
#[derive(Debug, Default)]
pub struct CudaBuilder {
    n_pes: Option<u32>,
    semantics: Semantics,
    share_gpus: bool,
    gpus: Option<Vec<u32>>,
    static_data: bool,
    bootstrap: Option<Box<dyn Bootstrap>>,
}

/// What a CUDA run reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CudaReport {
    /// How many PEs ran.
    pub n_pes: u32,
    /// The GPU each PE ran on, by PE: "ordinal: name".
    pub gpus: Vec<String>,
    /// Wall-clock time of the run in nanoseconds.
    pub wall_ns: u64,
}

impl CudaBuilder {
    /// Sets how many PEs run (default: one per GPU of the machine).
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

    /// Lets PEs share GPUs when there are more PEs than GPUs: PE `i` runs on GPU
    /// `i % n_gpus` (default off: one PE per GPU). For development and tests on machines with
    /// fewer GPUs than the program has PEs; PEs on one GPU reach each other through that GPU's
    /// memory, not NVLink, so their timing says nothing about NVLink.
    pub fn share_gpus(mut self, on: bool) -> Self {
        self.share_gpus = on;
        self
    }

    /// Says which GPUs the PEs run on, by the driver's ordinals: PE `i` on
    /// `gpus[i % gpus.len()]` (default: GPUs 0 to n-1, so PE `i` on GPU `i`, or `i % n_gpus`
    /// when PEs share). With more PEs than GPUs listed, PEs wrap around the list and share its
    /// GPUs, which needs [`Self::share_gpus`]; the run's PE count defaults to the list's length.
    /// The litmus runner places each test's PEs on a seeded random choice of the machine's GPUs
    /// through this, so that every GPU and every pair of them carries tests.
    ///
    /// [`Self::build`] checks the list against the machine: an empty list, an ordinal the
    /// machine lacks, an ordinal named twice, or two listed GPUs without peer access between
    /// them is a [`LaunchError::Gpus`] that names the problem and the fix. A process of a run
    /// started by `rshmem run -n` (one PE a process) runs on `gpus[rank % len]`.
    pub fn gpus(mut self, gpus: Vec<u32>) -> Self {
        self.gpus = Some(gpus);
        self
    }

    /// Lets [`crate::Device::share_static_data`] remap the program's static data when each PE
    /// is a process of its own (default off; PEs that are threads of one process share one
    /// copy and never do). The remap must run before the program has threads of its own that
    /// write its globals, since a store made while it copies is lost: only a caller that owns
    /// the program's start (the C API's `shmem_init`) turns it on.
    pub fn static_data(mut self, enabled: bool) -> Self {
        self.static_data = enabled;
        self
    }

    /// Sets the job's bootstrap, opened by the caller (the MPI communicator's or the unique
    /// id's, which `nvshmemx_init_attr` names); `None`, the default, opens the environment's.
    pub fn bootstrap(mut self, bootstrap: Option<Box<dyn Bootstrap>>) -> Self {
        self.bootstrap = bootstrap;
        self
    }

    /// Loads the driver and checks the configuration against the machine.
    ///
    /// A process started as one of N by a launcher (`rshmem run -n N`, `mpirun`, `srun`: its
    /// environment names the job's bootstrap, see [`crate::bootstrap::from_env`], which this
    /// opens, unless [`Self::bootstrap`] gave one) runs one PE, its rank, of the launcher's N
    /// on GPU `local_rank % n_gpus` (or the [`Self::gpus`] list's `local_rank % len`), its
    /// place among its node's ranks picking it as in NVSHMEM; [`CudaBuilder::pes`], if given,
    /// must then be N. PEs share GPUs there when this builder allows it, the launcher was
    /// given `--share-gpus` ([`SHARE_GPUS_VAR`]), or a bootstrap of another launcher than
    /// rshmem's puts more ranks on this node than it has GPUs.
    ///
    /// # Errors
    /// [`LaunchError::Pes`] for zero PEs, more PEs than GPUs (of the machine, or listed with
    /// [`Self::gpus`]) without [`Self::share_gpus`], or more than [`MAX_PES_PER_GPU`] PEs per
    /// GPU with it; [`LaunchError::Init`] if CUDA is unavailable (the message says why);
    /// [`LaunchError::Gpus`] for a list of GPUs the machine does not fit (see [`Self::gpus`])
    /// or two GPUs of the run that cannot access each other.
    pub fn build(self) -> Result<Cuda, LaunchError> {
        if self.n_pes == Some(0) {
            return Err(check_pes(0, 0, false, MACHINE).unwrap_err());
        }
        let inventory = probe()?;
        let (run_gpus, whose) = match &self.gpus {
            Some(gpus) => {
                placement::check_gpu_list(gpus, &inventory)?;
                (gpus.len() as u32, LISTED)
            }
            None => (inventory.gpus.len() as u32, MACHINE),
        };
        let until = std::time::Instant::now() + BOOTSTRAP_TIMEOUT;
        let mut opened = match self.bootstrap {
            Some(given) => Some(given),
            None => bootstrap::from_env(until).map_err(|e| LaunchError::Init(e.to_string()))?,
        };
        let nodes = match opened.as_mut() {
            Some(job) => Some(paths::nodes_of(job.as_mut(), until).map_err(|e| {
                LaunchError::Init(format!("PE {}: the nodes of the run: {e}", job.rank()))
            })?),
            None => None,
        };
        let (requested, share) = match &opened {
            Some(job) => {
                let size = job.size();
                if self.n_pes.is_some_and(|n| n != size) {
                    return Err(LaunchError::Pes {
                        requested: self.n_pes.unwrap_or(0),
                        reason: format!(
                            "this process is one of {size} that its launcher started \
                             (`rshmem run -n {size}`, `mpirun -np {size}`); ask for that many \
                             PEs or none"
                        ),
                    });
                }
                let shared_by_launcher = std::env::var(SHARE_GPUS_VAR).is_ok_and(|v| v == "1");
                // Ours says so by --share-gpus; others (mpirun, srun, MPI, unique id) cannot.
                let crowded = job.name() != "rshmem" && job.node().local_size > run_gpus;
                // Only this node's ranks need its GPUs.
                (
                    job.node().local_size,
                    self.share_gpus || shared_by_launcher || crowded,
                )
            }
            None => (self.n_pes.unwrap_or(run_gpus), self.share_gpus),
        };
        let local_pes = check_pes(requested, run_gpus, share, whose)?;
        let n_pes = opened.as_ref().map_or(local_pes, |job| job.size());
        let nodes = nodes.unwrap_or_else(|| vec![0; n_pes as usize]);
        let ordinals = match self.gpus {
            // Only the GPUs some PE runs on need to reach each other.
            Some(mut gpus) => {
                gpus.truncate(local_pes as usize);
                gpus
            }
            None => placement::first_gpus(local_pes, run_gpus),
        };
        placement::check_peer_access(&inventory, &ordinals)?;
        let topology = match nodes.iter().all(|&node| node == nodes[0]) {
            true => nvlink_topology(n_pes),
            false => paths::nodes_topology(&nodes),
        }
        .map_err(|e| LaunchError::Init(format!("the topology of {n_pes} GPUs: {e}")))?;
        Ok(Cuda {
            n_pes,
            ordinals,
            topology,
            semantics: self.semantics,
            inventory,
            process: opened.map(|job| ProcessPe {
                rank: job.rank(),
                local_rank: job.node().local_rank,
                bootstrap: Mutex::new(Some(job)),
            }),
            static_data: self.static_data,
            nodes,
        })
    }
}

/// The environment variable with which `rshmem run -n N --share-gpus` lets the processes of
/// a run share GPUs ("1").
pub const SHARE_GPUS_VAR: &str = "RSHMEM_SHARE_GPUS";

/// The most PEs that may share one GPU ([`CudaBuilder::share_gpus`]): each PE holds a
/// context's streams and a thread, and more than this is a mistake rather than a test.
pub const MAX_PES_PER_GPU: u32 = 16;

/// [`check_pes`]'s words for a run on the machine's GPUs.
const MACHINE: &str = "this machine has";
/// [`check_pes`]'s words for a run on the GPUs of [`CudaBuilder::gpus`].
const LISTED: &str = "CudaBuilder::gpus lists";

/// `requested` if a run can have that many PEs on `n_gpus` GPUs, sharing them or not; `whose`
/// ([`MACHINE`] or [`LISTED`]) says where the GPUs come from.
fn check_pes(requested: u32, n_gpus: u32, share: bool, whose: &str) -> Result<u32, LaunchError> {
    let most = if share {
        n_gpus * MAX_PES_PER_GPU
    } else {
        n_gpus
    };
    if requested == 0 || requested > most {
        let reason = if share {
            format!(
                "{whose} {n_gpus} GPUs and at most {MAX_PES_PER_GPU} PEs may share one; ask \
                 for 1 to {most} PEs"
            )
        } else {
            format!(
                "{whose} {n_gpus} GPUs and the CUDA backend runs one PE per GPU; ask for 1 to \
                 {n_gpus} PEs, or let PEs share GPUs (CudaBuilder::share_gpus, for tests)"
            )
        };
        return Err(LaunchError::Pes { requested, reason });
    }
    Ok(requested)
}

/// The topology of `n_gpus` GPUs of one host joined by NVLink: for two, the NV18 pair of the
/// 2×H200 test machine ([`NV18`]); otherwise one NVSwitch box ([`Topology::single_host`]).
///
/// # Errors
/// [`TopologyError`] if `n_gpus` is zero.
pub fn nvlink_topology(n_gpus: u32) -> Result<Topology, TopologyError> {
    if n_gpus == 2 {
        Topology::pair(NV18)
    } else {
        Topology::single_host(n_gpus)
    }
}

impl Cuda {
    /// Starts configuring a CUDA run.
    pub fn builder() -> CudaBuilder {
        CudaBuilder::default()
    }

    /// The machine's GPUs, as [`probe`] found them when the run was built.
    pub fn inventory(&self) -> &GpuInventory {
        &self.inventory
    }

    /// The ordinal of the GPU PE `pe` runs on.
    fn gpu_of(&self, pe: u32) -> u32 {
        self.ordinals[pe as usize % self.ordinals.len()]
    }

    /// The retained contexts of the run's GPUs, with peer access enabled between every pair
    /// and the atomics kernel loaded into each.
    fn gpus(&self) -> Result<Vec<Arc<Gpu>>, LaunchError> {
        let gpus = (0..self.n_pes)
            .map(|pe| driver::gpu(self.gpu_of(pe)))
            .collect::<Result<Vec<_>, _>>()?;
        for a in &gpus {
            a.ctx.bind_to_thread().during("cuCtxSetCurrent")?;
            for b in gpus.iter().filter(|b| b.ordinal != a.ordinal) {
                // SAFETY: both are live contexts the process retains; a's is current.
                let enabled = unsafe { sys::cuCtxEnablePeerAccess(b.ctx.cu_ctx(), 0) };
                if enabled != sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
                    enabled.during("cuCtxEnablePeerAccess")?;
                }
            }
            a.amo_kernel()
                .map_err(|e| LaunchError::Init(format!("GPU {}: {e}", a.ordinal)))?;
        }
        Ok(gpus)
    }

    /// The world of the process that runs PE `process.rank`: its GPU, the bootstrap, and the
    /// device-side API's memory shared with the other processes (collective).
    fn process_world(&self, process: &ProcessPe, caps: Caps) -> Result<World, LaunchError> {
        let rank = process.rank;
        let fail = |what: String| LaunchError::Init(format!("PE {rank}: {what}"));
        let client = process
            .bootstrap
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| {
                fail("this process already joined its job; a process joins once".to_string())
            })?;
        // Read before the first exchange, so that a bad value fails every PE with its own
        // message rather than leaving the others to find a peer gone.
        let pe = Pe(rank);
        let paths = paths::transport()
            .and_then(|transport| paths::paths(transport, &self.nodes, pe))
            .map_err(&fail)?;
        fd_sharing::allow_peers_to_take_fds().map_err(|e| {
            fail(format!(
                "cannot let the run's other processes map this one's memory \
                 (prctl PR_SET_PTRACER): {e}"
            ))
        })?;
        let gpu = driver::gpu(self.gpu_of(process.local_rank))?;
        gpu.amo_kernel()
            .map_err(|e| LaunchError::Init(format!("GPU {}: {e}", gpu.ordinal)))?;
        let world = World::for_process(
            self.topology.clone(),
            caps,
            (Arc::clone(&gpu), pe, self.n_pes),
            client,
            self.static_data,
        )?;
        let deadline = crate::types::Instant(BOOTSTRAP_TIMEOUT.as_nanos() as u64);
        if paths.contains(&paths::PeerPath::Network) {
            let allgather = |mine: &[u8]| {
                world
                    .exchange(pe, mine, deadline)
                    .map(|all| all.iter().map(|bytes| bytes.to_vec()).collect())
                    .map_err(|e| e.to_string())
            };
            let remote = remote::Remote::open(pe, &self.nodes, paths, gpu, &allgather)
                .map_err(|e| fail(format!("the network path to other nodes (libfabric): {e}")))?;
            world.set_remote(remote);
        }
        world
            .share_device_sync(pe, deadline)
            .map_err(|e| fail(e.to_string()))?;
        Ok(world)
    }
}

impl Cuda {
    /// Joins a run started by `rshmem run -n N` as this process's PE, its rank, without a
    /// closure: connects to the launcher's bootstrap, shares the device-side API's memory with
    /// the other processes (collective: every process of the run joins once) and returns the
    /// rank's device, bound to the calling thread. What a program whose PE no closure wraps
    /// (the C API) starts with; [`Launcher::launch`] is the closure form.
    ///
    /// The run's memory lives as long as the device and the queues made from it.
    ///
    /// # Errors
    /// [`LaunchError::Init`] if this process was not started by `rshmem run -n` (the message
    /// names the launcher), or what [`Launcher::launch`] reports for the bootstrap, the GPU or
    /// the shared memory.
    pub fn join(self) -> Result<CudaDevice, LaunchError> {
        let Some(process) = &self.process else {
            return Err(LaunchError::Init(
                "the CUDA backend joins a run one process per PE, and this process was not \
                 started by a launcher; run it with `rshmem run -n N --gpu PROGRAM` or \
                 `oshrun -np N --gpu PROGRAM`"
                    .into(),
            ));
        };
        let world = self.process_world(process, self.caps())?;
        Ok(CudaDevice::new(Arc::new(world), Pe(process.rank)))
    }

    /// What the run declares: its semantics, and the largest segment a PE may make, the
    /// memory of the smallest GPU divided among the PEs that share it.
    fn caps(&self) -> Caps {
        // PEs sharing a GPU share its memory.
        let pes_per_gpu = u64::from(self.n_pes.div_ceil(self.ordinals.len() as u32));
        let max_segment_bytes = self
            .ordinals
            .iter()
            .map(|&g| self.inventory.gpus[g as usize].memory_bytes / pes_per_gpu)
            .min()
            .unwrap_or(0);
        Caps {
            backend_name: "cuda",
            semantics: self.semantics,
            max_segment_bytes,
            simulated_time: false,
        }
    }
}

impl Launcher for Cuda {
    type B = CudaBackend;
    type Report = CudaReport;

    fn n_pes(&self) -> u32 {
        self.n_pes
    }

    fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Runs each PE on a thread of its own with its GPU's context current, and joins them;
    /// in a process of a multi-process run, runs this process's PE only (after connecting
    /// to the launcher's bootstrap and sharing the device-side API's memory with the other
    /// processes) and returns its result alone. The run's segments are freed after every
    /// local PE returned.
    fn launch<R, F>(self, pe_main: F) -> Result<LaunchOutput<R, CudaReport>, LaunchError>
    where
        F: Fn(CudaDevice) -> R + Sync,
        R: Send,
    {
        let caps = self.caps();
        let local = match &self.process {
            Some(process) => process.rank..process.rank + 1,
            None => 0..self.n_pes,
        };
        let names = local
            .clone()
            .map(|pe| {
                let gpu = &self.inventory.gpus[self.gpu_of(pe) as usize];
                format!("{}: {}", gpu.ordinal, gpu.name)
            })
            .collect();
        let world = match &self.process {
            Some(process) => self.process_world(process, caps)?,
            None => World::for_threads(self.topology.clone(), caps, self.gpus()?)?,
        };
        let world = Arc::new(world);
        let start = sync::clock_now();
        let results = run_pe_threads(local, |pe: Pe| {
            pe_main(CudaDevice::new(Arc::clone(&world), pe))
        })?;
        let report = CudaReport {
            n_pes: self.n_pes,
            gpus: names,
            wall_ns: sync::nanos_since(&start),
        };
        Ok((results, report))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_pes_than_gpus_names_both_numbers() {
        let e = check_pes(3, 2, false, MACHINE).unwrap_err().to_string();
        assert!(e.contains("cannot run 3 PEs"), "{e}");
        assert!(e.contains("this machine has 2 GPUs"), "{e}");
        assert!(e.contains("share_gpus"), "{e}");
        assert_eq!(check_pes(2, 2, false, MACHINE).unwrap(), 2);
        let e = check_pes(3, 2, false, LISTED).unwrap_err().to_string();
        assert!(e.contains("CudaBuilder::gpus lists 2 GPUs"), "{e}");
    }

    #[test]
    fn shared_gpus_take_up_to_the_limit_per_gpu() {
        assert_eq!(check_pes(3, 1, true, MACHINE).unwrap(), 3);
        let e = check_pes(2 * MAX_PES_PER_GPU + 1, 2, true, MACHINE)
            .unwrap_err()
            .to_string();
        assert!(e.contains("may share"), "{e}");
    }

    #[test]
    fn zero_pes_is_refused_before_the_driver_is_touched() {
        let e = Cuda::builder().pes(0).build().unwrap_err();
        assert!(matches!(e, LaunchError::Pes { requested: 0, .. }), "{e}");
    }

    /// On a machine without CUDA the probe and the builder say why, as errors.
    #[test]
    fn without_cuda_probe_is_an_error_not_a_panic() {
        match probe() {
            Ok(inventory) => assert!(!inventory.gpus.is_empty()),
            Err(e) => {
                assert!(!e.to_string().is_empty());
                let built = Cuda::builder().build().unwrap_err();
                assert!(matches!(built, LaunchError::Init(_)), "{built}");
            }
        }
    }

    #[test]
    fn two_gpus_are_the_nv18_pair() {
        let t = nvlink_topology(2).unwrap();
        assert_eq!(t.n_gpus(), 2);
        assert_eq!(nvlink_topology(4).unwrap().n_gpus(), 4);
        assert!(nvlink_topology(0).is_err());
    }
}
