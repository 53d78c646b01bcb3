//! The collectives the simulator serves (`exports.rs` says how they are exported).

// Why: MPI's signatures, and its contract (`exports.rs`) for every function.
#![allow(clippy::missing_safety_doc, clippy::too_many_arguments)]

use std::ffi::{c_int, c_void};

use super::collectives::{Kind, Part};
use super::exports::{IN_PLACE, bytes_at, collective, part, put_bytes};
use super::types::{Datatype, Op};
use super::{Comm, MpiError, SUCCESS, count_bytes, handles};

/// A barrier on `comm`, for `call`.
pub(super) fn barrier(call: &'static str, comm: *const c_void) {
    collective(call, comm, |_, _| Ok(part(call, Kind::Barrier)));
}

#[unsafe(no_mangle)]
pub extern "C" fn rshmem_sim_MPI_Barrier(comm: *const c_void) -> c_int {
    barrier("MPI_Barrier", comm);
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Bcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: *const c_void,
    root: c_int,
    comm: *const c_void,
) -> c_int {
    let call = "MPI_Bcast";
    let (comm, result) = collective(call, comm, |_, comm| {
        let block = count_bytes(count, handles::datatype(datatype)?)?;
        let bytes = if root == comm.rank as c_int {
            // SAFETY: MPI's contract: the root's buffer holds `count` elements.
            unsafe { bytes_at(buffer, block) }
        } else {
            Vec::new()
        };
        Ok(Part {
            call,
            kind: Kind::Bcast,
            root,
            bytes,
            block,
        })
    });
    if root != comm.rank as c_int {
        // SAFETY: MPI's contract: every rank's buffer has room for `count` elements.
        unsafe { put_bytes(buffer, &result.unwrap_or_default()) };
    }
    SUCCESS
}

/// The bytes a rank sends: `count` of `datatype` at `send`, or for `MPI_IN_PLACE` `block`
/// bytes at `block_at`.
///
/// # Safety
/// MPI's contract for the send buffer, or for the receive buffer in place.
unsafe fn send_bytes(
    send: *const c_void,
    count: c_int,
    datatype: *const c_void,
    block_at: *const c_void,
    block: usize,
) -> Result<Vec<u8>, MpiError> {
    if send == IN_PLACE {
        // SAFETY: the caller's contract.
        return Ok(unsafe { bytes_at(block_at, block) });
    }
    let len = count_bytes(count, handles::datatype(datatype)?)?;
    // SAFETY: the caller's contract.
    Ok(unsafe { bytes_at(send, len) })
}

/// `MPI_Gather` (with a root) and `MPI_Allgather`.
///
/// # Safety
/// MPI's contract.
unsafe fn gather(
    call: &'static str,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: *const c_void,
    root: Option<c_int>,
    comm: *const c_void,
) {
    let receives = |comm: Comm| root.is_none_or(|root| root == comm.rank as c_int);
    let (comm, result) = collective(call, comm, |_, comm| {
        // Why only where it receives: the receive arguments mean nothing elsewhere.
        let block = if receives(comm) {
            count_bytes(recvcount, handles::datatype(recvtype)?)?
        } else {
            0
        };
        let in_place = recvbuf.wrapping_byte_add(comm.rank * block).cast_const();
        // SAFETY: the caller's contract.
        let bytes = unsafe { send_bytes(sendbuf, sendcount, sendtype, in_place, block)? };
        let kind = match root {
            Some(_) => Kind::Gather,
            None => Kind::Allgather,
        };
        Ok(Part {
            call,
            kind,
            root: root.unwrap_or(0),
            bytes,
            block,
        })
    });
    if receives(comm) {
        // SAFETY: the caller's contract: the receive buffer holds a block per rank.
        unsafe { put_bytes(recvbuf, &result.unwrap_or_default()) };
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Gather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: *const c_void,
    root: c_int,
    comm: *const c_void,
) -> c_int {
    // SAFETY: MPI's contract.
    unsafe {
        gather(
            "MPI_Gather",
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            recvcount,
            recvtype,
            Some(root),
            comm,
        )
    };
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: *const c_void,
    comm: *const c_void,
) -> c_int {
    // SAFETY: MPI's contract.
    unsafe {
        gather(
            "MPI_Allgather",
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            recvcount,
            recvtype,
            None,
            comm,
        )
    };
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Allgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: *const c_void,
    comm: *const c_void,
) -> c_int {
    let call = "MPI_Allgatherv";
    let mut layout = Vec::new();
    let (_, result) = collective(call, comm, |_, comm| {
        let datatype = handles::datatype(recvtype)?;
        for rank in 0..comm.size {
            // SAFETY: MPI's contract: an array of a count and a displacement per rank.
            let (count, displ) = unsafe { (*recvcounts.add(rank), *displs.add(rank)) };
            let offset = count_bytes(displ, datatype)?;
            layout.push((offset, count_bytes(count, datatype)?));
        }
        let (offset, len) = layout[comm.rank];
        // SAFETY: MPI's contract.
        let bytes = unsafe {
            send_bytes(
                sendbuf,
                sendcount,
                sendtype,
                recvbuf.cast::<u8>().add(offset).cast(),
                len,
            )?
        };
        let expects = layout.iter().map(|&(_, len)| len).collect();
        Ok(Part {
            call,
            kind: Kind::Allgatherv(expects),
            root: 0,
            bytes,
            block: 0,
        })
    });
    let joined = result.unwrap_or_default();
    let mut from = 0;
    for (offset, len) in layout {
        // SAFETY: MPI's contract: each rank's block fits at its displacement.
        unsafe {
            put_bytes(
                recvbuf.cast::<u8>().add(offset).cast(),
                &joined[from..from + len],
            )
        };
        from += len;
    }
    SUCCESS
}

/// The reductions: `MPI_Reduce` (with a root), `MPI_Allreduce`, `MPI_Scan`, `MPI_Exscan` and
/// `MPI_Reduce_scatter_block`, whose `kind` says which. Each rank sends `count` elements, or
/// for `MPI_Reduce_scatter_block` `count` per rank, and receives what the meeting gives it
/// (nothing for a rank that is not the root, nor for rank 0 of `MPI_Exscan`).
///
/// # Safety
/// MPI's contract.
unsafe fn reduce(
    call: &'static str,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: *const c_void,
    op: *const c_void,
    kind: impl FnOnce(Datatype, Op) -> Kind,
    root: c_int,
    comm: *const c_void,
) {
    let (_, result) = collective(call, comm, |_, comm| {
        let datatype = handles::datatype(datatype)?;
        let op = handles::op(op)?;
        let kind = kind(datatype, op);
        let block = count_bytes(count, datatype)?;
        let len = match kind {
            Kind::ReduceScatterBlock(..) => block * comm.size,
            _ => block,
        };
        let source = if sendbuf == IN_PLACE {
            recvbuf.cast_const()
        } else {
            sendbuf
        };
        // SAFETY: the caller's contract.
        let bytes = unsafe { bytes_at(source, len) };
        Ok(Part {
            call,
            kind,
            root,
            bytes,
            block,
        })
    });
    if let Some(bytes) = result {
        // SAFETY: the caller's contract.
        unsafe { put_bytes(recvbuf, &bytes) };
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: *const c_void,
    op: *const c_void,
    root: c_int,
    comm: *const c_void,
) -> c_int {
    // SAFETY: MPI's contract.
    unsafe {
        reduce(
            "MPI_Reduce",
            sendbuf,
            recvbuf,
            count,
            datatype,
            op,
            Kind::Reduce,
            root,
            comm,
        )
    };
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmem_sim_MPI_Alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: *const c_void,
    comm: *const c_void,
) -> c_int {
    let call = "MPI_Alltoall";
    let (_, result) = collective(call, comm, |_, comm| {
        let block = count_bytes(recvcount, handles::datatype(recvtype)?)?;
        let bytes = if sendbuf == IN_PLACE {
            // SAFETY: MPI's contract: in place, the receive buffer holds what is sent.
            unsafe { bytes_at(recvbuf, block * comm.size) }
        } else {
            let len = count_bytes(sendcount, handles::datatype(sendtype)?)? * comm.size;
            // SAFETY: MPI's contract: a block per rank.
            unsafe { bytes_at(sendbuf, len) }
        };
        Ok(Part {
            call,
            kind: Kind::Alltoall,
            root: 0,
            bytes,
            block,
        })
    });
    // SAFETY: MPI's contract: a block per rank.
    unsafe { put_bytes(recvbuf, &result.unwrap_or_default()) };
    SUCCESS
}

/// An export of a reduction with every rank's result and no root: `fn NAME` (the shim finds
/// the name in this text), the MPI call, and the [`Kind`] of its datatype and operation.
macro_rules! unrooted_reduction {
    (fn $name:ident, $call:literal, $kind:expr) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            sendbuf: *const c_void,
            recvbuf: *mut c_void,
            count: c_int,
            datatype: *const c_void,
            op: *const c_void,
            comm: *const c_void,
        ) -> c_int {
            // SAFETY: MPI's contract.
            unsafe { reduce($call, sendbuf, recvbuf, count, datatype, op, $kind, 0, comm) };
            SUCCESS
        }
    };
}

unrooted_reduction!(fn rshmem_sim_MPI_Allreduce, "MPI_Allreduce", Kind::Allreduce);
unrooted_reduction!(fn rshmem_sim_MPI_Scan, "MPI_Scan", |d, o| Kind::Scan(d, o, false));
unrooted_reduction!(fn rshmem_sim_MPI_Exscan, "MPI_Exscan", |d, o| Kind::Scan(d, o, true));
// The count is each rank's block: every rank sends one per rank.
unrooted_reduction!(
    fn rshmem_sim_MPI_Reduce_scatter_block,
    "MPI_Reduce_scatter_block",
    Kind::ReduceScatterBlock
);
