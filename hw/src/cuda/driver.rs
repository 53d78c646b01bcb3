//! Loading the driver at run time, the inventory of GPUs, and what the process keeps of the
//! driver between runs: one retained primary context per GPU, with its atomics kernel, and the
//! network path's proxies' context.
//!
//! The contexts stay retained until the process ends on purpose: a primary context is
//! destroyed when its last user releases it, and creating one costs a large fraction of a
//! second, which a suite of thousands of short runs (the litmus runner) cannot pay per run.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, DriverError, result, sys};

use super::error::{CudaUnavailable, DriverCallError, During};
use super::kernel::{AmoKernel, KernelError};
use crate::common::threads::panic_message;

/// One GPU as the driver reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuInfo {
    /// The driver's ordinal (PE `i` of a CUDA run uses GPU `i`, unless `CudaBuilder::gpus`
    /// places it).
    pub ordinal: u32,
    /// The product name ("NVIDIA H200").
    pub name: String,
    /// Compute capability, major and minor (9.0 for Hopper).
    pub compute_capability: (u32, u32),
    /// Device memory in bytes.
    pub memory_bytes: u64,
}

/// The GPUs of this machine and which of them can reach each other's memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuInventory {
    /// Every GPU, by ordinal.
    pub gpus: Vec<GpuInfo>,
    /// The ordered pairs `(from, to)` of ordinals where `from` can access `to`'s memory.
    pub peer_access: Vec<(u32, u32)>,
}

impl GpuInventory {
    /// Whether GPU `from` can access GPU `to`'s memory (a GPU always reaches its own).
    pub fn can_access_peer(&self, from: u32, to: u32) -> bool {
        from == to || self.peer_access.contains(&(from, to))
    }
}

/// Loads the CUDA driver and takes the inventory: how many GPUs, their names, and which pairs
/// have peer access. Cheap enough to call before every run: it creates no context.
///
/// # Errors
/// [`CudaUnavailable`] saying why CUDA cannot be used here: no driver library, no GPU, or the
/// driver call that failed. It never panics, even where the library is missing.
pub fn probe() -> Result<GpuInventory, CudaUnavailable> {
    guarded(|| {
        match result::init() {
            Err(DriverError(sys::CUresult::CUDA_ERROR_NO_DEVICE)) => {
                return Err(CudaUnavailable::NoGpu);
            }
            other => other.during("cuInit")?,
        }
        let n_gpus = result::device::get_count().during("cuDeviceGetCount")?;
        if n_gpus <= 0 {
            return Err(CudaUnavailable::NoGpu);
        }
        let devices = (0..n_gpus)
            .map(|i| result::device::get(i).during("cuDeviceGet"))
            .collect::<Result<Vec<_>, _>>()?;
        let gpus = devices
            .iter()
            .zip(0..)
            .map(|(&dev, ordinal)| gpu_info(dev, ordinal))
            .collect::<Result<Vec<_>, _>>()?;
        let mut peer_access = Vec::new();
        for (from, &a) in (0..).zip(&devices) {
            for (to, &b) in (0..).zip(&devices) {
                if from != to && can_access_peer(a, b)? {
                    peer_access.push((from, to));
                }
            }
        }
        Ok(GpuInventory { gpus, peer_access })
    })
}

/// Runs `f`, which makes a process's first driver calls. The bindings load libcuda on first
/// use and panic if it is missing, so this checks first that the library loads, and turns a
/// panic of the loader (a symbol an old driver lacks) into an error.
fn guarded<T>(f: impl FnOnce() -> Result<T, CudaUnavailable>) -> Result<T, CudaUnavailable> {
    // SAFETY: this opens libcuda by name and closes it again; loading runs the library's
    // initialisers, as every CUDA program does, and nothing here relies on it staying unloaded.
    if !unsafe { sys::is_culib_present() } {
        return Err(CudaUnavailable::NoDriver);
    }
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|payload| Err(CudaUnavailable::Load(panic_message(&*payload))))
}

fn gpu_info(dev: sys::CUdevice, ordinal: u32) -> Result<GpuInfo, DriverCallError> {
    let attribute = |attr| {
        // SAFETY: `dev` is a device handle the driver returned, and `attr` one of its
        // attributes; the call only reads.
        unsafe { result::device::get_attribute(dev, attr) }.during("cuDeviceGetAttribute")
    };
    use sys::CUdevice_attribute::{
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR as MAJOR,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR as MINOR,
    };
    let major = u32::try_from(attribute(MAJOR)?).unwrap_or(0);
    let minor = u32::try_from(attribute(MINOR)?).unwrap_or(0);
    // SAFETY: `dev` is a device handle the driver returned; the call only reads.
    let memory_bytes = unsafe { result::device::total_mem(dev) }.during("cuDeviceTotalMem")?;
    Ok(GpuInfo {
        ordinal,
        name: result::device::get_name(dev).during("cuDeviceGetName")?,
        compute_capability: (major, minor),
        memory_bytes: memory_bytes as u64,
    })
}

fn can_access_peer(a: sys::CUdevice, b: sys::CUdevice) -> Result<bool, DriverCallError> {
    let mut can = 0;
    // SAFETY: `a` and `b` are device handles the driver returned and `can` is a valid place
    // for the answer.
    unsafe { sys::cuDeviceCanAccessPeer(&mut can, a, b) }.during("cuDeviceCanAccessPeer")?;
    Ok(can != 0)
}

/// What the process keeps of one GPU: its retained primary context and, once a run needed
/// them, the atomics kernel loaded into that context and the proxies' context.
#[derive(Debug)]
pub(crate) struct Gpu {
    pub(crate) ordinal: u32,
    pub(crate) ctx: Arc<CudaContext>,
    amo: OnceLock<Result<AmoKernel, KernelError>>,
    proxies: OnceLock<Result<ProxyContext, String>>,
}

/// A second context on a GPU, for the threads that serve the network path (the proxies),
/// with its own atomics kernel.
///
/// Why not the primary context: the driver feeds a context's streams to the GPU through a
/// few hardware queues (`CUDA_DEVICE_MAX_CONNECTIONS`, 8 by default), and two streams that
/// share a queue run in order. A proxy's copy or atomic waiting behind a program's kernel
/// that spins until that very copy lands is a deadlock, and with enough streams it happened
/// now and then. Contexts have queues of their own, and the GPU time-slices between them, so
/// the proxies' work runs whatever the program's kernels do. Memory the primary context
/// mapped (the symmetric heap, `cudaMalloc`) is reachable from this one: the process has
/// one unified address space.
#[derive(Debug)]
pub(crate) struct ProxyContext {
    pub(crate) ctx: Arc<CudaContext>,
    pub(crate) amo: AmoKernel,
}

impl Gpu {
    /// The atomics kernel of this GPU's context, compiled and loaded on first use.
    ///
    /// # Errors
    /// [`KernelError`] if NVRTC is missing, the kernel does not compile, or the module does not
    /// load; the error is kept, so later runs fail the same way at once.
    pub(crate) fn amo_kernel(&self) -> Result<&AmoKernel, KernelError> {
        self.amo
            .get_or_init(|| AmoKernel::load(&self.ctx))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The proxies' context of this GPU, created on first use and made current on the calling
    /// thread then (a proxy thread binds it anyway).
    ///
    /// # Errors
    /// What failed, as a message; kept, so every proxy fails the same way.
    pub(crate) fn proxy_context(&self) -> Result<&ProxyContext, String> {
        self.proxies
            .get_or_init(|| {
                let ctx = CudaContext::new_non_primary(self.ordinal as usize, 0)
                    .during("cuCtxCreate")
                    .map_err(|e| e.to_string())?;
                let amo = AmoKernel::load(&ctx).map_err(|e| e.to_string())?;
                Ok(ProxyContext { ctx, amo })
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// GPU `ordinal`'s retained primary context, created on first use and kept for the process.
/// Call [`probe`] first: it loads the driver without panicking.
///
/// # Errors
/// The driver call that failed.
pub(crate) fn gpu(ordinal: u32) -> Result<Arc<Gpu>, DriverCallError> {
    static GPUS: Mutex<BTreeMap<u32, Arc<Gpu>>> = Mutex::new(BTreeMap::new());
    let mut gpus = GPUS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(gpu) = gpus.get(&ordinal) {
        return Ok(Arc::clone(gpu));
    }
    let ctx = CudaContext::new(ordinal as usize).during("cuDevicePrimaryCtxRetain")?;
    let gpu = Arc::new(Gpu {
        ordinal,
        ctx,
        amo: OnceLock::new(),
        proxies: OnceLock::new(),
    });
    gpus.insert(ordinal, Arc::clone(&gpu));
    Ok(gpu)
}
