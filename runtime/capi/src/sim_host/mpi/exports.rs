//! The MPI functions the simulator serves, each `rshmem_sim_` and its MPI name: setup,
//! communicators and queries here, the collectives in `exports_collectives.rs`, point-to-point
//! in `exports_p2p.rs`. The shim's `MPI_X` and `PMPI_X` jump to them (`build_mpi_shim.rs`
//! finds the names in this folder's files). Every
//! one returns `MPI_SUCCESS`; what cannot be served ends the run naming the call and why, as
//! Open MPI's default error handler (`MPI_ERRORS_ARE_FATAL`) would end the job.
//!
//! # Safety
//! The functions are MPI's, with its C contract: pointers to as many readable or writable
//! elements as the counts and datatypes say, handles MPI gave out.

// Why: MPI's signatures, and its contract (above) for every function.
#![allow(clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{CStr, c_char, c_double, c_int, c_void};

use super::collectives::{Kind, Part};
use super::exports_collectives::barrier;
use super::handles::{self, Handle};
use super::{Comm, MpiError, SUCCESS, UNDEFINED, WORLD, World, now_ns, serve, wait_for};
use crate::state::thread_level;

/// `MPI_IN_PLACE`.
pub(super) const IN_PLACE: *const c_void = std::ptr::without_provenance(1);
/// `MPI_COMM_TYPE_SHARED`.
const COMM_TYPE_SHARED: c_int = 0;
/// `MPI_MAX_PROCESSOR_NAME`.
const MAX_PROCESSOR_NAME: usize = 256;

/// `len` bytes at `at`.
///
/// # Safety
/// `at` points to `len` readable bytes, or `len` is 0.
pub(super) unsafe fn bytes_at(at: *const c_void, len: usize) -> Vec<u8> {
    if len == 0 {
        return Vec::new();
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(at.cast::<u8>(), len) }.to_vec()
}

/// Copies `bytes` to `at`.
///
/// # Safety
/// `at` points to `bytes.len()` writable bytes, or `bytes` is empty.
pub(super) unsafe fn put_bytes(at: *mut c_void, bytes: &[u8]) {
    if !bytes.is_empty() {
        // SAFETY: the caller's contract.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), at.cast::<u8>(), bytes.len()) };
    }
}

/// Writes `value` to `at`, unless it is null.
///
/// # Safety
/// `at` is null or writable.
pub(super) unsafe fn put<T>(at: *mut T, value: T) {
    if !at.is_null() {
        // SAFETY: the caller's contract.
        unsafe { at.write(value) };
    }
}

/// Runs the collective `call` on the communicator `comm` with the running rank's part,
/// which `part` makes; returns the communicator and the rank's result.
pub(super) fn collective(
    call: &'static str,
    comm: *const c_void,
    part: impl FnOnce(&mut World, Comm) -> Result<Part, MpiError>,
) -> (Comm, Option<Vec<u8>>) {
    let now = now_ns();
    let (comm, key) = serve(call, |world, pe| {
        let comm = world.comm(pe, comm)?;
        let part = part(world, comm)?;
        Ok((comm, world.arrive(pe, comm, part, now)?))
    });
    let what = || {
        WORLD.with_borrow(|world| world.missing(key)).map_or_else(
            || "the collective's results".to_owned(),
            |ranks| format!("ranks {ranks:?} of the communicator to reach {call}"),
        )
    };
    let result = wait_for(call, what, |world, _| Ok(world.take_result(key, comm.rank)));
    (comm, result)
}

/// A communicator `id` from a collective's result, or `MPI_COMM_NULL`, for PE `pe`.
pub(super) fn comm_handle(result: Option<Vec<u8>>, pe: u32) -> *mut c_void {
    match result.and_then(|bytes| bytes.try_into().ok()) {
        Some(id) => handles::make_comm(u64::from_le_bytes(id)),
        None => WORLD.with_borrow(|world| world.pes[pe as usize].comm_null) as *mut c_void,
    }
}

fn init(call: &str, level: c_int) -> c_int {
    serve(call, |world, pe| {
        let state = world.pe(pe);
        if state.initialized {
            return Err(MpiError::InitTwice);
        }
        state.initialized = true;
        state.thread_level = level.clamp(thread_level::SINGLE, thread_level::MULTIPLE);
        Ok(state.thread_level)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Init(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
) -> c_int {
    let _ = (argc, argv);
    init("MPI_Init", thread_level::SINGLE);
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Init_thread(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    let _ = (argc, argv);
    let level = init("MPI_Init_thread", required);
    // SAFETY: MPI's contract.
    unsafe { put(provided, level) };
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Query_thread(provided: *mut c_int) -> c_int {
    let level = serve("MPI_Query_thread", |world, pe| {
        Ok(world.live(pe)?.thread_level)
    });
    // SAFETY: MPI's contract.
    unsafe { put(provided, level) };
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Initialized(flag: *mut c_int) -> c_int {
    // Outside a PE's program (a static constructor of a program copy as it loads, as Open
    // MPI's C++ bindings have) no PE has initialised MPI yet: the answer is "no".
    let initialized = crate::sim_host::exit::running_pe().is_some()
        && serve("MPI_Initialized", |world, pe| Ok(world.pe(pe).initialized));
    // SAFETY: MPI's contract.
    unsafe { put(flag, c_int::from(initialized)) };
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Finalized(flag: *mut c_int) -> c_int {
    // Outside a PE's program, as for MPI_Initialized: nothing was finalised.
    let finalized = crate::sim_host::exit::running_pe().is_some()
        && serve("MPI_Finalized", |world, pe| Ok(world.pe(pe).finalized));
    // SAFETY: MPI's contract.
    unsafe { put(flag, c_int::from(finalized)) };
    SUCCESS
}

#[unsafe(no_mangle)]
pub extern "C" fn rshmem_sim_MPI_Finalize() -> c_int {
    // Why a barrier: MPI_Finalize is collective over every rank, and a rank must not
    // finalise while a peer may still send to it.
    barrier("MPI_Finalize", handles::world_handle());
    serve("MPI_Finalize", |world, pe| {
        world.live(pe)?.finalized = true;
        Ok(())
    });
    SUCCESS
}

#[unsafe(no_mangle)]
pub extern "C" fn rshmem_sim_MPI_Abort(comm: *const c_void, errorcode: c_int) -> c_int {
    let pe = super::running_pe("MPI_Abort");
    let _ = comm;
    // Why ignore a failed write: the run ends either way.
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("rshmem: PE {pe}: MPI_Abort with error code {errorcode}\n").as_bytes(),
    );
    crate::sim_host::global_exit_if_simulated(errorcode);
    crate::sim_host::end_process(errorcode)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Comm_rank(comm: *const c_void, rank: *mut c_int) -> c_int {
    let comm = serve("MPI_Comm_rank", |world, pe| world.comm(pe, comm));
    // SAFETY: MPI's contract.
    unsafe { put(rank, comm.rank as c_int) };
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Comm_size(comm: *const c_void, size: *mut c_int) -> c_int {
    let comm = serve("MPI_Comm_size", |world, pe| world.comm(pe, comm));
    // SAFETY: MPI's contract.
    unsafe { put(size, comm.size as c_int) };
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Comm_dup(
    comm: *const c_void,
    newcomm: *mut *mut c_void,
) -> c_int {
    let pe = super::running_pe("MPI_Comm_dup");
    let (_, result) = collective("MPI_Comm_dup", comm, |_, _| {
        Ok(part("MPI_Comm_dup", Kind::Dup))
    });
    // SAFETY: MPI's contract.
    unsafe { put(newcomm, comm_handle(result, pe)) };
    SUCCESS
}

/// A part with no bytes and no root.
pub(super) fn part(call: &'static str, kind: Kind) -> Part {
    Part {
        call,
        kind,
        root: 0,
        bytes: Vec::new(),
        block: 0,
    }
}

/// `MPI_Comm_split` and `MPI_Comm_split_type`, once the color is known.
///
/// # Safety
/// `newcomm` is writable.
unsafe fn split(
    call: &'static str,
    comm: *const c_void,
    color: impl FnOnce(&mut World, u32) -> Result<c_int, MpiError>,
    key: c_int,
    newcomm: *mut *mut c_void,
) {
    let pe = super::running_pe(call);
    let (_, result) = collective(call, comm, |world, _| {
        let color = color(world, pe)?;
        if color < 0 && color != UNDEFINED {
            return Err(MpiError::Negative(color));
        }
        Ok(part(call, Kind::Split(color, key)))
    });
    // SAFETY: the caller's contract.
    unsafe { put(newcomm, comm_handle(result, pe)) };
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Comm_split(
    comm: *const c_void,
    color: c_int,
    key: c_int,
    newcomm: *mut *mut c_void,
) -> c_int {
    // SAFETY: MPI's contract.
    unsafe { split("MPI_Comm_split", comm, |_, _| Ok(color), key, newcomm) };
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Comm_split_type(
    comm: *const c_void,
    split_type: c_int,
    key: c_int,
    info: *const c_void,
    newcomm: *mut *mut c_void,
) -> c_int {
    let _ = info;
    let color = |world: &mut World, pe: u32| match split_type {
        COMM_TYPE_SHARED => Ok(world.pe(pe).host as c_int),
        UNDEFINED => Ok(UNDEFINED),
        other => Err(MpiError::Handle(format!(
            "split type {other} is not served on the simulator; it serves \
             MPI_COMM_TYPE_SHARED (the simulated host) and MPI_UNDEFINED"
        ))),
    };
    // SAFETY: MPI's contract.
    unsafe { split("MPI_Comm_split_type", comm, color, key, newcomm) };
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Comm_free(comm: *mut *mut c_void) -> c_int {
    let null = serve("MPI_Comm_free", |world, pe| {
        if comm.is_null() {
            return Err(MpiError::Handle(
                "a null pointer to the communicator".into(),
            ));
        }
        // SAFETY: MPI's contract: `comm` points to a communicator handle.
        let handle = unsafe { comm.read() };
        let id = match handles::read(handle, "communicator")? {
            Handle::Comm(_) => world.comm(pe, handle)?.id,
            _ => {
                return Err(MpiError::Handle(
                    "MPI_Comm_free takes a communicator from MPI_Comm_dup or MPI_Comm_split, \
                     never a predefined one"
                        .into(),
                ));
            }
        };
        world.live(pe)?.freed.push(id);
        Ok(world.pe(pe).comm_null)
    });
    // SAFETY: as above.
    unsafe { comm.write(null as *mut c_void) };
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Type_size(
    datatype: *const c_void,
    size: *mut c_int,
) -> c_int {
    let datatype = serve("MPI_Type_size", |_, _| handles::datatype(datatype));
    // SAFETY: MPI's contract.
    unsafe { put(size, datatype.size_bytes() as c_int) };
    SUCCESS
}

#[unsafe(no_mangle)]
pub extern "C" fn rshmem_sim_MPI_Wtime() -> c_double {
    now_ns() as c_double * 1e-9
}

#[unsafe(no_mangle)]
pub extern "C" fn rshmem_sim_MPI_Wtick() -> c_double {
    1e-9
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Get_processor_name(
    name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    let host = serve("MPI_Get_processor_name", |world, pe| Ok(world.pe(pe).host));
    let text = format!("rshmem-sim-host{host}");
    let len = text.len().min(MAX_PROCESSOR_NAME - 1);
    // SAFETY: MPI's contract: MPI_MAX_PROCESSOR_NAME writable bytes.
    unsafe {
        put_bytes(name.cast(), &text.as_bytes()[..len]);
        name.add(len).write(0);
        put(resultlen, len as c_int);
    }
    SUCCESS
}

/// What the shim's functions that are not served call, with their name.
///
/// # Safety
/// `name` is a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_mpi_unserved(name: *const c_char) -> c_int {
    // SAFETY: the shim passes its function's name.
    let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    super::unserved(&name)
}
