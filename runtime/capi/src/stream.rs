//! The on-stream extensions of `shmemx.h` (NVSHMEM's `*_on_stream` calls): each takes the
//! program's CUDA stream (`cudaStream_t`) and runs in order with the work on it.
//!
//! How a stream maps to the runtime: the default context's queue is a CUDA stream of its
//! own on the CUDA backend (`rshmem::Ctx::put_on_stream` and friends, docs/p2p.md). A call
//! here makes that queue wait for what the program enqueued on its stream so far, issues the
//! runtime's on-stream operation, and makes the program's stream wait for the queue
//! (`OrderedWith`): neither the calling thread nor the GPU waits more than the stream order
//! needs. The calls that the runtime has only on the host (the wait on a signal, the
//! barriers, the reductions) first wait for the program's stream and the queue, then run on
//! the host; later work on the stream is enqueued after they returned, so it follows them.
//!
//! On a backend without streams (the process backend, the simulator) the stream argument is
//! not used: each call is the runtime's on-stream operation there, which first waits for the
//! earlier operations of the context (the same order, paid for by the calling thread).

use std::ffi::{c_int, c_void};

use hw::cuda::CudaQueue;
use rshmem::ops::{ReduceOp, Sum};
use rshmem::{Ctx, Element, ShmemError};

use crate::fail::CallError;
use crate::reductions::reduce_on;
use crate::signal::op_of;
use crate::state::{Backend, Pe, with_pe};

/// A CUDA stream of the program (`cudaStream_t`, `struct CUstream_st *`); null is the legacy
/// default stream.
#[allow(non_camel_case_types, reason = "the C type's name")]
pub type cudaStream_t = *mut c_void;

/// The default context's queue ordered with the program's stream `stream`: made by waiting
/// for the stream, finished by making the stream wait for the queue.
struct OrderedWith<'a> {
    ctx: &'a Ctx<Backend>,
    /// The queue, when it is a CUDA stream.
    cuda: Option<&'a CudaQueue>,
    stream: cudaStream_t,
}

impl<'a> OrderedWith<'a> {
    /// Makes the default context's queue wait for the work on `stream` so far.
    ///
    /// # Errors
    /// [`CallError::Shmem`] if the driver refused (a stream of another context, or one the
    /// program destroyed).
    fn new(me: &'a Pe, stream: cudaStream_t) -> Result<OrderedWith<'a>, CallError> {
        let ctx = me.ctx(std::ptr::null_mut())?;
        let cuda = ctx.queue().downcast_ref::<CudaQueue>();
        if let Some(queue) = cuda {
            // SAFETY: the program passes a stream of its GPU's primary context (the CUDA
            // runtime's), or null, as the C contract of the on-stream calls says.
            unsafe { queue.wait_for_stream(stream) }.map_err(ShmemError::from)?;
        }
        Ok(OrderedWith { ctx, cuda, stream })
    }

    /// Makes the program's stream wait for everything issued on the queue so far.
    ///
    /// # Errors
    /// As [`OrderedWith::new`].
    fn finish(self) -> Result<(), CallError> {
        if let Some(queue) = self.cuda {
            // SAFETY: as in `new`.
            unsafe { queue.order_stream_after(self.stream) }.map_err(ShmemError::from)?;
        }
        Ok(())
    }

    /// Waits on the host until the stream's work before the call and the queue's operations
    /// have completed: what the calls the runtime runs on the host start with.
    ///
    /// # Errors
    /// As [`rshmem::Ctx::quiet`].
    fn complete_on_host(self) -> Result<(), CallError> {
        Ok(self.ctx.quiet()?)
    }
}

/// Runs `body` on the default context, in order with `stream`.
fn on_stream(
    call: &'static str,
    stream: cudaStream_t,
    body: impl FnOnce(&Pe, &Ctx<Backend>) -> Result<(), CallError>,
) {
    with_pe(call, |me| {
        let ordered = OrderedWith::new(me, stream)?;
        body(me, ordered.ctx)?;
        ordered.finish()
    });
}

/// Waits on the host for `stream` and the default context, then runs `body`.
fn after_stream<R>(
    call: &'static str,
    stream: cudaStream_t,
    body: impl FnOnce(&Pe) -> Result<R, CallError>,
) -> R {
    with_pe(call, |me| {
        OrderedWith::new(me, stream)?.complete_on_host()?;
        body(me)
    })
}

/// Copies `nelems` bytes of this PE's symmetric `source` to `dest` on `pe`, on `stream`.
#[unsafe(no_mangle)]
pub extern "C" fn shmemx_putmem_on_stream(
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    pe: c_int,
    stream: cudaStream_t,
) {
    on_stream("shmemx_putmem_on_stream", stream, |me, ctx| {
        let (dst, src) = bytes(me, dest, source, nelems)?;
        Ok(ctx.put_on_stream(dst, src, crate::setup::pe_number(pe)?)?)
    });
}

/// Copies `nelems` bytes of `source` on `pe` into this PE's symmetric `dest`, on `stream`.
#[unsafe(no_mangle)]
pub extern "C" fn shmemx_getmem_on_stream(
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    pe: c_int,
    stream: cudaStream_t,
) {
    on_stream("shmemx_getmem_on_stream", stream, |me, ctx| {
        let (dst, src) = bytes(me, dest, source, nelems)?;
        Ok(ctx.get_on_stream(dst, src, crate::setup::pe_number(pe)?)?)
    });
}

/// Copies `nelems` bytes to `dest` on `pe`, then updates the signal word `sig_addr` there
/// with `sig_op` and `signal`, on `stream`.
#[unsafe(no_mangle)]
pub extern "C" fn shmemx_putmem_signal_on_stream(
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    sig_addr: *mut u64,
    signal: u64,
    sig_op: c_int,
    pe: c_int,
    stream: cudaStream_t,
) {
    on_stream("shmemx_putmem_signal_on_stream", stream, |me, ctx| {
        let (dst, src) = bytes(me, dest, source, nelems)?;
        let sig = me.sym(sig_addr.cast_const(), 1)?;
        let (op, pe) = (op_of(sig_op)?, crate::setup::pe_number(pe)?);
        Ok(ctx.put_signal_on_stream(dst, src, sig, signal, op, pe)?)
    });
}

/// Updates the signal word `sig_addr` on `pe` with `sig_op` and `signal`, on `stream`.
#[unsafe(no_mangle)]
pub extern "C" fn shmemx_signal_op_on_stream(
    sig_addr: *mut u64,
    signal: u64,
    sig_op: c_int,
    pe: c_int,
    stream: cudaStream_t,
) {
    on_stream("shmemx_signal_op_on_stream", stream, |me, ctx| {
        let sig = me.sym(sig_addr.cast_const(), 1)?;
        let (op, pe) = (op_of(sig_op)?, crate::setup::pe_number(pe)?);
        Ok(ctx.signal_op_on_stream(sig, signal, op, pe)?)
    });
}

/// Makes the work enqueued on `stream` after this call run after every operation of the
/// default context issued before it has completed.
#[unsafe(no_mangle)]
pub extern "C" fn shmemx_quiet_on_stream(stream: cudaStream_t) {
    on_stream("shmemx_quiet_on_stream", stream, |_, ctx| {
        Ok(ctx.quiet_on_stream()?)
    });
}

/// Makes the work enqueued next on `stream` run after every operation of the default context
/// issued before this call, without making the context wait for the stream: what an on-stream
/// collective kernel (`rshmem/stream_gpu.cuh`) needs before its launch. Nothing to do on
/// backends without streams, or when the context's queue is idle.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemx_order_stream_after_queue(stream: cudaStream_t) {
    with_pe("nvshmemx_*_on_stream", |me| {
        let ctx = me.ctx(std::ptr::null_mut())?;
        let cuda = ctx.queue().downcast_ref::<CudaQueue>();
        // Not `OrderedWith::new`: the context need not wait for the stream.
        OrderedWith { ctx, cuda, stream }.finish()
    });
}

/// Waits until this PE's signal word `sig_addr` satisfies `cmp` with `cmp_value`; the work
/// enqueued on `stream` after this call runs after it. The calling thread waits (NVSHMEM's
/// stream waits instead).
#[unsafe(no_mangle)]
pub extern "C" fn shmemx_signal_wait_until_on_stream(
    sig_addr: *mut u64,
    cmp: c_int,
    cmp_value: u64,
    stream: cudaStream_t,
) {
    after_stream("shmemx_signal_wait_until_on_stream", stream, |me| {
        let sig = me.sym(sig_addr.cast_const(), 1)?;
        let cmp = crate::cmp::cmp_of(cmp)?;
        me.shmem.signal_wait_until(sig, cmp, cmp_value)?;
        Ok(())
    });
}

/// `shmem_barrier_all` after the work on `stream` so far; the calling thread waits.
#[unsafe(no_mangle)]
pub extern "C" fn shmemx_barrier_all_on_stream(stream: cudaStream_t) {
    after_stream("shmemx_barrier_all_on_stream", stream, |me| {
        Ok(me.shmem.barrier_all()?)
    });
}

/// `shmem_sync_all` after the work on `stream` so far; the calling thread waits.
#[unsafe(no_mangle)]
pub extern "C" fn shmemx_sync_all_on_stream(stream: cudaStream_t) {
    after_stream("shmemx_sync_all_on_stream", stream, |me| {
        Ok(me.shmem.sync_all()?)
    });
}

/// `dest` and `source` as `nelems` symmetric bytes each.
fn bytes(
    me: &Pe,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
) -> Result<(rshmem::Sym<u8>, rshmem::Sym<u8>), CallError> {
    Ok((
        me.sym(dest.cast_const().cast::<u8>(), nelems)?,
        me.sym(source.cast::<u8>(), nelems)?,
    ))
}

/// `shmemx_TYPENAME_sum_reduce_on_stream`: the team reduction after the work on `stream` so
/// far; the calling thread waits. 0 on success.
fn sum_reduce_on_stream<T: Element>(
    call: &'static str,
    team: crate::handles::shmem_team_t,
    dest: *mut T,
    source: *const T,
    nreduce: usize,
    stream: cudaStream_t,
) -> c_int
where
    Sum: ReduceOp<T>,
{
    after_stream(call, stream, |me| {
        reduce_on(me, me.team(team)?, Sum, dest, source, nreduce)?;
        Ok(0)
    })
}

/// The exported typed on-stream sum reductions, one per `reduce_types!` row.
pub mod exports {
    use std::ffi::c_int;

    use super::cudaStream_t;
    use crate::handles::shmem_team_t;

    /// `shmemx_$name_sum_reduce_on_stream` of every row.
    macro_rules! sum_reduce_on_stream {
        ($(($name:ident, $t:ty, $c:literal, [$($group:ident),*])),* $(,)?) => {$(paste::paste! {
            #[doc = concat!("Sums `nreduce` `", stringify!($name), "` elements over `team` after the work on `stream`; 0 on success.")]
            #[unsafe(no_mangle)]
            pub extern "C" fn [<shmemx_ $name _sum_reduce_on_stream>](team: shmem_team_t, dest: *mut $t, source: *const $t, nreduce: usize, stream: cudaStream_t) -> c_int {
                super::sum_reduce_on_stream(stringify!([<shmemx_ $name _sum_reduce_on_stream>]), team, dest, source, nreduce, stream)
            }
        })*};
    }

    crate::reduce_types!(sum_reduce_on_stream);
}
