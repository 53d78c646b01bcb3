//! The device-side SHMEM calls of kernels built for the simulator: the primitives of
//! `rshmem/device_abi.h`, each an `extern "C"` function that the NVSHMEM header's device
//! functions call from a GPU thread.
//!
//! Each call is the same operation the runtime's kernel model makes for a Rust kernel
//! (`runtime/src/kernel/`, docs/kernels.md), made at the calling thread's scope: the thread
//! alone, or its warp or block, whose threads all make the call and meet in it. A call that
//! cannot finish yet (a get, a wait, a meeting) suspends the thread's coroutine
//! ([`fiber::block_on`]), so the launch's other threads run meanwhile. A call the runtime
//! refuses ends the run with its message naming the PE, kernel, block and thread, as a trap
//! ends a GPU kernel ([`fiber::fail`]).
//!
//! Pointers are the program's: a symmetric object's address in this PE's heap becomes a
//! symmetric view (`Pe::sym`), which the runtime checks; sources of puts and destinations of
//! gets may also be private memory (a thread's array, a `cudaMalloc` buffer).
//!
//! Loads of a peer through `g` mostly never come here: `rshmem/device_sim.h` reads load/store
//! peers' memory inline through the mapped loads (`mapped.rs`), and only the rest calls
//! [`rshmemd_g_op`].

use std::ffi::{CStr, c_char, c_int, c_void};

use hw::{AmoKind, Cmp, SignalOp};
use rshmem::{AtomicElement, KernelThread, Scoped, Sym};

use crate::cuda_sim::{fiber, guard};
use crate::cuda_sim::{mapped, peer_views};
use crate::fail::CallError;
use crate::state::{Backend, Pe, running_pe};

/// Scopes and codes of `device_abi.h`.
pub(crate) const SCOPE_THREAD: c_int = 0;
const SCOPE_WARP: c_int = 1;
const SCOPE_BLOCK: c_int = 2;
const KIND_SIGNED: c_int = 0;
const KIND_UNSIGNED: c_int = 1;
const KIND_FLOAT: c_int = 2;

/// The calling GPU thread and its PE, for the device call `call`.
fn caller(call: &'static str) -> (&'static KernelThread<'static, Backend>, &'static Pe) {
    let Some(thread) = fiber::current() else {
        fiber::fail(
            call,
            &"a device function called outside a kernel; call it from __global__ or __device__ code",
        )
    };
    let Some(pe) = running_pe() else {
        fiber::fail(call, &"the PE is not initialised; call nvshmem_init first")
    };
    mapped::charge(pe);
    (thread, pe)
}

/// Runs the device call `call` and ends the run if it fails; the calling thread is current
/// again afterwards ([`guard`]).
pub(crate) fn device_call<R>(
    call: &'static str,
    body: impl FnOnce(&'static KernelThread<'static, Backend>, &'static Pe) -> Result<R, CallError>,
) -> R {
    guard(call, || {
        peer_views::flush();
        let (thread, pe) = caller(call);
        match body(thread, pe) {
            Ok(value) => value,
            Err(err) => fiber::fail(call, &err),
        }
    })
}

/// The thread's operations at `scope`.
pub(crate) fn scoped(
    thread: &'static KernelThread<'static, Backend>,
    scope: c_int,
) -> Result<Scoped<'static, Backend>, CallError> {
    match scope {
        SCOPE_THREAD => Ok(**thread),
        SCOPE_WARP => Ok(thread.warp()),
        SCOPE_BLOCK => Ok(thread.block()),
        other => Err(CallError::Argument(format!(
            "scope {other} is none of thread (0), warp (1) or block (2)"
        ))),
    }
}

/// The `len` bytes at `ptr`, a local source.
///
/// # Safety
/// A non-null `ptr` points to `len` readable bytes.
unsafe fn source_bytes<'a>(ptr: *const c_void, len: usize) -> Result<&'a [u8], CallError> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(CallError::Argument(format!(
            "a null source of {len} bytes; pass the address of the data"
        )));
    }
    // SAFETY: not null; the caller passes `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) })
}

/// The element size a type code names.
pub(crate) fn size_of_type(code: c_int) -> usize {
    (code & 0xff) as usize
}

/// A PE number of a call; the runtime checks the upper bound.
pub(crate) fn pe_number(pe: c_int) -> Result<u32, CallError> {
    u32::try_from(pe)
        .map_err(|_| CallError::Argument(format!("PE {pe} is negative; pass a PE of the run")))
}

/// `nvshmem_my_pe` in a kernel.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_my_pe() -> c_int {
    device_call("nvshmem_my_pe", |t, _| Ok(t.my_pe() as c_int))
}

/// `nvshmem_n_pes` in a kernel.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_n_pes() -> c_int {
    device_call("nvshmem_n_pes", |t, _| Ok(t.n_pes() as c_int))
}

/// `nvshmem_ptr` in a kernel: the object itself for this PE, a view whose loads and stores
/// are operations for a load/store peer (`peer_views.rs`), null for the rest.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_ptr(ptr: *const c_void, pe: c_int) -> *mut c_void {
    device_call("nvshmem_ptr", |t, p| {
        if pe == t.my_pe() as c_int {
            p.addr(ptr.cast::<u8>())?;
            return Ok(ptr.cast_mut());
        }
        peer_views::pointer(p, ptr, pe, true)
    })
}

/// `nvshmem_putmem` and its `_nbi`, `_warp` and `_block` forms.
///
/// # Safety
/// `src` points to `bytes` readable bytes; `dst` is a symmetric address.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmemd_putmem(
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    pe: c_int,
    scope: c_int,
    nbi: c_int,
) {
    device_call("nvshmem_putmem", |t, p| {
        let dst = p.sym(dst.cast::<u8>().cast_const(), bytes)?;
        // SAFETY: the caller passes `bytes` readable bytes at `src`.
        let data = unsafe { source_bytes(src, bytes) }?;
        let scope = scoped(t, scope)?;
        let pe = pe_number(pe)?;
        if nbi != 0 {
            fiber::block_on(scope.put_nbi(dst, data, pe))?;
        } else {
            fiber::block_on(scope.put(dst, data, pe))?;
        }
        Ok(())
    });
}

/// `nvshmem_getmem` and its forms: into a symmetric destination as a get into this PE's
/// heap, into private memory through the data the get returns. A non-blocking get is made
/// blocking, which completes it earlier than NVSHMEM requires and so keeps its contract.
///
/// # Safety
/// `dst` points to `bytes` writable bytes that nothing else uses during the call; `src` is a
/// symmetric address.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmemd_getmem(
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    pe: c_int,
    scope: c_int,
    _nbi: c_int,
) {
    device_call("nvshmem_getmem", |t, p| {
        let src = p.sym(src.cast::<u8>(), bytes)?;
        let scope = scoped(t, scope)?;
        let pe = pe_number(pe)?;
        if bytes == 0 {
            return Ok(());
        }
        if dst.is_null() {
            return Err(CallError::Argument(format!(
                "a null destination of {bytes} bytes; pass the address to get into"
            )));
        }
        match p.sym(dst.cast::<u8>().cast_const(), bytes) {
            Ok(target) => fiber::block_on(scope.get(target, src, pe))?,
            Err(_) => fiber::block_on(scope.get_with(src, pe, |data| {
                // SAFETY: the caller passes `bytes` writable bytes at `dst`, and `data` is
                // the get's `bytes` bytes.
                unsafe {
                    std::ptr::copy_nonoverlapping(data.as_ptr(), dst.cast::<u8>(), data.len())
                };
            }))?,
        }
        Ok(())
    });
}

/// `nvshmem_TYPE_p` in a kernel: one element of `type` from `*value`.
///
/// # Safety
/// `value` points to one element of `type`; `dst` is a symmetric address.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmemd_p(
    dst: *mut c_void,
    value: *const c_void,
    type_code: c_int,
    pe: c_int,
) {
    let size = size_of_type(type_code);
    // SAFETY: as this function's contract.
    unsafe { rshmemd_putmem(dst, value, size, pe, SCOPE_THREAD, 0) };
}

/// `nvshmem_TYPE_g` in a kernel for a peer mapped loads do not reach (or with them off):
/// one element of `type` into `*out`, as a get.
///
/// # Safety
/// `out` points to one writable element of `type`; `src` is a symmetric address.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmemd_g_op(
    out: *mut c_void,
    src: *const c_void,
    type_code: c_int,
    pe: c_int,
) {
    let size = size_of_type(type_code);
    device_call("nvshmem_g", |t, p| {
        let src = p.sym(src.cast::<u8>(), size)?;
        let pe = pe_number(pe)?;
        fiber::block_on(t.get_with(src, pe, |data| {
            // SAFETY: the caller passes one writable element of `size` bytes at `out`.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), out.cast::<u8>(), data.len()) };
        }))?;
        Ok(())
    });
}

/// Runs `$body` with `$t` the integer type of the atomic type code `$code`.
macro_rules! with_word_type {
    ($code:expr, $call:expr, $t:ident => $body:expr) => {{
        match ($code >> 8, $code & 0xff) {
            (KIND_SIGNED, 4) => {
                type $t = i32;
                $body
            }
            (KIND_UNSIGNED, 4) | (KIND_FLOAT, 4) => {
                type $t = u32;
                $body
            }
            (KIND_SIGNED, 8) => {
                type $t = i64;
                $body
            }
            (KIND_UNSIGNED, 8) | (KIND_FLOAT, 8) => {
                type $t = u64;
                $body
            }
            (kind, size) => Err(CallError::Argument(format!(
                "{}: elements of {size} bytes (kind {kind}) have no atomics or waits in \
                 kernels on the simulator; use 32- or 64-bit words",
                $call
            ))),
        }
    }};
}

/// A device atomic (`nvshmem_TYPE_atomic_*`): returns the old value's bits for fetching
/// operations, 0 otherwise. Floats move as their bits (fetch, set, swap).
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_amo(
    dst: *mut c_void,
    op: c_int,
    type_code: c_int,
    value: u64,
    compare: u64,
    pe: c_int,
) -> u64 {
    device_call("nvshmem_atomic", |t, p| {
        let (kind, operand, fetch) = match op {
            0 => (AmoKind::Fetch, 0, true),
            1 => (AmoKind::Set, value, false),
            2 => (AmoKind::Swap, value, true),
            3 => (AmoKind::CompareSwap { compare }, value, true),
            4 => (AmoKind::Add, 1, true),
            5 => (AmoKind::Add, 1, false),
            6 => (AmoKind::Add, value, true),
            7 => (AmoKind::Add, value, false),
            8 => (AmoKind::And, value, true),
            9 => (AmoKind::And, value, false),
            10 => (AmoKind::Or, value, true),
            11 => (AmoKind::Or, value, false),
            12 => (AmoKind::Xor, value, true),
            13 => (AmoKind::Xor, value, false),
            other => {
                return Err(CallError::Argument(format!(
                    "atomic operation {other} is unknown"
                )));
            }
        };
        let pe = pe_number(pe)?;
        with_word_type!(type_code, "nvshmem_atomic", T => {
            let target: Sym<T> = p.sym(dst.cast::<T>().cast_const(), 1)?;
            let old = fiber::block_on(t.atomic(target, kind, T::from_bits(operand), pe, fetch))?;
            Ok(old.map_or(0, AtomicElement::to_bits))
        })
    })
}

fn signal_op(code: c_int) -> Result<SignalOp, CallError> {
    match code {
        0 => Ok(SignalOp::Set),
        5 => Ok(SignalOp::Add),
        other => Err(CallError::Argument(format!(
            "signal operator {other}: pass NVSHMEM_SIGNAL_SET or NVSHMEM_SIGNAL_ADD"
        ))),
    }
}

fn comparison(code: c_int) -> Result<Cmp, CallError> {
    match code {
        0 => Ok(Cmp::Eq),
        1 => Ok(Cmp::Ne),
        2 => Ok(Cmp::Gt),
        3 => Ok(Cmp::Le),
        4 => Ok(Cmp::Lt),
        5 => Ok(Cmp::Ge),
        other => Err(CallError::Argument(format!(
            "comparison {other}: pass one of NVSHMEM_CMP_EQ, _NE, _GT, _LE, _LT, _GE"
        ))),
    }
}

/// `nvshmem_putmem_signal` and its forms.
///
/// # Safety
/// As [`rshmemd_putmem`]; `sig` is a symmetric address.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmemd_put_signal(
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    sig: *mut u64,
    signal: u64,
    sig_op: c_int,
    pe: c_int,
    scope: c_int,
    nbi: c_int,
) {
    device_call("nvshmem_putmem_signal", |t, p| {
        let dst = p.sym(dst.cast::<u8>().cast_const(), bytes)?;
        let sig = p.sym(sig.cast_const(), 1)?;
        // SAFETY: the caller passes `bytes` readable bytes at `src`.
        let data = unsafe { source_bytes(src, bytes) }?;
        let op = signal_op(sig_op)?;
        let scope = scoped(t, scope)?;
        let pe = pe_number(pe)?;
        if nbi != 0 {
            fiber::block_on(scope.put_signal_nbi(dst, data, sig, signal, op, pe))?;
        } else {
            fiber::block_on(scope.put_signal(dst, data, sig, signal, op, pe))?;
        }
        Ok(())
    });
}

/// `nvshmemx_signal_op` in a kernel: the signal update alone, as an atomic.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_signal_op(sig: *mut u64, signal: u64, sig_op: c_int, pe: c_int) {
    device_call("nvshmemx_signal_op", |t, p| {
        let kind = match signal_op(sig_op)? {
            SignalOp::Set => AmoKind::Set,
            SignalOp::Add => AmoKind::Add,
        };
        let sig: Sym<u64> = p.sym(sig.cast_const(), 1)?;
        fiber::block_on(t.atomic(sig, kind, signal, pe_number(pe)?, false))?;
        Ok(())
    });
}

/// `nvshmem_signal_fetch` in a kernel: this PE's signal word. Kernels spin on it until a
/// peer's put-with-signal lands, so each fetch is a poll of the simulated memory (a test), in
/// which other PEs run and their puts land, and then lets the launch's other threads run, as
/// a failed `nvshmem_TYPE_test` does. A set signal is read by a wait that it already
/// satisfies: the put's data is then ordered before the kernel's reads, as after
/// `nvshmem_signal_wait_until`, so the race detector accepts the usual spin-then-read.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_signal_fetch(sig: *const u64) -> u64 {
    let set = device_call("nvshmem_signal_fetch", |t, p| {
        let sig: Sym<u64> = p.sym(sig, 1)?;
        Ok(t.ctx().test(sig, Cmp::Ne, 0)?)
    });
    // A call of its own, as the yield's below: the poll may have left another thread running.
    let value = if set {
        device_call("nvshmem_signal_fetch", |t, p| {
            let sig: Sym<u64> = p.sym(sig, 1)?;
            Ok(fiber::block_on(t.signal_wait_until(sig, Cmp::Ne, 0))?)
        })
    } else {
        0
    };
    let_others_run("nvshmem_signal_fetch");
    value
}

/// Suspends the calling thread so that the launch's other threads run first.
///
/// Why a call of its own: the poll before it may let other PEs' threads run and become the
/// running coroutine; the call's guard makes this thread running again, so the yield suspends
/// this thread and not the last of theirs.
fn let_others_run(name: &'static str) {
    device_call(name, |t, _| {
        fiber::block_on(t.yield_now());
        Ok(())
    });
}

/// `nvshmem_signal_wait_until` in a kernel.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_signal_wait_until(sig: *mut u64, cmp: c_int, value: u64) -> u64 {
    const CALL: &str = "nvshmem_signal_wait_until";
    device_call(CALL, |t, p| {
        let symbol: Sym<u64> = p.sym(sig.cast_const(), 1)?;
        let cmp = comparison(cmp)?;
        fiber::block_on(t.signal_wait_until(symbol, cmp, value)).or_else(|error| {
            // SAFETY: `sig` is this PE's word of a symmetric object (`p.sym` checked it).
            let seen = unsafe { std::ptr::read_volatile(sig) };
            let word = p.shmem.describe_word(symbol);
            let wait = fiber::kernel_wait(CALL, word, cmp, value, seen);
            fiber::fail_wait(wait, CALL, &error)
        })
    })
}

/// `nvshmem_TYPE_wait_until` in a kernel.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_wait_until(ivar: *mut c_void, type_code: c_int, cmp: c_int, value: u64) {
    const CALL: &str = "nvshmem_wait_until";
    device_call(CALL, |t, p| {
        let cmp = comparison(cmp)?;
        with_word_type!(type_code, CALL, T => {
            let word = ivar.cast::<T>();
            let symbol: Sym<T> = p.sym(word.cast_const(), 1)?;
            if let Err(error) = fiber::block_on(t.wait_until(symbol, cmp, T::from_bits(value))) {
                // SAFETY: `word` is this PE's element of a symmetric object (`p.sym` checked it).
                let seen = unsafe { std::ptr::read_volatile(word) }.to_bits();
                let name = p.shmem.describe_word(symbol);
                let wait = fiber::kernel_wait(CALL, name, cmp, value, seen);
                fiber::fail_wait(wait, CALL, &error)
            }
            Ok(())
        })
    });
}

/// `nvshmem_TYPE_test` in a kernel. A test that fails lets the launch's other threads run
/// first, so a kernel that spins on it makes progress (a GPU runs them side by side).
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_test(
    ivar: *mut c_void,
    type_code: c_int,
    cmp: c_int,
    value: u64,
) -> c_int {
    let passed = device_call("nvshmem_test", |t, p| {
        let cmp = comparison(cmp)?;
        with_word_type!(type_code, "nvshmem_test", T => {
            let ivar: Sym<T> = p.sym(ivar.cast::<T>().cast_const(), 1)?;
            Ok::<bool, CallError>(t.ctx().test(ivar, cmp, T::from_bits(value))?)
        })
    });
    if !passed {
        let_others_run("nvshmem_test");
    }
    c_int::from(passed)
}

/// The start of a wait for several words (`nvshmem_TYPE_wait_until_any`, `_some` and their
/// `_vector` forms), in the PE's clock, for [`rshmemd_wait_check`].
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_wait_start() -> u64 {
    device_call("nvshmem_wait_until_any", |_, p| Ok(p.shmem.now_ns()))
}

/// Ends the run if a wait for several words that started at `started_ns` passed
/// `RSHMEM_WAIT_TIMEOUT_MS` with none of them holding: the report names `call` and its first
/// word, in the format of `nvshmem_wait_until`'s.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_wait_check(
    started_ns: u64,
    ivar: *const c_void,
    type_code: c_int,
    cmp: c_int,
    value: u64,
    call: *const c_char,
) {
    device_call("nvshmem_wait_until_any", |_, p| {
        let timeout_ms = p.shmem.config().wait_timeout_ms;
        let waited_ns = p.shmem.now_ns().saturating_sub(started_ns);
        if waited_ns <= timeout_ms.saturating_mul(1_000_000) {
            return Ok(());
        }
        let call = if call.is_null() {
            "nvshmem_wait_until_any".to_owned()
        } else {
            // SAFETY: the header passes one of its NUL-terminated literals.
            unsafe { CStr::from_ptr(call) }
                .to_string_lossy()
                .into_owned()
        };
        let cmp = comparison(cmp)?;
        with_word_type!(type_code, call, T => {
            let word = ivar.cast::<T>();
            let symbol: Sym<T> = p.sym(word, 1)?;
            // SAFETY: `word` is this PE's element of a symmetric object (`p.sym` checked it).
            let seen = unsafe { std::ptr::read_volatile(word) }.to_bits();
            let wait = fiber::kernel_wait(&call, p.shmem.describe_word(symbol), cmp, value, seen);
            fiber::fail_wait(
                wait,
                &call,
                &format!(
                    "none of its words held within RSHMEM_WAIT_TIMEOUT_MS ({timeout_ms} ms of \
                     the PE's clock)"
                ),
            )
        })
    });
}

/// `nvshmem_fence` and its `_warp`/`_block` forms.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_fence(scope: c_int) {
    device_call("nvshmem_fence", |t, _| {
        Ok(fiber::block_on(scoped(t, scope)?.fence())?)
    });
}

/// `nvshmem_quiet` and its forms.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemd_quiet(scope: c_int) {
    device_call("nvshmem_quiet", |t, _| {
        Ok(fiber::block_on(scoped(t, scope)?.quiet())?)
    });
}
