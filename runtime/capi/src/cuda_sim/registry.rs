//! What the program's two compiler passes register: the host pass's kernel stubs and variable
//! shadows (`__cudaRegisterFunction`, `__cudaRegisterVar`, renamed `__rsim_`), and the device
//! pass's modules (`__rsim_register_module`: device name → trampoline, variable name → address,
//! the `__shared__` section).
//!
//! Why stubs are paired with modules by loaded object and not by name alone: on the simulator
//! each PE runs its own copy of the executable (`sim_host/copies.rs`), so every name registers
//! once per copy, at different addresses; a stub belongs to the module of the same copy. The
//! copy is the object `dladdr` finds the address in (its base address). Where `dladdr` knows
//! no object (a static executable), names pair when they are unique.
//!
//! Registrations are kept until the process ends: a copy's registrations are never unloaded
//! while its PE can still launch. Lookups take a process-wide lock, once per launch.

use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::ops::Range;
use std::sync::{Arc, Mutex};

use crate::cuda_sim::guard;

/// A kernel's trampoline: calls the kernel with the launch's argument array.
pub(crate) type Trampoline = unsafe extern "C" fn(args: *mut *mut c_void);

/// `struct rsim_kernel`.
#[repr(C)]
pub struct RsimKernel {
    name: *const c_char,
    trampoline: Option<Trampoline>,
}

/// `struct rsim_var`.
#[repr(C)]
pub struct RsimVar {
    name: *const c_char,
    addr: *mut c_void,
    size: u64,
}

/// `struct rsim_module`.
#[repr(C)]
pub struct RsimModule {
    abi_version: u32,
    kernels: *const RsimKernel,
    n_kernels: u64,
    vars: *const RsimVar,
    n_vars: u64,
    smem_start: *mut c_char,
    smem_end: *mut c_char,
}

/// The version of `struct rsim_module` this library reads (`RSIM_ABI_VERSION`).
const ABI_VERSION: u32 = 1;

/// A kernel ready to launch.
#[derive(Clone, Debug)]
pub(crate) struct Kernel {
    /// The device (mangled) name.
    pub(crate) name: Arc<str>,
    pub(crate) trampoline: Trampoline,
    /// The `__shared__` bytes of the kernel's object.
    pub(crate) smem: Range<usize>,
    /// The base address of the object the kernel is in (0: unknown).
    pub(crate) object: usize,
}

#[derive(Debug)]
struct Module {
    object: usize,
    kernels: HashMap<String, Trampoline>,
    vars: HashMap<String, (usize, u64)>,
    smem: Range<usize>,
}

#[derive(Default)]
struct Registry {
    /// Stub address → (device name, object).
    stubs: HashMap<usize, (Arc<str>, usize)>,
    /// Host shadow address → (device name, object).
    shadows: HashMap<usize, (String, usize)>,
    modules: Vec<Module>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn with_registry<R>(body: impl FnOnce(&mut Registry) -> R) -> R {
    let mut registry = REGISTRY.lock().unwrap_or_else(|poison| poison.into_inner());
    body(registry.get_or_insert_with(Registry::default))
}

/// The base address of the loaded object `addr` is in, or 0 if the loader knows none.
pub(crate) fn object_of(addr: *const c_void) -> usize {
    // SAFETY: dladdr only reads the loader's tables; `info` is written by it.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: as above; a null or unknown address gives 0.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 {
        return 0;
    }
    info.dli_fbase as usize
}

/// A C string of the program as an owned string; `None` for null.
fn text(name: *const c_char) -> Option<String> {
    (!name.is_null()).then(|| {
        // SAFETY: the compiler passes NUL-terminated names of the program's read-only data.
        unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned()
    })
}

impl Registry {
    /// The module of `object` that has `pick`, or the only module that has it when objects
    /// are unknown.
    fn module(&self, object: usize, has: impl Fn(&Module) -> bool) -> Option<&Module> {
        let same_object = self.modules.iter().find(|m| m.object == object && has(m));
        same_object.or_else(|| {
            let mut named = self.modules.iter().filter(|m| has(m));
            let only = named.next()?;
            (object == 0 || only.object == 0)
                .then_some(only)
                .filter(|_| named.next().is_none())
        })
    }
}

/// The kernel whose host stub is `stub`, if both passes registered it.
pub(crate) fn kernel(stub: *const c_void) -> Option<Kernel> {
    with_registry(|registry| {
        let (name, object) = registry.stubs.get(&(stub as usize))?;
        let module = registry.module(*object, |m| m.kernels.contains_key(&**name))?;
        Some(Kernel {
            name: Arc::clone(name),
            trampoline: module.kernels[&**name],
            smem: module.smem.clone(),
            object: module.object,
        })
    })
}

/// The device variable whose host shadow is `shadow`: its address and size.
pub(crate) fn variable(shadow: *const c_void) -> Option<(usize, u64)> {
    with_registry(|registry| {
        let (name, object) = registry.shadows.get(&(shadow as usize))?;
        let module = registry.module(*object, |m| m.vars.contains_key(name))?;
        Some(module.vars[name])
    })
}

/// `__cudaRegisterFatBinary`: the handle later registrations pass back. Nothing is read from
/// the "fat binary" (rshmem-nvcc's host pass embeds none that matters).
#[unsafe(no_mangle)]
pub extern "C" fn __rsim___cudaRegisterFatBinary(fatbin: *mut c_void) -> *mut *mut c_void {
    fatbin.cast()
}

/// `__cudaRegisterFatBinaryEnd`: nothing to do.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim___cudaRegisterFatBinaryEnd(_handle: *mut *mut c_void) {}

/// `__cudaUnregisterFatBinary`, at exit: registrations live until the process ends.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim___cudaUnregisterFatBinary(_handle: *mut *mut c_void) {}

/// `__cudaRegisterFunction`: the stub `stub` launches the kernel named `device_name`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)] // The signature is the CUDA runtime's.
pub extern "C" fn __rsim___cudaRegisterFunction(
    _handle: *mut *mut c_void,
    stub: *const c_void,
    _device_fun: *mut c_char,
    device_name: *const c_char,
    _thread_limit: c_int,
    _tid: *mut c_void,
    _bid: *mut c_void,
    _block_dim: *mut c_void,
    _grid_dim: *mut c_void,
    _warp_size: *mut c_int,
) {
    guard("__cudaRegisterFunction", || {
        let Some(name) = text(device_name) else {
            return;
        };
        let object = object_of(stub);
        with_registry(|r| r.stubs.insert(stub as usize, (name.into(), object)));
    });
}

/// `__cudaRegisterVar`: the host shadow `host_var` stands for the device variable
/// `device_name`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)] // The signature is the CUDA runtime's.
pub extern "C" fn __rsim___cudaRegisterVar(
    _handle: *mut *mut c_void,
    host_var: *mut c_char,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: c_int,
    _size: usize,
    _constant: c_int,
    _global: c_int,
) {
    guard("__cudaRegisterVar", || {
        let Some(name) = text(device_name) else {
            return;
        };
        let object = object_of(host_var.cast());
        with_registry(|r| r.shadows.insert(host_var as usize, (name, object)));
    });
}

/// `__rsim_register_module`: the device pass's table of one object file.
///
/// # Safety
/// `module` points at a `struct rsim_module` whose tables hold `n_kernels` and `n_vars`
/// entries of NUL-terminated names, all living as long as the program.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __rsim_register_module(module: *const RsimModule) {
    guard("__rsim_register_module", || {
        // SAFETY: the caller's contract; null is refused.
        let Some(module) = (unsafe { module.as_ref() }) else {
            return;
        };
        if module.abi_version != ABI_VERSION {
            crate::cuda_sim::fiber::fail(
                "__rsim_register_module",
                &format!(
                    "the program was built for version {} of the emulation ABI and this \
                     libshmem reads version {ABI_VERSION}; rebuild it with this rshmem's \
                     rshmem-nvcc",
                    module.abi_version
                ),
            );
        }
        // SAFETY: the caller's contract: `n_kernels` entries at `kernels`.
        let kernels = unsafe { table(module.kernels, module.n_kernels) };
        // SAFETY: as above, for the variables.
        let vars = unsafe { table(module.vars, module.n_vars) };
        let registered = Module {
            object: object_of(std::ptr::from_ref(module).cast()),
            kernels: kernels
                .iter()
                .filter_map(|k| Some((text(k.name)?, k.trampoline?)))
                .collect(),
            vars: vars
                .iter()
                .filter_map(|v| Some((text(v.name)?, (v.addr as usize, v.size))))
                .collect(),
            smem: (module.smem_start as usize)
                ..(module.smem_end as usize).max(module.smem_start as usize),
        };
        with_registry(|r| r.modules.push(registered));
    });
}

/// The `len` entries at `first` (none when null).
///
/// # Safety
/// `first` points at `len` initialised entries that outlive the program.
unsafe fn table<T>(first: *const T, len: u64) -> &'static [T] {
    if first.is_null() || len == 0 {
        return &[];
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(first, len as usize) }
}
