//! A deterministic discrete-event simulator of GPU clusters that implements the rshmem
//! hardware contract (`hw`).
//!
//! - **Deterministic.** Time is virtual and integral (nanoseconds). Every nondeterministic
//!   choice (link jitter, when an InfiniBand write becomes visible) comes from the one
//!   choice source the world owns, normally the seeded [`Entropy`]; the same seed gives the
//!   same events in the same order, and the report's `trace_hash` proves it. The simulator
//!   reads no OS clock or randomness.
//! - **Exhaustive when asked.** [`SimBuilder::explore`] replaces the seed by a script of
//!   choices and the timing by a few discrete delays, so that [`explore::dfs`] can run every
//!   execution of a small program (see [`explore`]).
//! - **PEs are coroutines, not threads.** Each PE runs the user's ordinary blocking program on
//!   its own small stack; the world resumes one PE at a time, in virtual-time order, so OS
//!   scheduling never affects a run.
//! - **Weakest legal ordering.** Operations in flight reach their targets in any order the
//!   rules of docs/ordering.md allow: unfenced operations reorder through jitter, fences order
//!   delivery per target, InfiniBand writes stay invisible to the target's GPU until a
//!   consistency step or a random drain.
//! - **Timing.** An operation costs issue time (and a fence's time for a put-with-signal),
//!   then latency plus start-up plus size over bandwidth along its route; concurrent
//!   transfers queue on shared links. The costs beyond links are [`costs::Timing`], which a
//!   machine ([`Machine`]: a preset, a file, or a bare topology with the priors) brings along;
//!   `rshmem calibrate` fits them to GPUs.
//! - **Memory a program can point into, when asked.** Segments are sparse pages by default;
//!   with [`SimBuilder::addressable_memory`] each is one region of real memory (mapped with
//!   `MAP_NORESERVE`, so address space only until written) and a PE gets the address of its
//!   own segments, so a C program dereferences what `shmem_malloc` returned; with
//!   [`SimBuilder::static_data`] each PE's static data (its globals) is its `Static` segment,
//!   in place. The simulator still writes every change at the moment the ordering rules make
//!   it visible, so the pointer shows what `read_local` would; peers get no address, as their
//!   memory changes only through simulated operations. The mode changes no event of a run
//!   (docs/sim-memory.md).
//! - **Failures are reports.** A deadlock, a missed deadline or the time limit ends the waits
//!   involved with an error naming every PE and what it waited for; the seed is logged.
//! - **Faults on purpose.** [`SimBuilder::inject`] slows PEs and links, stalls links and
//!   crashes PEs in an ordinary seeded run ([`injection`], docs/faults.md); its random parts
//!   come from the same choice source, so a seed still reproduces the run. (Unrelated to
//!   [`Fault`], the test-only broken ordering rules.)

#![warn(missing_docs)]

pub mod choice;
pub mod costs;
mod device;
mod entropy;
mod events;
mod exec;
#[cfg(rshmem_shuttle)]
mod exec_shuttle;
pub mod explore;
mod fault;
mod handle;
mod hashing;
pub mod injection;
mod mapping;
mod memory;
mod movers;
mod network;
mod ordering;
mod parallel;
mod prefetch;
mod queue;
mod report;
mod slab;
mod stacks;
pub mod threads;
pub mod topology;
mod trace;
mod world;

use std::rc::Rc;

use hw::{Backend, Caps, LaunchError, LaunchOutput, Launcher, Semantics, Topology};

pub use choice::Choices;
pub use device::SimDevice;
pub use entropy::Entropy;
pub use explore::Explore;
pub use fault::{Fault, UnknownFault};
pub use injection::{FaultPlan, InjectionReport};
pub use mapping::map_lazily;
pub use memory::StaticRegion;
pub use queue::SimQueue;
pub use report::{OpCounts, SimReport};
pub use topology::Machine;
pub use trace::Timeline;

use handle::Shared;
use memory::{Layout, check_static_regions};
use world::{World, WorldParams};

const TRACING_TARGET: &str = "rshmem::sim";

/// The simulator as a [`hw::Backend`].
#[derive(Debug)]
pub enum SimBackend {}

impl Backend for SimBackend {
    type Device = SimDevice;
    type Queue = SimQueue;
}

/// A configured simulated machine, ready to launch PEs.
#[derive(Clone, Debug)]
pub struct Sim {
    topology: Rc<Topology>,
    n_pes: u32,
    params: WorldParams,
    layout: Layout,
    explore: Option<Explore>,
    stack_bytes: usize,
    executor: Executor,
    injection: Option<injection::CheckedPlan>,
    /// The partitions of a parallel run, checked by `build`, and how to run them.
    parallel: Option<(parallel::Parallel, std::sync::Arc<parallel::Split>)>,
}

/// What runs the PEs' programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Executor {
    /// A coroutine per PE on the calling thread ([`exec`]): the normal executor.
    Coroutines,
    /// A shuttle task per PE ([`exec_shuttle`]), under `--cfg rshmem_shuttle`.
    #[cfg(rshmem_shuttle)]
    ShuttleTasks,
}

/// Configures a [`Sim`].
#[derive(Clone, Debug)]
pub struct SimBuilder {
    topology: Topology,
    n_pes: Option<u32>,
    params: WorldParams,
    layout: Layout,
    explore: Option<Explore>,
    stack_bytes: usize,
    executor: Executor,
    injection: FaultPlan,
    parallel: Option<parallel::Parallel>,
}

/// The largest segment a simulated GPU grants: the 141 GB of an H200's HBM3e (memory is
/// allocated lazily, so this is a limit, not a cost).
const MAX_SEGMENT_BYTES: u64 = 141_000_000_000;

impl SimBuilder {
    /// Sets how many PEs run (default: one per GPU of the topology).
    pub fn pes(mut self, n_pes: u32) -> Self {
        self.n_pes = Some(n_pes);
        self
    }

    /// Sets the seed (default 0).
    pub fn seed(mut self, seed: u64) -> Self {
        self.params.seed = seed;
        self
    }

    /// Sets the ordering rules (default NVSHMEM).
    pub fn semantics(mut self, semantics: Semantics) -> Self {
        self.params.semantics = semantics;
        self
    }

    /// `pcie-read-flush` (default off): a get or atomic arriving through a NIC first makes
    /// every pending write of its target visible (a PCIe read pushes posted writes ahead of
    /// it), and an atomic's update through a NIC is visible at once. A hardware argument that
    /// no vendor text states; the default is the weaker rule of docs/ordering.md.
    pub fn pcie_read_flush(mut self, on: bool) -> Self {
        self.params.pcie_read_flush = on;
        self
    }

    /// `ib-coherent` (default off): a write arriving over NVLink or PCIe at bytes that still
    /// have pending InfiniBand writes queues behind them, so it is never overwritten by an
    /// older write draining later (docs/ordering.md, cross-transport coherence).
    pub fn ib_coherent(mut self, on: bool) -> Self {
        self.params.ib_coherent = on;
        self
    }

    /// `network-transport` (default off): PEs reach each other as the process backend's
    /// libfabric path does (docs/multi-node.md, "How an operation crosses"; docs/ordering.md,
    /// "The network transport"). Only puts and atomics that fetch nothing are posted: a get, a
    /// fetching atomic and a put-with-signal complete before the queue call returns; a fence
    /// first waits for the queue's posted operations (the provider may deliver a put after a
    /// later atomic, and offers no fence of its own); a
    /// put-with-signal first waits for every put its PE has in flight to that target, on any
    /// queue (the data's write waits for every write of the endpoint before the signal
    /// goes); and a signal `ADD` is one read-modify-write, since every atomic of one word is
    /// a native atomic of the target's CPU. Meant with OpenSHMEM semantics, where a write is
    /// visible on delivery, as in the host memory the transport writes.
    pub fn network_transport(mut self, on: bool) -> Self {
        self.params.network_transport = on;
        self
    }

    /// Records a timeline for [`SimReport::timeline`].
    pub fn timeline(mut self, on: bool) -> Self {
        self.params.timeline = on;
        self
    }

    /// Sets the virtual time after which the run is stopped (default 1 hour).
    pub fn time_limit_ns(mut self, limit_ns: u64) -> Self {
        self.params.time_limit_ns = limit_ns;
        self
    }

    /// Sets each PE's stack size (default 256 KiB; only touched pages cost memory).
    pub fn stack_bytes(mut self, bytes: usize) -> Self {
        self.stack_bytes = bytes;
        self
    }

    /// Makes puts (and puts with signal) of at least `bytes` carry only their size, not their
    /// bytes (default: every put carries its bytes). What such a put writes is then not kept:
    /// its range is marked, and the first read that touches it (a local load, a get, an
    /// atomic, a wait) stops the run with a failure naming the PE, the range and this
    /// setting, since the read could not return what the program wrote. A run whose program
    /// never reads back what its large puts wrote (a bandwidth measurement, a calibration fit)
    /// then costs no allocation and no copy per put: the same events, times and trace hash as
    /// with the bytes kept (a trace never hashes payloads). Writes smaller than `bytes`, and
    /// atomics and signals, always keep theirs, so flags and counters work as ever. Not with
    /// [`SimBuilder::addressable_memory`] or [`SimBuilder::static_data`], whose programs read
    /// memory through its address, where no read can be caught (`build` refuses it).
    pub fn drop_payloads_from(mut self, bytes: u64) -> Self {
        self.params.drop_payloads_from = Some(bytes);
        self
    }

    /// Makes every segment of the run one contiguous region of real memory at a stable
    /// address (default off: sparse pages), so that [`hw::Device::load_store_addr`] gives a PE
    /// the address of its own segments and its program loads and stores them directly, as a
    /// C program does with what `shmem_malloc` returns. Each region is an anonymous mapping of
    /// the segment's whole capacity with `MAP_NORESERVE`: address space only, committed by
    /// the OS page by page as it is written, and unmapped when the run ends. The events of a
    /// seeded run are the same either way. See `memory/mod.rs` for what the program sees.
    pub fn addressable_memory(mut self, on: bool) -> Self {
        self.layout.addressable = on;
        self
    }

    /// Lets a PE load its own memory and that of peers it reaches by loads and stores (an
    /// NVLink or PCIe peer, not an InfiniBand one) through [`hw::Device::mapped_load_addr`]
    /// instead of get operations (default off). Needs [`SimBuilder::addressable_memory`]: a
    /// sparse segment has no address. A mapped load is no event: it reads what the simulator
    /// has made visible in that memory by the PE's clock and charges its bytes over the
    /// route's bandwidth ([`hw::Device::note_mapped_loads`]). That is what a get would return
    /// wherever no write to those bytes is concurrent with it, so a data-race-free program
    /// computes the same results far faster (a kernel's gets of read-only data); a racy one
    /// can see another legal value than with every get an event, which is why the race
    /// detector and exploration run without it.
    pub fn mapped_loads(mut self, on: bool) -> Self {
        self.params.mapped_loads = on;
        self
    }

    /// Gives the run static data in place: PE `i`'s [`hw::Device::share_static_data`] makes
    /// `regions[i]` its [`hw::MemKind::Static`] segment, so simulated writes to that segment
    /// write those bytes, and [`hw::Device::load_store_addr`] on the PE itself gives
    /// `base + offset`. Without it (the default) the simulator has no static data. One region
    /// per PE, all of one length ([`SimBuilder::build`] checks).
    ///
    /// # Safety
    /// Every region must be memory valid for reads and writes from when the run launches
    /// until it returns, the regions must not overlap, and nothing but the simulator and the
    /// PE's own program may touch a region during the run (the simulator copies into it at
    /// any time a PE is suspended).
    pub unsafe fn static_data(mut self, regions: Vec<StaticRegion>) -> Self {
        self.layout.static_regions = regions;
        self
    }

    /// Runs the one execution of an exploration that `explore.prefix` names, instead of a
    /// seeded run: the seed is ignored, timing becomes a few discrete delays, and the report
    /// has the choices made ([`SimReport::choice_trace`]). See [`explore`].
    pub fn explore(mut self, explore: Explore) -> Self {
        self.explore = Some(explore);
        self
    }

    /// Runs each PE as a shuttle task, so that shuttle's scheduler (PCT, DFS, replay) orders
    /// the operations PEs issue at the same virtual time, and checks the executor's hand-offs.
    /// Only under `--cfg rshmem_shuttle`, inside a shuttle test; see `exec_shuttle.rs`. The
    /// stack size is shuttle's (`shuttle::Config::stack_size`).
    #[cfg(rshmem_shuttle)]
    pub fn shuttle_tasks(mut self) -> Self {
        self.executor = Executor::ShuttleTasks;
        self
    }

    /// Breaks an ordering rule on purpose (test-only: see [`Fault`]). Faults add up.
    pub fn fault(mut self, fault: Fault) -> Self {
        self.params.faults = self.params.faults.with(fault);
        self
    }

    /// Injects `plan`'s faults into the run (docs/faults.md): slow PEs, slower or stalled
    /// links, crashed PEs. Its random parts are drawn from the run's seed. Plans add up.
    pub fn inject(mut self, plan: FaultPlan) -> Self {
        self.injection = self.injection.and(plan);
        self
    }

    /// Splits the run into `parts` partitions of whole hosts, run side by side on
    /// [`SimBuilder::threads`] threads (docs/sim-parallel.md). Operations through a NIC travel
    /// between partitions through a network of their own, a NIC's latency or more later, so
    /// each partition runs that long alone. The run is another run than without partitions
    /// (each partition draws its own chances, and events of one nanosecond come in another
    /// order), but it is the same run for any number of threads: the same seed and
    /// partitions give the same trace hash on one thread or many. Not for one host, an
    /// exploration, injected faults, broken rules, a timeline, the network transport, or
    /// memory with an address (`build` refuses them, saying why). One partition runs the
    /// parallel machinery on one world, which is what tests it against the others.
    pub fn partitions(mut self, parts: u32) -> Self {
        let threads = self.parallel.map_or(0, |p| p.threads);
        self.parallel = Some(parallel::Parallel { parts, threads });
        self
    }

    /// Sets the threads that run the partitions of [`SimBuilder::partitions`] (default: one
    /// per core, at most one per partition). Changes how fast a run goes, never what it does.
    pub fn threads(mut self, threads: u32) -> Self {
        if let Some(p) = &mut self.parallel {
            p.threads = threads.max(1);
        }
        self
    }

    /// Checks the configuration.
    ///
    /// # Errors
    /// [`LaunchError::Pes`] if the PE count is zero or larger than the topology's GPUs;
    /// [`LaunchError::Init`] if [`SimBuilder::static_data`] has not one region per PE, or
    /// regions of different lengths or that overlap, naming the PEs; or if the fault plan
    /// names a PE or link the run lacks, or comes with an exploration; or if payloads are
    /// dropped ([`SimBuilder::drop_payloads_from`]) where memory has an address.
    pub fn build(self) -> Result<Sim, LaunchError> {
        let gpus = self.topology.n_gpus();
        let n_pes = self.n_pes.unwrap_or(gpus);
        if n_pes == 0 {
            return Err(LaunchError::Pes {
                requested: 0,
                reason: "a run needs at least one PE".into(),
            });
        }
        if n_pes > gpus {
            return Err(LaunchError::Pes {
                requested: n_pes,
                reason: format!(
                    "topology {:?} has {gpus} GPUs and each PE needs its own; pick a larger \
                     topology (for example ib-{}) or fewer PEs",
                    self.topology.name(),
                    n_pes.div_ceil(8)
                ),
            });
        }
        if !self.layout.static_regions.is_empty() {
            check_static_regions(&self.layout.static_regions, n_pes).map_err(LaunchError::Init)?;
        }
        if let Some(from) = self.params.drop_payloads_from
            && (self.layout.addressable || !self.layout.static_regions.is_empty())
        {
            return Err(LaunchError::Init(format!(
                "dropping the bytes of puts of {from} bytes and more needs memory that is read \
                 only through the simulator, and this run's program loads its memory through \
                 its address (addressable memory or static data in place): keep the payloads"
            )));
        }
        let parallel = match self.parallel {
            Some(parallel) => Some((parallel, self.check_parallel(parallel, n_pes)?)),
            None => None,
        };
        let injection = if self.injection.is_empty() {
            None
        } else if self.explore.is_some() {
            return Err(LaunchError::Init(
                "an exploration runs without injected faults: drop the fault plan, or run \
                 seeds instead"
                    .into(),
            ));
        } else {
            let plan = self.injection.check(&self.topology, n_pes);
            Some(plan.map_err(|e| LaunchError::Init(e.to_string()))?)
        };
        Ok(Sim {
            topology: Rc::new(self.topology),
            n_pes,
            params: self.params,
            layout: self.layout,
            explore: self.explore,
            stack_bytes: self.stack_bytes,
            executor: self.executor,
            injection,
            parallel,
        })
    }

    /// Why this configuration cannot run split into partitions, if it cannot.
    fn check_parallel(
        &self,
        parallel: parallel::Parallel,
        n_pes: u32,
    ) -> Result<std::sync::Arc<parallel::Split>, LaunchError> {
        let refused = if parallel.parts == 0 {
            Some("zero partitions: ask for at least one")
        } else if self.explore.is_some() {
            Some("an exploration runs on one world, whose choices it enumerates")
        } else if !self.injection.is_empty() {
            Some("injected faults are not split across partitions yet")
        } else if !self.params.faults.list().is_empty() {
            Some("broken rules (test-only faults) run on one world")
        } else if self.params.timeline {
            Some("a timeline is drawn from one world")
        } else if self.params.network_transport {
            Some("the network transport completes gets at issue, which needs the target's memory")
        } else if self.layout.addressable || !self.layout.static_regions.is_empty() {
            Some("memory with an address is read by the program where no partition can see it")
        } else if self.executor != Executor::Coroutines {
            Some("shuttle tasks run on one world")
        } else {
            None
        };
        if let Some(why) = refused {
            return Err(LaunchError::Init(format!(
                "this run cannot be split into partitions: {why}; run it without partitions"
            )));
        }
        parallel::Split::by_hosts(&self.topology, n_pes, parallel.parts)
            .map(std::sync::Arc::new)
            .map_err(LaunchError::Init)
    }
}

impl Sim {
    /// Starts configuring a simulated run on `machine`: a preset or file
    /// ([`topology::load`]), or a bare [`Topology`], whose operations then cost the defaults.
    pub fn builder(machine: impl Into<Machine>) -> SimBuilder {
        let Machine { topology, timing } = machine.into();
        SimBuilder {
            topology,
            n_pes: None,
            params: WorldParams {
                timing,
                seed: 0,
                semantics: Semantics::Nvshmem,
                timeline: false,
                // A PCIe posted write reaches GPU memory within a couple of microseconds even
                // without a flush; an upper bound, not a measurement.
                drain_max_ns: 2_000,
                // One round of an out-of-band TCP exchange on one host.
                exchange_ns: 10_000,
                time_limit_ns: 3_600 * 1_000_000_000,
                faults: fault::Faults::default(),
                mapped_loads: false,
                pcie_read_flush: false,
                ib_coherent: false,
                network_transport: false,
                drop_payloads_from: None,
            },
            layout: Layout::default(),
            explore: None,
            stack_bytes: 256 * 1024,
            executor: Executor::Coroutines,
            injection: FaultPlan::default(),
            parallel: None,
        }
    }

    /// The seed of this run.
    pub fn seed(&self) -> u64 {
        self.params.seed
    }
}

impl Launcher for Sim {
    type B = SimBackend;
    type Report = SimReport;

    fn n_pes(&self) -> u32 {
        self.n_pes
    }

    fn topology(&self) -> &Topology {
        &self.topology
    }

    fn launch<R, F>(mut self, pe_main: F) -> Result<LaunchOutput<R, SimReport>, LaunchError>
    where
        F: Fn(SimDevice) -> R + Sync,
        R: Send,
    {
        let params = self.params;
        tracing::info!(
            target: TRACING_TARGET,
            seed = params.seed,
            pes = self.n_pes,
            topology = self.topology.name(),
            "SEED={} simulation starts",
            params.seed
        );
        let caps = Caps {
            backend_name: "sim",
            semantics: params.semantics,
            max_segment_bytes: MAX_SEGMENT_BYTES,
            simulated_time: true,
        };
        let faults = params.faults.list();
        if !faults.is_empty() {
            tracing::warn!(target: TRACING_TARGET, ?faults, "running with broken rules (test-only)");
        }
        if let Some((parallel, split)) = &self.parallel {
            let (results, merged) = parallel::launch(
                *parallel,
                std::sync::Arc::clone(split),
                &self.topology,
                self.n_pes,
                caps,
                params,
                self.stack_bytes,
                &pe_main,
            )?;
            return Ok((results, self.report(merged, faults)));
        }
        let mut world = World::new(
            Rc::clone(&self.topology),
            self.n_pes,
            caps,
            params,
            std::mem::take(&mut self.layout),
            self.explore.as_ref(),
        );
        if let Some(plan) = &self.injection {
            world.inject(plan);
        }
        let shared = Rc::new(Shared::new(world));
        let mut results = match self.executor {
            Executor::Coroutines => exec::run_pes(&shared, self.stack_bytes, &pe_main)?,
            #[cfg(rshmem_shuttle)]
            Executor::ShuttleTasks => exec_shuttle::run_pes(&shared, &pe_main)?,
        };
        let mut world = shared.world.borrow_mut();
        let injection = world.injected.take_report();
        // A crashed PE's program never returned: its result is the crash.
        for crash in injection.iter().flat_map(|r| &r.crashes) {
            if crash.happened {
                results[crash.pe as usize] = Err(hw::PeFailure {
                    pe: hw::Pe(crash.pe),
                    message: crash.message(),
                });
            }
        }
        let ended = report::Ended {
            counts: world.counts,
            trace_hash: world.trace.hash,
            events: world.events_processed,
            choices: world.chooser.choices(),
            choice_trace: world.chooser.trace(),
            sim_time_ns: world.sim_time_ns(),
            memory_bytes_peak: world.mem.resident_bytes_peak,
            failure: world.failure.clone(),
            timeline: world.trace.timeline.take(),
            injection,
        };
        drop(world);
        let report = self.report(ended, faults);
        Ok((results, report))
    }
}

impl Sim {
    /// The report of a run that `ended` so, with `faults` broken; a failure is logged with
    /// the seed that replays it.
    fn report(&self, ended: report::Ended, faults: Vec<Fault>) -> SimReport {
        let seed = self.params.seed;
        if let Some(message) = &ended.failure {
            tracing::warn!(target: TRACING_TARGET, seed, "run failed: {message}; rerun with seed {seed}");
        }
        SimReport {
            seed,
            topology: self.topology.name().to_string(),
            n_pes: self.n_pes,
            semantics: self.params.semantics,
            sim_time_ns: ended.sim_time_ns,
            ops: ended.counts,
            trace_hash: ended.trace_hash,
            events: ended.events,
            choices: ended.choices,
            choice_trace: ended.choice_trace,
            faults,
            memory_bytes_peak: ended.memory_bytes_peak,
            failure: ended.failure,
            timeline: ended.timeline,
            injection: ended.injection,
        }
    }
}
