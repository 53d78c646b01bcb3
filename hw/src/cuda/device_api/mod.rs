//! The device-side API (docs/teams-and-contexts.md, Tier-0): CUDA kernels that call SHMEM themselves, on
//! the default context, for peers reachable by loads and stores.
//!
//! [`HEADER`] (`rshmem_device.cuh`) is CUDA C shipped in the crate. [`CudaDevice::compile_kernel`]
//! compiles a user's source behind it with NVRTC for the PE's GPU and loads the module into
//! the PE's context; [`DeviceKernel::launch`] binds the PE's state and launches it on a
//! queue's stream, where it completes in order with the queue's other operations (its ticket
//! is a ticket of the queue, and the queue's quiet waits for it). docs/device-api.md is the
//! user's guide.
//!
//! Design:
//!
//! - **State.** One process, unified addressing: a PE's device heap (its `Device` segment)
//!   is mapped at the same address on every GPU, so a symmetric address translates to a
//!   peer's by its offset: `peer_base + (ptr - my_base)`. The state, `rshmem_state_t`, holds
//!   `my_pe`, `n_pes`, the smallest heap's size and every PE's heap and synchronisation base
//!   (`state.rs`). It is a `__constant__` symbol of the module, written on the queue's
//!   stream before the first launch (`cuModuleGetGlobal` and an asynchronous copy), and again
//!   before a launch after the heaps grew (their bases never move; the backed length does):
//!   every call reads it without a kernel parameter.
//! - **Synchronisation memory.** `barrier_all` and the pushed sum reduction need words that
//!   no program allocates: the run makes 2 MiB per PE (one granule of device memory, mapped
//!   for every GPU) on the first launch of any PE, since most runs launch no kernel of
//!   theirs (`World`). Its first 8 KiB hold the epochs, arrival slots and team barrier counters (`rshmem_sync_t`),
//!   the rest is the collectives' scratch, where the reduction's pushes land.
//! - **Scope.** A plain call is the calling thread's. `_warp` calls are made by every thread
//!   of a converged warp and `_block` calls by every thread of the block, with the same
//!   arguments; each thread copies a strided part, between `__syncwarp`s or
//!   `__syncthreads`. `barrier_all` is made by every thread of exactly one block per PE.
//! - **Loading.** A module is loaded, and its kernel with it, when it is compiled, not at
//!   its first launch (CUDA's lazy loading): loading waits for the kernels running on the
//!   GPU, which deadlocks if one of them waits for the kernel being loaded.
//! - **Compilation.** The source is the header, then `#line 1 "NAME.cu"`, then the user's
//!   code, so NVRTC's log gives the user's own line numbers. PTX for the GPU's compute
//!   capability, through the same NVRTC path as the atomics kernel (`nvrtc.rs`).
//!
//! Ordering of each call, against docs/ordering.md (the header says the same beside each):
//!
//! - `putmem`/`p` are stores issued at once and `getmem`/`g` loads that complete before the
//!   call returns: a put's source is reusable on return, a get's data is there.
//! - `fence` is `__threadfence_system()`: it orders the thread's earlier stores and atomics
//!   before its later ones for every observer of the system, which is the per-destination
//!   delivery order the rules ask for (docs/ordering.md) (stronger: across destinations too). It also orders
//!   two blocking fetches, the fence that restores their order (R7).
//! - `quiet` is the same fence. Over loads and stores nothing is in flight beyond what the
//!   fence orders: an observer that synchronises with any later write of this thread (a
//!   flag, a signal, a barrier arrival) sees every write before the quiet.
//! - `_nbi` calls are the blocking ones: issuing at once is a legal implementation of
//!   non-blocking, and the program may only rely on what the rules promise for nbi.
//! - atomics are `*_system` read-modify-writes (fetch and set: naturally aligned volatile
//!   accesses, single-copy atomic with them); they are ordered by fence like puts.
//! - `wait_until` and `signal_wait_until` poll the PE's own word with acquire loads
//!   (`ld.acquire.sys`): the acquire half of the writer's release or fence-then-write, so
//!   later loads see what the writer ordered before the flag. (A volatile poll and then an
//!   acquire fence cost 0.6 µs more per wait on two H200s.)
//! - `put_signal` is the copy, then the signal as a release store (SET) or a release
//!   reduction (ADD): whoever sees the signal sees that data, and no reply is awaited.
//! - `barrier_all` fences every thread (quiet), then arrives on every PE and waits for every
//!   PE's arrival with acquire polls: on NVLink, every update before any PE's barrier is
//!   visible after it.
//! - The pushed sum reduction stores into the peers' scratch, fences once and stores its
//!   epoch to every peer (a release each), and acquires every peer's epoch before adding.
//! - Device fences order only operations issued from the GPU, and the host's queues only
//!   those issued from the host (docs/ordering.md): a kernel and host operations of the same
//!   queue are ordered by the stream, those of different queues by quiet.
//! - PEs of other nodes (heap base 0 in the state) are reached through the PE's kernel proxy
//!   (`super::remote::KernelProxy`, docs/multi-node.md "Kernels across nodes"): each call
//!   toward them is a request in a ring the proxy serves in ticket order, each complete at its
//!   target before the next, so fence needs nothing more for them and quiet waits for the
//!   proxy's completed count to pass the tickets taken before it.
//!
//! Not here: contexts other than the default one (Tier-1), teams and collectives beyond
//! `barrier_all`, the runtime's `Shmem` handle (it would need a kernel interface in the `hw`
//! contract; today tests and tools use `hw::cuda` directly), and pointer arguments into host
//! segments.

mod args;
mod error;
pub(crate) mod state;
pub(crate) mod sync_words;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, CudaStream, LaunchConfig, PushKernelArg};

pub use args::KernelArg;
pub use error::DeviceApiError;

use super::device::CudaDevice;
use super::error::During;
use super::nvrtc::{arch, compile_ptx};
use super::queue::CudaQueue;
use super::reach::PeCtx;
use super::remote::KernelProxy;
use super::watchdog::{self, Watchdog};
use crate::types::{MemKind, Pe, Ticket};
use args::{RawArg, resolve};
use state::{MAX_PES, STATE_BYTES, STATE_SYMBOL, State};

/// The header kernels are compiled behind: every `rshmem_*` call.
pub const HEADER: &str = include_str!("rshmem_device.cuh");

/// How [`CudaDevice::compile_kernel_with`] compiles.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelOptions {
    /// A device wait (`wait_until`, `signal_wait_until`, `barrier_all`) not satisfied within
    /// this many nanoseconds prints what it waits for and traps, failing the kernel and
    /// leaving the GPU's context unusable, instead of hanging. `None` waits forever.
    pub wait_timeout_ns: Option<u64>,
}

/// A user's kernel, compiled with the device-side API and loaded into one PE's context.
///
/// It belongs to the PE's thread, like the [`CudaDevice`] that compiled it. Dropping it waits
/// for every launch of it to finish, because its module is unloaded then.
#[derive(Debug)]
pub struct DeviceKernel {
    ctx: Rc<PeCtx>,
    name: String,
    module: Arc<CudaModule>,
    function: CudaFunction,
    /// The most threads a block of it may have (its registers limit it).
    max_threads: u32,
    /// The PE's count of segment changes (`PeCtx::reachable_changes`) when the module's
    /// `rshmem_state` was last written, if it was: the state changes only when the heaps
    /// grow (`Device::grow_segment`).
    bound_at_change: Cell<Option<u64>>,
    /// The streams it was launched on, waited for when it is dropped.
    streams: RefCell<Vec<Arc<CudaStream>>>,
}

impl CudaDevice {
    /// Compiles `source`, which defines `extern "C" __global__ void NAME(...)`, behind the
    /// device-side API's [`HEADER`] for this PE's GPU, and loads it. Waits never time out;
    /// see [`CudaDevice::compile_kernel_with`].
    ///
    /// # Errors
    /// [`DeviceApiError::Compile`] with NVRTC's log (`NAME.cu(LINE): error: ...`) if the
    /// source does not compile or NVRTC is missing; [`DeviceApiError::NoKernel`] if it
    /// defines no such kernel; [`DeviceApiError::Driver`] if the module does not load.
    pub fn compile_kernel(&self, source: &str, name: &str) -> Result<DeviceKernel, DeviceApiError> {
        self.compile_kernel_with(source, name, &KernelOptions::default())
    }

    /// [`CudaDevice::compile_kernel`] with options.
    ///
    /// # Errors
    /// As [`CudaDevice::compile_kernel`], and [`DeviceApiError::BadName`] for a name that is
    /// not a C identifier.
    pub fn compile_kernel_with(
        &self,
        source: &str,
        name: &str,
        options: &KernelOptions,
    ) -> Result<DeviceKernel, DeviceApiError> {
        if !is_identifier(name) {
            return Err(DeviceApiError::BadName { name: name.into() });
        }
        let ctx = self.pe_ctx();
        let cuda = &ctx.gpu.ctx;
        let (major, minor) = cuda
            .compute_capability()
            .during("cuDeviceGetAttribute(compute capability)")?;
        let defines: Vec<String> = options
            .wait_timeout_ns
            .map(|ns| format!("-DRSHMEM_WAIT_TIMEOUT_NS={ns}ull"))
            .into_iter()
            .collect();
        let file = format!("{name}.cu");
        let ptx = compile_ptx(
            &full_source(source, &file),
            &file,
            &arch(major, minor),
            &defines,
        )?;
        let module = cuda.load_module(ptx).during("cuModuleLoadData")?;
        let function = module
            .load_function(name)
            .map_err(|_| DeviceApiError::NoKernel { name: name.into() })?;
        // Asking for an attribute loads the function now. Under CUDA's lazy loading it would
        // otherwise load at its first launch, which waits for the kernels running on the GPU:
        // a deadlock if one of them waits for this one (SHMEM kernels do).
        let max_threads = function
            .max_threads_per_block()
            .during("cuFuncGetAttribute(max threads per block)")?;
        tracing::debug!(
            target: "rshmem::hw::cuda",
            pe = ctx.pe.0,
            kernel = name,
            "device-API kernel loaded for compute_{major}{minor}"
        );
        Ok(DeviceKernel {
            ctx: Rc::clone(ctx),
            name: name.into(),
            module,
            function,
            max_threads: u32::try_from(max_threads).unwrap_or(0),
            bound_at_change: Cell::new(None),
            streams: RefCell::new(Vec::new()),
        })
    }
}

impl CudaDevice {
    /// This PE's `rshmem_state_t`, [`DEVICE_STATE_BYTES`] bytes, for kernels compiled
    /// offline (by nvcc, with `rshmem/device_gpu.cuh`) whose program copies it into its own
    /// `rshmem_state` symbol. It changes only when a heap grows; making it makes the run's
    /// synchronisation memory on the first call, as the first launch does.
    ///
    /// # Errors
    /// [`DeviceApiError::NotImported`] if a PE's device heap is not mapped here yet,
    /// [`DeviceApiError::TooManyPes`] beyond the state's PEs, or a driver error.
    ///
    /// A `wait_timeout_ns` other than 0 makes a kernel's wait that goes unsatisfied that long
    /// report and trap, and starts the PE's watchdog, which prints the wait with its word in
    /// the program's terms and ends the job (`super::watchdog`).
    pub fn device_state(&self, wait_timeout_ns: u64) -> Result<Vec<u8>, DeviceApiError> {
        Ok(state_of(self.pe_ctx(), wait_timeout_ns)?.to_bytes())
    }
}

/// The size of `rshmem_state_t`, what [`CudaDevice::device_state`] returns.
pub const DEVICE_STATE_BYTES: usize = STATE_BYTES;

/// The watchdog of the PE of `ctx`, started on first use; `heap_base` and `sync_base` are the
/// PE's own device heap and synchronisation memory, whose words its reports name.
/// heap, whose words its reports name through the runtime's table.
fn watchdog_of(ctx: &PeCtx, heap_base: u64, sync_base: u64) -> Result<&Watchdog, DeviceApiError> {
    if let Some(watchdog) = ctx.watchdog.get() {
        return Ok(watchdog);
    }
    let names = ctx.names.borrow().clone().unwrap_or_default();
    let bases = watchdog::Bases {
        heap: heap_base,
        sync: sync_base,
    };
    let watchdog = Watchdog::start(&ctx.gpu.ctx, Arc::clone(&ctx.world), bases, names)?;
    Ok(ctx.watchdog.get_or_init(|| watchdog))
}

/// `pe`'s device heap as the PE of `ctx` maps it: base address and length; `None` for a PE
/// of another node, which kernels reach through the PE's kernel proxy.
fn heap_of(ctx: &PeCtx, pe: Pe) -> Result<Option<(u64, u64)>, DeviceApiError> {
    if ctx.world.remote_to(pe).is_some() {
        return Ok(None);
    }
    ctx.segment(pe, MemKind::Device)
        .map(Some)
        .ok_or(DeviceApiError::NotImported { pe })
}

/// The address of the channel of the PE of `ctx`'s kernels, its proxy started on first use;
/// 0 where every peer is reached by loads and stores.
fn channel_of(ctx: &PeCtx) -> Result<u64, DeviceApiError> {
    if ctx.world.remote().is_none() {
        return Ok(0);
    }
    if let Some(proxy) = ctx.kernel_proxy.get() {
        return Ok(proxy.addr());
    }
    let proxy = KernelProxy::start(ctx.pe, Arc::clone(&ctx.gpu), Arc::clone(&ctx.world))
        .map_err(DeviceApiError::Proxy)?;
    Ok(ctx.kernel_proxy.get_or_init(|| proxy).addr())
}

/// The state kernels of the PE of `ctx` read: every PE's heap, the run's synchronisation
/// memory, the channel to PEs of other nodes, and the waits' timeout with the watchdog's
/// record (none for 0).
fn state_of(ctx: &PeCtx, wait_timeout_ns: u64) -> Result<State, DeviceApiError> {
    let world = &ctx.world;
    if world.n_pes as usize > MAX_PES {
        return Err(DeviceApiError::TooManyPes {
            n_pes: world.n_pes,
            max: MAX_PES,
        });
    }
    let heaps = (0..world.n_pes)
        .map(|pe| heap_of(ctx, Pe(pe)))
        .collect::<Result<Vec<_>, _>>()?;
    let (my_heap, _) = heaps[ctx.pe.idx()].ok_or(DeviceApiError::NotImported { pe: ctx.pe })?;
    let sync_base = world.device_sync_bases(&ctx.gpu)?;
    let hang_record = if wait_timeout_ns == 0 {
        0
    } else {
        watchdog_of(ctx, my_heap, sync_base[ctx.pe.idx()])?.record_addr()
    };
    Ok(State {
        my_pe: ctx.pe.0,
        // Heaps are symmetric: those of other nodes are as long as the ones here.
        heap_bytes: heaps
            .iter()
            .flatten()
            .map(|&(_, len)| len)
            .min()
            .unwrap_or(0),
        wait_timeout_ns,
        hang_record,
        channel: channel_of(ctx)?,
        heap_base: heaps
            .iter()
            .map(|heap| heap.map_or(0, |(base, _)| base))
            .collect(),
        sync_base,
    })
}

/// The header, then the user's source numbered from its own line 1.
fn full_source(source: &str, file: &str) -> String {
    format!("#line 1 \"rshmem_device.cuh\"\n{HEADER}\n#line 1 \"{file}\"\n{source}")
}

/// Whether `name` is a C identifier (and so a kernel's unmangled name).
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl DeviceKernel {
    /// The kernel's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Launches the kernel on `queue`'s stream with `grid` blocks of `block` threads (x, y,
    /// z) and `args` for its parameters in order; the PE's state is bound first.
    ///
    /// # Ordering
    /// The kernel starts after every operation issued on `queue` before it completed and
    /// completes before those issued after it start (stream order). Its ticket completes
    /// when the kernel has finished, and `quiet` on the queue waits for it: every store of
    /// the kernel is then visible to every PE.
    ///
    /// # Safety
    /// The kernel runs code the caller wrote, with the reach of any CUDA kernel:
    /// - `args` match the kernel's parameters in number, order and C type (see
    ///   [`KernelArg`]);
    /// - the kernel accesses only the run's device heaps (within them) and memory the
    ///   arguments point to, naturally aligned where the header asks for it;
    /// - its collective calls are made as the header documents (`_warp` by whole warps,
    ///   `_block` and `barrier_all` by whole blocks, `barrier_all` by one block per PE);
    ///   a block waiting for another must not keep it from being scheduled.
    ///
    /// # Errors
    /// [`DeviceApiError::NotImported`] if a PE's `Device` segment is not known to this PE,
    /// [`DeviceApiError::TooManyPes`], [`DeviceApiError::ArgOutsideHeap`],
    /// [`DeviceApiError::BlockTooLarge`], or a driver or queue error.
    ///
    /// # Panics
    /// If `queue` is another PE's (a contract violation).
    pub unsafe fn launch(
        &self,
        queue: &CudaQueue,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        args: &[KernelArg],
    ) -> Result<Ticket, DeviceApiError> {
        let pe = self.ctx.pe;
        assert_eq!(
            queue.pe(),
            pe,
            "kernel {} of {pe} launched on another PE's queue",
            self.name
        );
        let threads = u64::from(block.0) * u64::from(block.1) * u64::from(block.2);
        if threads > u64::from(self.max_threads) {
            return Err(DeviceApiError::BlockTooLarge {
                threads,
                max: self.max_threads,
            });
        }
        let (heap_base, heap_bytes) = self.heap(pe)?;
        let raw = resolve(args, heap_base, heap_bytes)?;
        let changes = self.ctx.reachable_changes();
        let state = if self.bound_at_change.get() == Some(changes) {
            None
        } else {
            // Kernels compiled here take their timeout from KernelOptions at compile time.
            Some(state_of(&self.ctx, 0)?)
        };
        let ticket = queue.enqueue_with(|stream| {
            if let Some(state) = &state {
                self.bind(stream, state)?;
            }
            let mut launch = stream.launch_builder(&self.function);
            for arg in &raw {
                match arg {
                    RawArg::B32(v) => launch.arg(v),
                    RawArg::B64(v) => launch.arg(v),
                };
            }
            let config = LaunchConfig {
                grid_dim: grid,
                block_dim: block,
                shared_mem_bytes: 0,
            };
            // SAFETY: the caller guarantees that the arguments match the kernel's parameters
            // and that the kernel's accesses stay in memory of the run, which is mapped for
            // this GPU until the run ends; the values pushed live until this call returns.
            unsafe { launch.launch(config) }.during("cuLaunchKernel")?;
            let mut streams = self.streams.borrow_mut();
            if !streams.iter().any(|s| Arc::ptr_eq(s, stream)) {
                streams.push(Arc::clone(stream));
            }
            Ok::<_, DeviceApiError>(())
        })?;
        self.bound_at_change.set(Some(changes));
        Ok(ticket)
    }

    /// `pe`'s device heap: base address and length.
    fn heap(&self, pe: Pe) -> Result<(u64, u64), DeviceApiError> {
        heap_of(&self.ctx, pe)?.ok_or(DeviceApiError::NotImported { pe })
    }

    /// Enqueues the copy of `state` into the module's `rshmem_state` on `stream`.
    fn bind(&self, stream: &Arc<CudaStream>, state: &State) -> Result<(), super::DriverCallError> {
        let mut symbol = self
            .module
            .get_global(STATE_SYMBOL, stream)
            .during("cuModuleGetGlobal")?;
        assert_eq!(
            symbol.len(),
            STATE_BYTES,
            "rshmem_state_t of the header and state.rs disagree"
        );
        // The source is pageable host memory: the copy has taken it when the call returns.
        stream
            .memcpy_htod(&state.to_bytes()[..], &mut symbol)
            .during("cuMemcpyHtoDAsync")
    }
}

impl Drop for DeviceKernel {
    /// Waits for the streams the kernel ran on: its module is unloaded next.
    fn drop(&mut self) {
        for stream in self.streams.borrow().iter() {
            if let Err(e) = stream.synchronize().during("cuStreamSynchronize") {
                tracing::warn!(target: "rshmem::hw::cuda", kernel = %self.name, "dropping a kernel: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::nvrtc::NvrtcError;

    #[test]
    fn kernel_names_are_c_identifiers() {
        for good in ["k", "_k", "put_bw2"] {
            assert!(is_identifier(good), "{good}");
        }
        for bad in ["", "2k", "a-b", "k\0", "ns::k", "k \"x"] {
            assert!(!is_identifier(bad), "{bad:?}");
        }
    }

    /// The user's code starts at its own line 1, after the whole header.
    #[test]
    fn the_source_follows_the_header_at_line_one() {
        let full = full_source("int x;\n", "k.cu");
        assert!(full.starts_with("#line 1 \"rshmem_device.cuh\"\n"));
        assert!(full.contains("#endif // RSHMEM_DEVICE_CUH\n\n#line 1 \"k.cu\"\nint x;\n"));
    }

    /// The header compiles with a kernel that uses every call, at every type the header
    /// promises; without NVRTC (no CUDA toolkit here) the test says so and passes.
    #[test]
    fn the_header_compiles() {
        let source = include_str!("every_call.cu");
        match compile_ptx(
            &full_source(source, "every_call.cu"),
            "every_call.cu",
            "compute_90",
            &["-DRSHMEM_WAIT_TIMEOUT_NS=1000000000ull".into()],
        ) {
            Ok(ptx) => assert!(ptx.to_src().contains("every_call")),
            Err(NvrtcError::NoNvrtc) => {
                eprintln!("skipped: NVRTC is not installed, so the header was not compiled");
            }
            Err(e) => panic!("{e}"),
        }
    }

    /// A compile error's log names the user's file and line.
    #[test]
    fn a_compile_error_names_the_users_line() {
        let source = "extern \"C\" __global__ void k() {\n  undefined_thing();\n}\n";
        match compile_ptx(&full_source(source, "k.cu"), "k.cu", "compute_90", &[]) {
            Err(NvrtcError::Compile { log, .. }) => assert!(log.contains("k.cu(2)"), "{log}"),
            Err(NvrtcError::NoNvrtc) => {
                eprintln!("skipped: NVRTC is not installed, so nothing was compiled");
            }
            Ok(_) => panic!("a call of an undefined function compiled"),
        }
    }
}
