//! Open MPI's handles as the simulator knows them: by their contents.
//!
//! A predefined handle is the address of an object of the shim (`&ompi_mpi_comm_world`), or
//! of a PE's copy of it that a copy relocation made; either holds [`TAG`] and the object's
//! name. The handles this module makes (communicators from a split, requests) hold [`TAG`], a
//! name that starts with `#`, and a number.

use std::ffi::{CStr, c_char, c_void};

use super::MpiError;
use super::types::{Datatype, Op};

/// The first 8 bytes of every handle object (`build_mpi_shim.rs` defines it).
const TAG: u64 = match u64::from_str_radix(env!("RSHMEM_MPI_HANDLE_TAG"), 10) {
    Ok(tag) => tag,
    Err(_) => panic!("RSHMEM_MPI_HANDLE_TAG is a number"),
};

/// The name of the communicators this module makes.
const MADE_COMM: &[u8; 8] = b"#comm\0\0\0";
/// The name of the requests this module makes.
const MADE_REQUEST: &[u8; 8] = b"#req\0\0\0\0";

/// A handle object this module makes.
#[repr(C)]
struct Made {
    tag: u64,
    name: [u8; 8],
    id: u64,
}

/// What a handle names.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Handle {
    /// A predefined object, by its name (`ompi_mpi_int`).
    Predefined(String),
    /// A communicator this module made.
    Comm(u64),
    /// A request this module made.
    Request(u64),
}

/// What `handle` names, or why it names nothing this run made; `what` says what the argument
/// should be, for the message.
pub(super) fn read(handle: *const c_void, what: &str) -> Result<Handle, MpiError> {
    let unknown = || {
        MpiError::Handle(format!(
            "the {what} argument ({handle:p}) is not an MPI handle of this run; pass a \
             predefined one (from mpi.h) or one an MPI call returned"
        ))
    };
    if handle.is_null() || (handle as usize) < 4096 {
        return Err(unknown());
    }
    // SAFETY: a non-null handle points to an object of at least 16 bytes: the shim's objects
    // are Open MPI's sizes (256 bytes or more), this module's are `Made`.
    let tag = unsafe { handle.cast::<u64>().read_unaligned() };
    if tag != TAG {
        return Err(unknown());
    }
    // SAFETY: as above; a tagged object's name is NUL-terminated within it.
    let name = unsafe { CStr::from_ptr(handle.cast::<c_char>().add(8)) };
    let made = || {
        // SAFETY: a name that starts with '#' is a `Made`.
        unsafe { (*handle.cast::<Made>()).id }
    };
    Ok(match name.to_bytes() {
        b"#comm" => Handle::Comm(made()),
        b"#req" => Handle::Request(made()),
        other => Handle::Predefined(String::from_utf8_lossy(other).into_owned()),
    })
}

/// A new communicator handle for communicator `id`.
pub(super) fn make_comm(id: u64) -> *mut c_void {
    make(MADE_COMM, id)
}

/// A new request handle for request `id`.
pub(super) fn make_request(id: u64) -> *mut c_void {
    make(MADE_REQUEST, id)
}

fn make(name: &[u8; 8], id: u64) -> *mut c_void {
    // Why leaked: a handle may be copied and compared by the program after it was freed (as
    // Open MPI's may), and a run makes few.
    Box::into_raw(Box::new(Made {
        tag: TAG,
        name: *name,
        id,
    }))
    .cast()
}

/// The datatype `handle` names.
pub(super) fn datatype(handle: *const c_void) -> Result<Datatype, MpiError> {
    match read(handle, "datatype")? {
        Handle::Predefined(name) => Datatype::of_object(&name).ok_or_else(|| {
            MpiError::Handle(format!(
                "the datatype {name} is not served on the simulator; it serves the predefined \
                 integer, floating-point, byte and char types"
            ))
        }),
        other => Err(MpiError::Handle(format!(
            "the datatype argument is a {other:?}, not a datatype"
        ))),
    }
}

/// The operation `handle` names.
pub(super) fn op(handle: *const c_void) -> Result<Op, MpiError> {
    match read(handle, "operation")? {
        Handle::Predefined(name) => Op::of_object(&name).ok_or_else(|| {
            MpiError::Handle(format!(
                "the operation {name} is not served on the simulator; it serves MPI_SUM, \
                 MPI_PROD, MPI_MAX, MPI_MIN and the logical and bitwise ones"
            ))
        }),
        other => Err(MpiError::Handle(format!(
            "the operation argument is a {other:?}, not an operation"
        ))),
    }
}

/// A predefined object of this module's own, for calls that name one themselves.
#[repr(C)]
struct Named {
    tag: u64,
    name: [u8; 24],
}

/// `MPI_COMM_WORLD`'s contents, for `MPI_Finalize`'s barrier.
static WORLD_COMM: Named = Named {
    tag: TAG,
    name: *b"ompi_mpi_comm_world\0\0\0\0\0",
};

/// A handle of `MPI_COMM_WORLD`.
pub(super) fn world_handle() -> *const c_void {
    std::ptr::from_ref(&WORLD_COMM).cast()
}
