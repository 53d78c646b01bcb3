//! Launches: the configuration a `<<<grid, block, shmem, stream>>>` pushes, and
//! `cudaLaunchKernel`, which runs the kernel through the runtime's kernel model.
//!
//! The launch is synchronous: every thread runs to its end inside the call (streams are
//! ordered trivially, and the stub's argument array stays valid for the whole launch). The
//! kernel-level errors of the model (a `__syncthreads` some threads never reach, calls that
//! differ within a warp or block) end the run naming the kernel; a configuration CUDA refuses
//! is returned as CUDA's error code.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::Mutex;

use rshmem::{Dim3, KernelError, ShmemError};

use crate::cuda_sim::builtins::Exchange;
use crate::cuda_sim::fiber::Fiber;
use crate::cuda_sim::guard;
use crate::cuda_sim::initcheck::{self, Shadow};
use crate::cuda_sim::registry::{self, Kernel, Trampoline};
use crate::cuda_sim::runtime_api::{CudaError, refuse, this_pe};
use crate::cuda_sim::shared::{DYNAMIC_SHARED_BYTES, SharedMemory};
use crate::fail::CallError;

/// A `dim3` as clang passes it for x86-64: `{x, y}` packed in one word, then `z`.
pub(crate) fn dim3(xy: u64, z: u32) -> Dim3 {
    Dim3::new(xy as u32, (xy >> 32) as u32, z)
}

/// One pushed configuration: grid, block, dynamic shared bytes, stream.
#[derive(Clone, Copy)]
struct Configuration {
    pe: u32,
    grid: Dim3,
    block: Dim3,
    shmem: usize,
    stream: usize,
}

/// Pushed configurations not yet popped. Each is the PE's: a PE's arguments may let another
/// PE run between its push and its pop.
static PUSHED: Mutex<Vec<Configuration>> = Mutex::new(Vec::new());

/// `__cudaPushCallConfiguration`, what `<<<grid, block, shmem, stream>>>` compiles to.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim___cudaPushCallConfiguration(
    grid_xy: u64,
    grid_z: u32,
    block_xy: u64,
    block_z: u32,
    shmem: usize,
    stream: *mut c_void,
) -> u32 {
    guard("__cudaPushCallConfiguration", || {
        let pushed = Configuration {
            pe: this_pe(),
            grid: dim3(grid_xy, grid_z),
            block: dim3(block_xy, block_z),
            shmem,
            stream: stream as usize,
        };
        PUSHED
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(pushed);
        0
    })
}

/// `__cudaPopCallConfiguration`, in the kernel's stub: the PE's last pushed configuration,
/// written as `dim3`s (three `unsigned`), or 1 when none was pushed.
///
/// # Safety
/// `grid` and `block` point at `dim3`s, `shmem` at a `size_t`, `stream` at a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __rsim___cudaPopCallConfiguration(
    grid: *mut c_void,
    block: *mut c_void,
    shmem: *mut usize,
    stream: *mut *mut c_void,
) -> c_int {
    guard("__cudaPopCallConfiguration", || {
        let pe = this_pe();
        let popped = {
            let mut pushed = PUSHED.lock().unwrap_or_else(|p| p.into_inner());
            let last = pushed.iter().rposition(|c| c.pe == pe);
            last.map(|at| pushed.remove(at))
        };
        let Some(c) = popped else { return 1 };
        let write_dim = |to: *mut c_void, d: Dim3| {
            // SAFETY: the caller's contract: a dim3, three unsigned ints.
            unsafe { to.cast::<[u32; 3]>().write_unaligned([d.x, d.y, d.z]) };
        };
        write_dim(grid, c.grid);
        write_dim(block, c.block);
        // SAFETY: the caller's contract.
        unsafe {
            shmem.write(c.shmem);
            stream.write(c.stream as *mut c_void);
        }
        0
    })
}

/// One launch as its threads see it: the kernel, its arguments and the block state they share.
pub(crate) struct Grid<'a> {
    /// The launching PE.
    pub(crate) pe: u32,
    /// Its slot, current again whenever one of its threads resumes.
    pub(crate) slot: &'static crate::state::Slot,
    kernel: &'a Kernel,
    pub(crate) trampoline: Trampoline,
    /// cudaLaunchKernel's argument array, valid until the launch returns.
    pub(crate) args: *mut *mut c_void,
    pub(crate) shared: SharedMemory,
    /// Which shared bytes each block wrote, for a program built with hooks.
    pub(crate) initcheck: Option<Shadow>,
    pub(crate) exchange: Exchange,
    /// Which blocks have threads started.
    pub(crate) residency: super::residency::Residency,
    /// The PE's table of mapped loads, for the inline `g` of its threads.
    pub(crate) mapped: *mut super::mapped::MappedTable,
}

impl Grid<'_> {
    /// The kernel's name for messages: demangled when the C++ runtime is in the process.
    pub(crate) fn kernel_name(&self) -> String {
        demangle(&self.kernel.name)
    }
}

/// `name` demangled by the C++ runtime's `__cxa_demangle`, if the program has one (C++
/// programs do), else as it is.
pub(crate) fn demangle(name: &str) -> String {
    type CxaDemangle =
        unsafe extern "C" fn(*const c_char, *mut c_char, *mut usize, *mut c_int) -> *mut c_char;
    // SAFETY: dlsym looks a name up in the loaded objects; RTLD_DEFAULT searches them all.
    let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__cxa_demangle".as_ptr()) };
    let Ok(mangled) = std::ffi::CString::new(name) else {
        return name.to_owned();
    };
    if found.is_null() {
        return name.to_owned();
    }
    // SAFETY: the symbol is the Itanium ABI's __cxa_demangle, of this signature.
    let demangle: CxaDemangle = unsafe { std::mem::transmute(found) };
    let mut status = 0;
    // SAFETY: a NUL-terminated name; null buffer and length ask it to allocate the result.
    let out = unsafe {
        demangle(
            mangled.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut status,
        )
    };
    if out.is_null() || status != 0 {
        return name.to_owned();
    }
    // SAFETY: a NUL-terminated string malloc'ed by __cxa_demangle, freed after the copy.
    let text = unsafe { CStr::from_ptr(out) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: as above.
    unsafe { libc::free(out.cast()) };
    text
}

/// `cudaLaunchKernel` (and the stubs' launches): runs the kernel whose stub is `stub` on
/// every thread of the grid, to the end.
///
/// # Safety
/// `args` holds a pointer to each of the kernel's arguments, as a stub passes them.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)] // The signature is the CUDA runtime's.
pub unsafe extern "C" fn __rsim_cudaLaunchKernel(
    stub: *const c_void,
    grid_xy: u64,
    grid_z: u32,
    block_xy: u64,
    block_z: u32,
    args: *mut *mut c_void,
    shmem: usize,
    _stream: *mut c_void,
) -> c_int {
    guard("cudaLaunchKernel", || {
        launch(
            stub,
            dim3(grid_xy, grid_z),
            dim3(block_xy, block_z),
            args,
            shmem,
        ) as c_int
    })
}

/// The launch of [`__rsim_cudaLaunchKernel`], after its arguments are unpacked.
fn launch(
    stub: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shmem: usize,
) -> CudaError {
    const CALL: &str = "cudaLaunchKernel";
    let Some(kernel) = registry::kernel(stub) else {
        return refuse(
            CALL,
            CudaError::InvalidDeviceFunction,
            "no kernel is registered for this function: build every .cu file of the program \
             with rshmem-nvcc",
        );
    };
    if shmem > DYNAMIC_SHARED_BYTES {
        let why = format!(
            "kernel {} asks for {shmem} bytes of dynamic shared memory; a block has at most \
             {DYNAMIC_SHARED_BYTES}",
            demangle(&kernel.name)
        );
        return refuse(CALL, CudaError::InvalidValue, &why);
    }
    // A CUDA program that calls no SHMEM (or launches before nvshmem_init) still has PEs: the
    // first launch starts this one, as CUDA starts its context at the first call that needs
    // one; a later nvshmem_init finds it running.
    if crate::state::running_pe().is_none() && !crate::state::is_finalized() {
        crate::state::init(CALL, 0);
    }
    crate::state::with_pe(CALL, |pe| {
        let shmem_handle = &pe.shmem;
        let n_blocks = grid.count() as usize;
        let block_threads = block.count() as u32;
        let shared = SharedMemory::new(kernel.smem.clone(), shmem, n_blocks, block_threads);
        let facts = initcheck::facts(kernel.object);
        let grid_state = Grid {
            pe: shmem_handle.my_pe(),
            slot: crate::state::slot(),
            kernel: &kernel,
            trampoline: kernel.trampoline,
            args,
            initcheck: Shadow::new(facts, shared.places(), n_blocks),
            shared,
            exchange: Exchange::new(),
            mapped: super::mapped::table(pe),
            residency: super::residency::Residency::new(n_blocks, block_threads),
        };
        let name = grid_state.kernel_name();
        let ran = shmem_handle.launch_named_kernel(&name, grid, block, async |t| {
            Fiber::new(t, &grid_state).await
        });
        super::mapped::charge_table(grid_state.mapped, pe);
        match ran {
            Ok(_) => Ok(CudaError::Success),
            Err(ShmemError::Kernel(KernelError::InvalidDims { what, dims, reason })) => {
                let why = format!(
                    "kernel {}: {what} {dims}: {reason}",
                    grid_state.kernel_name()
                );
                Ok(refuse(CALL, CudaError::InvalidConfiguration, &why))
            }
            Err(err) => Err(CallError::Argument(format!(
                "kernel {}: {err}",
                grid_state.kernel_name()
            ))),
        }
    })
}
