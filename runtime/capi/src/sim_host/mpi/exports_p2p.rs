//! The point-to-point calls the simulator serves (`exports.rs` says how they are exported).

// Why: MPI's signatures, and its contract (`exports.rs`) for every function.
#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_int, c_void};

use super::exports::{bytes_at, put};
use super::handles::{self, Handle};
use super::p2p::{Received, Status};
use super::{MpiError, SUCCESS, UNDEFINED, WORLD, World, count_bytes, now_ns, serve, wait_for};

/// Sends `count` of `datatype` at `buf` to `dest` of `comm` with `tag`, for `call`.
///
/// # Safety
/// MPI's contract for a send buffer.
unsafe fn send(
    call: &str,
    buf: *const c_void,
    count: c_int,
    datatype: *const c_void,
    dest: c_int,
    tag: c_int,
    comm: *const c_void,
) {
    let now = now_ns();
    serve(call, |world, pe| {
        let comm = world.comm(pe, comm)?;
        let len = count_bytes(count, handles::datatype(datatype)?)?;
        // SAFETY: the caller's contract.
        let bytes = unsafe { bytes_at(buf, len) };
        world.send(pe, comm, dest, tag, bytes, now)
    });
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Send(
    buf: *const c_void,
    count: c_int,
    datatype: *const c_void,
    dest: c_int,
    tag: c_int,
    comm: *const c_void,
) -> c_int {
    // SAFETY: MPI's contract.
    unsafe { send("MPI_Send", buf, count, datatype, dest, tag, comm) };
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Isend(
    buf: *const c_void,
    count: c_int,
    datatype: *const c_void,
    dest: c_int,
    tag: c_int,
    comm: *const c_void,
    request: *mut *mut c_void,
) -> c_int {
    // SAFETY: MPI's contract.
    unsafe { send("MPI_Isend", buf, count, datatype, dest, tag, comm) };
    let made = WORLD.with_borrow_mut(World::sent_request);
    // SAFETY: MPI's contract.
    unsafe { put(request, made) };
    SUCCESS
}

/// Posts a receive for `call`; returns its request.
///
/// # Safety
/// MPI's contract for a receive buffer.
unsafe fn post(
    call: &str,
    buf: *mut c_void,
    count: c_int,
    datatype: *const c_void,
    source: c_int,
    tag: c_int,
    comm: *const c_void,
) -> *mut c_void {
    serve(call, |world, pe| {
        let comm = world.comm(pe, comm)?;
        let capacity = count_bytes(count, handles::datatype(datatype)?)?;
        world.post_receive(pe, comm, source, tag, buf, capacity)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Irecv(
    buf: *mut c_void,
    count: c_int,
    datatype: *const c_void,
    source: c_int,
    tag: c_int,
    comm: *const c_void,
    request: *mut *mut c_void,
) -> c_int {
    // SAFETY: MPI's contract.
    let made = unsafe { post("MPI_Irecv", buf, count, datatype, source, tag, comm) };
    // SAFETY: MPI's contract.
    unsafe { put(request, made) };
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Recv(
    buf: *mut c_void,
    count: c_int,
    datatype: *const c_void,
    source: c_int,
    tag: c_int,
    comm: *const c_void,
    status: *mut Status,
) -> c_int {
    // SAFETY: MPI's contract.
    let mut request = unsafe { post("MPI_Recv", buf, count, datatype, source, tag, comm) };
    // SAFETY: `request` is a local handle; MPI's contract for `status`.
    unsafe { wait("MPI_Recv", &raw mut request, status) };
    SUCCESS
}

/// The request at `request`: `None` for `MPI_REQUEST_NULL`.
///
/// # Safety
/// `request` points to a request handle.
pub(super) unsafe fn request_id(call: &str, request: *mut *mut c_void) -> Option<u64> {
    // SAFETY: the caller's contract.
    let handle = unsafe { request.read() };
    serve(call, |world, pe| {
        world.live(pe)?;
        match handles::read(handle, "request")? {
            Handle::Request(id) => Ok(Some(id)),
            Handle::Predefined(name) if name == "ompi_request_null" => Ok(None),
            other => Err(MpiError::Handle(format!(
                "the request argument names {other:?}, not a request"
            ))),
        }
    })
}

/// Sets the completed request at `request` to `MPI_REQUEST_NULL`.
///
/// # Safety
/// `request` points to a writable request handle.
pub(super) unsafe fn set_null(call: &str, request: *mut *mut c_void) {
    let null = serve(call, |world, pe| Ok(world.pe(pe).request_null));
    // SAFETY: the caller's contract.
    unsafe { request.write(null as *mut c_void) };
}

/// Waits for the request at `request` and sets it to `MPI_REQUEST_NULL`, for `call`.
///
/// # Safety
/// `request` points to a request handle; `status` is null or writable.
unsafe fn wait(call: &str, request: *mut *mut c_void, status: *mut Status) {
    // SAFETY: the caller's contract.
    let received = match unsafe { request_id(call, request) } {
        None => Received::EMPTY,
        Some(id) => {
            let wanted = WORLD.with_borrow(|world| world.describe(id));
            let what = || wanted.clone();
            let received = wait_for(call, what, |world, _| world.complete(id));
            // SAFETY: the caller's contract.
            unsafe { set_null(call, request) };
            received
        }
    };
    // SAFETY: the caller's contract.
    unsafe { Status::write(status, received) };
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Wait(
    request: *mut *mut c_void,
    status: *mut Status,
) -> c_int {
    // SAFETY: MPI's contract.
    unsafe { wait("MPI_Wait", request, status) };
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Waitall(
    count: c_int,
    requests: *mut *mut c_void,
    statuses: *mut Status,
) -> c_int {
    for i in 0..usize::try_from(count).unwrap_or(0) {
        let status = if statuses.is_null() {
            statuses
        } else {
            // SAFETY: MPI's contract: a status per request, or MPI_STATUSES_IGNORE.
            unsafe { statuses.add(i) }
        };
        // SAFETY: MPI's contract: `count` requests.
        unsafe { wait("MPI_Waitall", requests.add(i), status) };
    }
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Get_count(
    status: *const Status,
    datatype: *const c_void,
    count: *mut c_int,
) -> c_int {
    let datatype = serve("MPI_Get_count", |_, _| handles::datatype(datatype));
    // SAFETY: MPI's contract: a status a receive filled.
    let bytes = unsafe { (*status).ucount };
    let size = datatype.size_bytes();
    let elements = if bytes % size == 0 {
        (bytes / size) as c_int
    } else {
        UNDEFINED
    };
    // SAFETY: MPI's contract.
    unsafe { put(count, elements) };
    SUCCESS
}
