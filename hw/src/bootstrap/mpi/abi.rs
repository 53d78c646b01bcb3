//! The MPI functions the bootstrap calls, found at run time in the program's own MPI library
//! (`dlsym(RTLD_DEFAULT, ...)`: no link-time MPI, so the workspace builds and runs where MPI
//! is absent), and the two ABIs of MPI libraries that tell them apart: Open MPI's, whose
//! handles are pointers to the library's objects (`MPI_COMM_WORLD` is `&ompi_mpi_comm_world`),
//! and MPICH's (MPICH, Intel MPI, MVAPICH, Cray MPICH), whose handles are `int`s with fixed
//! values.

use std::ffi::{CStr, c_char, c_int, c_void};

use super::super::BootstrapError;

/// A handle (`MPI_Comm`, `MPI_Datatype`) held as a word: a pointer in Open MPI's ABI, an
/// `int` in MPICH's. Passing the word where the C function takes an `int` hands it the low
/// half in its register, which is the `int`, on the 64-bit targets rshmem runs on.
pub(super) type Handle = usize;

/// MPICH's `MPI_COMM_WORLD` and `MPI_BYTE` (`mpi.h`; MPICH 4.0.2's, with which
/// `tools/tests/mpich.rs` runs).
const MPICH_COMM_WORLD: Handle = 0x4400_0000;
const MPICH_BYTE: Handle = 0x4c00_010d;
/// Room for `MPI_Error_string`: more than either ABI's `MPI_MAX_ERROR_STRING` (MPICH 4.0's is
/// 512, Open MPI 4.1's 256).
const ERROR_STRING_BYTES: usize = 1024;

/// Which ABI the program's MPI library has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Flavour {
    /// Open MPI: handles are pointers.
    OpenMpi,
    /// MPICH and its derivatives: handles are `int`s.
    Mpich,
}

type IntOutFn = unsafe extern "C" fn(*mut c_int) -> c_int;
type CommIntFn = unsafe extern "C" fn(Handle, *mut c_int) -> c_int;
type CommDupFn = unsafe extern "C" fn(Handle, *mut Handle) -> c_int;
type CommFreeFn = unsafe extern "C" fn(*mut Handle) -> c_int;
type AllgatherFn =
    unsafe extern "C" fn(*const c_void, c_int, Handle, *mut c_void, c_int, Handle, Handle) -> c_int;
type AllgathervFn = unsafe extern "C" fn(
    *const c_void,
    c_int,
    Handle,
    *mut c_void,
    *const c_int,
    *const c_int,
    Handle,
    Handle,
) -> c_int;
type CommFn = unsafe extern "C" fn(Handle) -> c_int;
type AbortFn = unsafe extern "C" fn(Handle, c_int) -> c_int;
type ErrorStringFn = unsafe extern "C" fn(c_int, *mut c_char, *mut c_int) -> c_int;

/// The program's MPI library, as the bootstrap calls it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Api {
    pub(super) flavour: Flavour,
    pub(super) world: Handle,
    pub(super) byte: Handle,
    pub(super) initialized: IntOutFn,
    pub(super) finalized: IntOutFn,
    pub(super) comm_rank: CommIntFn,
    pub(super) comm_size: CommIntFn,
    pub(super) comm_dup: CommDupFn,
    pub(super) comm_free: CommFreeFn,
    pub(super) allgather: AllgatherFn,
    pub(super) allgatherv: AllgathervFn,
    pub(super) barrier: CommFn,
    pub(super) abort: AbortFn,
    error_string: ErrorStringFn,
}

/// The address of `name` in the process's global scope, if any.
fn symbol(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: dlsym with RTLD_DEFAULT only looks the name up.
    let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    (!found.is_null()).then_some(found)
}

impl Api {
    /// Finds the program's MPI library and checks that MPI is initialised and not finalised.
    ///
    /// # Errors
    /// [`BootstrapError::Launcher`] when no MPI library is in the process, a function is
    /// missing, or MPI is not initialised (or already finalised), each with the fix.
    pub(super) fn find() -> Result<Api, BootstrapError> {
        let failed = |what: String| BootstrapError::Launcher {
            bootstrap: "mpi",
            what,
        };
        if symbol(c"MPI_Allgatherv").is_none() {
            return Err(failed(
                "no MPI library is loaded in this process: build the program with MPI \
                 (`mpicc`, or link -lmpi) and call MPI_Init before nvshmemx_init_attr or \
                 shmem_init, or choose another bootstrap (RSHMEM_BOOTSTRAP=auto under mpirun)"
                    .to_string(),
            ));
        }
        let (flavour, world, byte) =
            match (symbol(c"ompi_mpi_comm_world"), symbol(c"ompi_mpi_byte")) {
                (Some(world), Some(byte)) => (Flavour::OpenMpi, world as Handle, byte as Handle),
                _ => (Flavour::Mpich, MPICH_COMM_WORLD, MPICH_BYTE),
            };
        macro_rules! function {
            ($name:literal, $type:ty) => {{
                let found = symbol(
                    CStr::from_bytes_with_nul(concat!($name, "\0").as_bytes()).unwrap_or_default(),
                )
                .ok_or_else(|| {
                    failed(format!(
                        "the MPI library lacks {}; rshmem needs an MPI-3 library",
                        $name
                    ))
                })?;
                // SAFETY: the type is the one `mpi.h` declares for this name, with handles as
                // words (see `Handle`).
                unsafe { std::mem::transmute::<*mut c_void, $type>(found) }
            }};
        }
        let api = Api {
            flavour,
            world,
            byte,
            initialized: function!("MPI_Initialized", IntOutFn),
            finalized: function!("MPI_Finalized", IntOutFn),
            comm_rank: function!("MPI_Comm_rank", CommIntFn),
            comm_size: function!("MPI_Comm_size", CommIntFn),
            comm_dup: function!("MPI_Comm_dup", CommDupFn),
            comm_free: function!("MPI_Comm_free", CommFreeFn),
            allgather: function!("MPI_Allgather", AllgatherFn),
            allgatherv: function!("MPI_Allgatherv", AllgathervFn),
            barrier: function!("MPI_Barrier", CommFn),
            abort: function!("MPI_Abort", AbortFn),
            error_string: function!("MPI_Error_string", ErrorStringFn),
        };
        let (mut initialized, mut finalized) = (0, 0);
        // SAFETY: both may be called at any time and write one int.
        unsafe {
            (api.initialized)(&mut initialized);
            (api.finalized)(&mut finalized);
        }
        if initialized == 0 || finalized != 0 {
            return Err(failed(format!(
                "MPI is {}: call MPI_Init (or MPI_Init_thread) before nvshmemx_init_attr or \
                 shmem_init, and MPI_Finalize after shmem_finalize, or choose another bootstrap \
                 (RSHMEM_BOOTSTRAP=auto under mpirun)",
                if finalized != 0 {
                    "already finalised"
                } else {
                    "not initialised"
                }
            )));
        }
        tracing::debug!(?flavour, "MPI bootstrap: found the program's MPI library");
        Ok(api)
    }

    /// The communicator the program's variable at `comm` holds (an `MPI_Comm *`, as NVSHMEM's
    /// `attr.mpi_comm`).
    ///
    /// # Safety
    /// `comm` points to a live `MPI_Comm` of this library.
    pub(super) unsafe fn read_comm(&self, comm: *const c_void) -> Handle {
        match self.flavour {
            // SAFETY: the caller's promise; an Open MPI MPI_Comm is a pointer.
            Flavour::OpenMpi => unsafe { comm.cast::<Handle>().read_unaligned() },
            // SAFETY: the caller's promise; an MPICH MPI_Comm is an int.
            Flavour::Mpich => (unsafe { comm.cast::<u32>().read_unaligned() }) as Handle,
        }
    }

    /// Fails with MPI's words for `status` unless it is `MPI_SUCCESS`.
    pub(super) fn check(&self, call: &str, status: c_int) -> Result<(), BootstrapError> {
        if status == 0 {
            return Ok(());
        }
        let mut text = [0 as c_char; ERROR_STRING_BYTES];
        let mut len: c_int = 0;
        // SAFETY: the buffer holds MPI_MAX_ERROR_STRING characters in either ABI.
        unsafe { (self.error_string)(status, text.as_mut_ptr(), &mut len) };
        let len = usize::try_from(len).unwrap_or(0).min(ERROR_STRING_BYTES);
        let bytes: Vec<u8> = text[..len].iter().map(|&c| c as u8).collect();
        Err(BootstrapError::Launcher {
            bootstrap: "mpi",
            what: format!(
                "{call} failed: {} ({status}); check that every rank of the communicator \
                 initialises rshmem together",
                String::from_utf8_lossy(&bytes)
            ),
        })
    }
}
