//! The CUDA language's built-ins for device code: barriers and votes of a block, warp
//! meetings that exchange values (shuffles, ballots), atomics, fences, clocks, sleep, trap.
//!
//! Barriers are the kernel model's meetings (`KernelThread::sync_threads`, `sync_warp`).
//! Meetings that exchange values put each thread's value in a table before the meeting and
//! read the others' after it ([`Exchange`]). Why the tables need no reset step: a thread
//! counts its exchanges, and exchange `k` uses slot `k % 2` of its lane (shuffles) or
//! `k % 3` of its group (votes), clearing slot `(k + 1) % 3` on arrival. A thread cannot reach
//! exchange `k + 2` before every thread of its group has arrived at `k + 1`, which each does
//! only after reading the results of `k`, so no slot is overwritten while it is still read.
//!
//! Atomics are plain read-modify-writes: threads switch only inside calls, so none can come
//! between the read and the write. Fences order nothing on one CPU thread but are kept as
//! CPU fences for memory other processes read.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_uint};
use std::sync::atomic::{Ordering, fence};

use rshmem::WARP_SIZE;

use crate::cuda_sim::fiber::{self, Fiber, block_on};
use crate::cuda_sim::guard;

/// The values of a launch's exchanges (see the module docs), grown as they are used.
#[derive(Default)]
pub(crate) struct Exchange {
    /// Each thread's shuffled value, two slots.
    lanes: RefCell<Vec<[u64; 2]>>,
    /// Each warp's ballot bits, three slots.
    warps: RefCell<Vec<[u32; 3]>>,
    /// Each block's count of true predicates, three slots.
    blocks: RefCell<Vec<[u32; 3]>>,
}

impl Exchange {
    pub(crate) fn new() -> Exchange {
        Exchange::default()
    }
}

/// Runs the built-in `call` for the running GPU thread; ends the run if no thread runs.
fn on_thread<R>(call: &'static str, body: impl FnOnce(&'static Fiber<'static>) -> R) -> R {
    guard(call, || {
        let Some(fiber) = fiber::running() else {
            fiber::fail(
                call,
                &"called outside a kernel: call it from __global__ or __device__ code",
            )
        };
        body(fiber)
    })
}

/// The slot of `table[at]` for a group exchange, after clearing the next one.
fn vote_slot(table: &mut Vec<[u32; 3]>, at: usize, exchange: u32) -> usize {
    if table.len() <= at {
        table.resize(at + 1, [0; 3]);
    }
    table[at][(exchange as usize + 1) % 3] = 0;
    exchange as usize % 3
}

/// How many threads of the caller's block pass a true `predicate`, after every thread has.
fn block_count(call: &'static str, predicate: c_int) -> u32 {
    on_thread(call, |fiber| {
        let exchange = fiber
            .block_exchanges
            .replace(fiber.block_exchanges.get() + 1);
        let (block, blocks) = (fiber.block(), &fiber.grid().exchange.blocks);
        let slot = vote_slot(&mut blocks.borrow_mut(), block, exchange);
        blocks.borrow_mut()[block][slot] += u32::from(predicate != 0);
        if let Err(err) = block_on(fiber.thread().sync_threads()) {
            fiber::fail(call, &err);
        }
        blocks.borrow()[block][slot]
    })
}

/// `__syncthreads()`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_syncthreads() {
    on_thread("__syncthreads", |fiber| {
        if let Err(err) = block_on(fiber.thread().sync_threads()) {
            fiber::fail("__syncthreads", &err);
        }
    });
}

/// `__syncthreads_count(predicate)`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_syncthreads_count(predicate: c_int) -> c_int {
    block_count("__syncthreads_count", predicate) as c_int
}

/// `__syncthreads_and(predicate)`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_syncthreads_and(predicate: c_int) -> c_int {
    let count = block_count("__syncthreads_and", predicate);
    c_int::from(
        count
            == on_thread("__syncthreads_and", |f| {
                f.thread().block_dim().count() as u32
            }),
    )
}

/// `__syncthreads_or(predicate)`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_syncthreads_or(predicate: c_int) -> c_int {
    c_int::from(block_count("__syncthreads_or", predicate) > 0)
}

/// Where the caller's warp is: its first thread's index in the launch, its index among the
/// launch's warps, and its number of lanes.
fn warp_of(fiber: &Fiber<'_>) -> (usize, usize, u32) {
    let thread = fiber.thread();
    let block_threads = thread.block_dim().count() as u32;
    let warps_per_block = block_threads.div_ceil(WARP_SIZE) as usize;
    let lanes = (block_threads - thread.warp_id() * WARP_SIZE).min(WARP_SIZE);
    let first = fiber.index() - thread.lane_id() as usize;
    (
        first,
        fiber.block() * warps_per_block + thread.warp_id() as usize,
        lanes,
    )
}

/// Meets the caller's warp for the built-in `call`. Every lane of the warp takes part
/// whatever the mask says (docs/cuda-sim-runtime.md).
fn meet_warp(call: &'static str, fiber: &Fiber<'_>) {
    if let Err(err) = block_on(fiber.thread().sync_warp()) {
        fiber::fail(call, &err);
    }
}

/// `__syncwarp(mask)`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_syncwarp(_mask: c_uint) {
    on_thread("__syncwarp", |fiber| meet_warp("__syncwarp", fiber));
}

/// The lane a shuffle of `kind` (0 idx, 1 up, 2 down, 3 xor) reads for `lane`, within
/// segments of `width` lanes of a warp of `lanes`; its own lane when the source is outside.
fn source_lane(kind: c_int, lane: u32, lane_arg: c_int, width: c_int, lanes: u32) -> u32 {
    let width = u32::try_from(width)
        .ok()
        .filter(|w| w.is_power_of_two() && *w <= WARP_SIZE)
        .unwrap_or(WARP_SIZE);
    let segment = lane & !(width - 1);
    let arg = lane_arg as u32;
    let source = match kind {
        0 => Some(segment + (arg & (width - 1))),
        1 => (lane - segment).checked_sub(arg).map(|back| segment + back),
        2 => Some(lane + arg).filter(|s| s - segment < width),
        _ => Some(lane ^ arg).filter(|s| s & !(width - 1) == segment),
    };
    source.filter(|s| *s < lanes).unwrap_or(lane)
}

/// `__shfl_sync`, `__shfl_up_sync`, `__shfl_down_sync`, `__shfl_xor_sync`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_shfl(
    _mask: c_uint,
    value: u64,
    lane_arg: c_int,
    width: c_int,
    kind: c_int,
) -> u64 {
    on_thread("__shfl_sync", |fiber| {
        let exchange = fiber.warp_exchanges.replace(fiber.warp_exchanges.get() + 1) as usize % 2;
        let (first, _, lanes) = warp_of(fiber);
        let lane = fiber.thread().lane_id();
        let table = &fiber.grid().exchange.lanes;
        {
            let mut table = table.borrow_mut();
            if table.len() < first + lanes as usize {
                table.resize(first + lanes as usize, [0; 2]);
            }
            table[fiber.index()][exchange] = value;
        }
        meet_warp("__shfl_sync", fiber);
        let source = source_lane(kind, lane, lane_arg, width, lanes);
        table.borrow()[first + source as usize][exchange]
    })
}

/// `__ballot_sync(mask, predicate)`: the lanes whose predicate is true.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_ballot(_mask: c_uint, predicate: c_int) -> c_uint {
    on_thread("__ballot_sync", |fiber| {
        let exchange = fiber.warp_exchanges.replace(fiber.warp_exchanges.get() + 1);
        let (_, warp, _) = warp_of(fiber);
        let warps = &fiber.grid().exchange.warps;
        let slot = vote_slot(&mut warps.borrow_mut(), warp, exchange);
        if predicate != 0 {
            warps.borrow_mut()[warp][slot] |= 1 << fiber.thread().lane_id();
        }
        meet_warp("__ballot_sync", fiber);
        warps.borrow()[warp][slot]
    })
}

/// `__activemask()`: every lane of the warp (lanes that returned are not told apart).
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_activemask() -> c_uint {
    on_thread("__activemask", |fiber| {
        let (_, _, lanes) = warp_of(fiber);
        if lanes == WARP_SIZE {
            u32::MAX
        } else {
            (1 << lanes) - 1
        }
    })
}

/// `__threadfence_block`, `__threadfence`, `__threadfence_system` (scope 0, 1, 2).
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_threadfence(scope: c_int) {
    if scope > 0 {
        // SeqCst: the strongest CPU fence, for memory that other processes' PEs read.
        fence(Ordering::SeqCst);
    }
    // Why a yield: the compiler calls this after every volatile load, so a thread that spins
    // on a flag another thread of its launch sets lets that thread run.
    if fiber::running().is_some() {
        on_thread("__threadfence", |fiber| {
            block_on(fiber.thread().yield_now())
        });
    }
}

/// The PE's clock in nanoseconds (simulated time on the simulator).
fn now_ns() -> u64 {
    crate::state::running_pe().map_or(0, |pe| pe.shmem.now_ns())
}

/// `clock64()`: the PE's clock in nanoseconds, a 1 GHz cycle counter.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_clock64() -> i64 {
    guard("clock64", || now_ns() as i64)
}

/// `%globaltimer`: the PE's clock in nanoseconds.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_globaltimer() -> u64 {
    guard("globaltimer", now_ns)
}

/// `__nanosleep(ns)`: lets the launch's other threads run (`KernelThread::yield_now`), so a
/// spin loop with a back-off makes progress; the clock does not advance by `ns`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_nanosleep(_ns: c_uint) {
    on_thread("__nanosleep", |fiber| block_on(fiber.thread().yield_now()));
}

/// `__trap()`, a failed `assert`, or a construct the emulation meets at run time and does not
/// support: ends the run naming the PE, kernel, block and thread.
///
/// # Safety
/// `what` and `file` are NUL-terminated strings or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __rsim_trap(what: *const c_char, file: *const c_char, line: c_int) {
    let text = |s: *const c_char| {
        // SAFETY: the caller's contract.
        (!s.is_null()).then(|| {
            unsafe { std::ffi::CStr::from_ptr(s) }
                .to_string_lossy()
                .into_owned()
        })
    };
    let what = text(what).unwrap_or_else(|| "__trap()".to_owned());
    let place = text(file).map_or_else(String::new, |file| format!(" at {file}:{line}"));
    fiber::fail("trap", &format!("{what}{place}"))
}
