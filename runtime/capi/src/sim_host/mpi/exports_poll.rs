//! The calls that look without waiting, `MPI_Test`, `MPI_Testall` and `MPI_Iprobe`, and the
//! probe that waits, `MPI_Probe` (`exports.rs` says how they are exported).
//!
//! A look that finds nothing sleeps the PE a pause first, so that a program's polling loop
//! lets the other PEs run in simulated time; the pause doubles with each look in a row that
//! finds nothing, and a loop that finds nothing for the wait limit ends the run naming what it
//! looked for, as a wait does.

// Why: MPI's signatures, and its contract (`exports.rs`) for every function.
#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_int, c_void};

use super::exports::put;
use super::exports_p2p::{request_id, set_null};
use super::p2p::{Received, Status};
use super::{
    FIRST_PAUSE_NS, LAST_PAUSE_NS, MpiError, SUCCESS, WAIT_LIMIT_NS, WORLD, now_ns, refuse,
    running_pe, serve, sleep_until, wait_for,
};

/// A look that found what it looked for: the next pause starts short.
fn found(call: &str) {
    serve(call, |world, pe| {
        world.pe(pe).polling = None;
        Ok(())
    });
}

/// A look that found nothing: sleeps the running PE its pause, or ends the run when the
/// looks found nothing for the wait limit (naming `what`).
fn nothing(call: &str, what: &dyn Fn() -> String) {
    let pe = running_pe(call);
    let now = now_ns();
    let (since, looks) = WORLD.with_borrow_mut(|world| {
        let polling = world.pe(pe).polling.get_or_insert((now, 0));
        polling.1 = polling.1.saturating_add(1);
        *polling
    });
    if now - since >= WAIT_LIMIT_NS {
        refuse(call, pe, &MpiError::Stuck { what: what() });
    }
    let pause = FIRST_PAUSE_NS
        .saturating_mul(1 << looks.min(20))
        .min(LAST_PAUSE_NS);
    sleep_until(call, pe, now + pause, what);
}

/// Completes the request at `request` if it is ready: writes its status, sets it to
/// `MPI_REQUEST_NULL`, and returns `true`. `MPI_REQUEST_NULL` is ready, with an empty
/// status.
///
/// # Safety
/// `request` points to a writable request handle; `status` is null or writable.
unsafe fn complete_if_ready(call: &str, request: *mut *mut c_void, status: *mut Status) -> bool {
    // SAFETY: the caller's contract.
    let Some(id) = (unsafe { request_id(call, request) }) else {
        // SAFETY: the caller's contract.
        unsafe { Status::write(status, Received::EMPTY) };
        return true;
    };
    let now = now_ns();
    let ready = serve(call, |world, _| world.ready_ns(id));
    if ready.is_none_or(|at| at > now) {
        return false;
    }
    let done = serve(call, |world, _| world.complete(id));
    let (received, _) = done.expect("a ready request completes");
    // SAFETY: the caller's contract.
    unsafe {
        set_null(call, request);
        Status::write(status, received);
    }
    true
}

/// What the request at `request` waits for, for a report.
///
/// # Safety
/// `request` points to a request handle.
unsafe fn describe(call: &str, request: *mut *mut c_void) -> String {
    // SAFETY: the caller's contract.
    match unsafe { request_id(call, request) } {
        Some(id) => WORLD.with_borrow(|world| world.describe(id)),
        None => "MPI_REQUEST_NULL".to_owned(),
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Test(
    request: *mut *mut c_void,
    flag: *mut c_int,
    status: *mut Status,
) -> c_int {
    const CALL: &str = "MPI_Test";
    // SAFETY: MPI's contract.
    let done = unsafe { complete_if_ready(CALL, request, status) };
    if done {
        found(CALL);
    } else {
        // SAFETY: MPI's contract.
        let wanted = unsafe { describe(CALL, request) };
        nothing(CALL, &|| wanted.clone());
    }
    // SAFETY: MPI's contract.
    unsafe { put(flag, c_int::from(done)) };
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Testall(
    count: c_int,
    requests: *mut *mut c_void,
    flag: *mut c_int,
    statuses: *mut Status,
) -> c_int {
    const CALL: &str = "MPI_Testall";
    let count = serve(CALL, |_, _| {
        usize::try_from(count).map_err(|_| MpiError::Negative(count))
    });
    let now = now_ns();
    // MPI completes none of them unless it completes all.
    let pending: Vec<usize> = (0..count)
        .filter(|&i| {
            // SAFETY: MPI's contract: `count` requests.
            let id = unsafe { request_id(CALL, requests.add(i)) };
            id.is_some_and(|id| {
                let ready = serve(CALL, |world, _| world.ready_ns(id));
                ready.is_none_or(|at| at > now)
            })
        })
        .collect();
    let done = pending.is_empty();
    if done {
        for i in 0..count {
            let status = if statuses.is_null() {
                statuses
            } else {
                // SAFETY: MPI's contract: a status per request, or MPI_STATUSES_IGNORE.
                unsafe { statuses.add(i) }
            };
            // SAFETY: MPI's contract: `count` requests.
            let completed = unsafe { complete_if_ready(CALL, requests.add(i), status) };
            debug_assert!(completed, "every request was ready");
        }
        found(CALL);
    } else {
        // SAFETY: MPI's contract: `count` requests.
        let wanted: Vec<String> = pending
            .iter()
            .map(|&i| unsafe { describe(CALL, requests.add(i)) })
            .collect();
        nothing(CALL, &|| wanted.join("; "));
    }
    // SAFETY: MPI's contract.
    unsafe { put(flag, c_int::from(done)) };
    SUCCESS
}

/// What a probe from `source` with `tag` waits for, for a report.
fn probe_wanted(source: c_int, tag: c_int) -> String {
    format!("a message from rank {source} with tag {tag} (-1: any) to probe")
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Iprobe(
    source: c_int,
    tag: c_int,
    comm: *const c_void,
    flag: *mut c_int,
    status: *mut Status,
) -> c_int {
    const CALL: &str = "MPI_Iprobe";
    let now = now_ns();
    let seen = serve(CALL, |world, pe| {
        let comm = world.comm(pe, comm)?;
        world.probe(pe, comm, source, tag)
    });
    let arrived = seen.filter(|&(_, at)| at <= now);
    match arrived {
        Some((received, _)) => {
            found(CALL);
            // SAFETY: MPI's contract.
            unsafe { Status::write(status, received) };
        }
        None => nothing(CALL, &|| probe_wanted(source, tag)),
    }
    // SAFETY: MPI's contract.
    unsafe { put(flag, c_int::from(arrived.is_some())) };
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Probe(
    source: c_int,
    tag: c_int,
    comm: *const c_void,
    status: *mut Status,
) -> c_int {
    const CALL: &str = "MPI_Probe";
    let received = wait_for(
        CALL,
        || probe_wanted(source, tag),
        |world, pe| {
            let comm = world.comm(pe, comm)?;
            world.probe(pe, comm, source, tag)
        },
    );
    // SAFETY: MPI's contract.
    unsafe { Status::write(status, received) };
    SUCCESS
}
