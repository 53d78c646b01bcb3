//! `nvshmem_ptr` and `shmem_ptr` for a load/store peer on the simulator: the address of a
//! view of the peer's heap, whose every load and store is a simulated get or put.
//!
//! Why a view and not the peer's memory: a peer's memory changes only through simulated
//! operations (docs/sim-memory.md), which take their time, follow their route and obey the
//! ordering rules, and which the race detector records. A view is an address range of this
//! process that the peer's heap is never at: programs built with `-rshmem-check` call a hook
//! before each load and store (`tsan_hooks.rs` for kernels, `sim_host/check.rs` for the host),
//! and a hook on a view makes the access an operation of the calling thread. A load becomes a
//! get of its bytes into the view just before the load reads them; a store is let write the
//! view and becomes a put of what it wrote at the thread's next hook or SHMEM call (the hook
//! runs before the store, so it cannot see the value), and before its function returns.
//!
//! Code built without the hooks would read and write the view unseen: there a kernel's
//! `nvshmem_ptr` for a peer stops the run saying to build with `-rshmem-check`, and the host's
//! `shmem_ptr` gives NULL, as for a peer reached through a NIC (docs/cuda-sim-runtime.md).
//!
//! A view is one anonymous mapping per calling PE, peer and heap, reserved with
//! `MAP_NORESERVE` and kept for the run; the bytes it holds are the last ones a load fetched.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::cuda_sim::device_shmem::device_call;
use crate::cuda_sim::fiber;
use rshmem::Sym;

use crate::fail::CallError;
use crate::state::{Pe, with_pe};

/// Whether the program's device code was built with the hooks (its module constructor calls
/// `__rsim_tsan_init`).
pub(crate) static DEVICE_HOOKED: AtomicBool = AtomicBool::new(false);

/// Whether the program's host code was built with the hooks (`rshmem_check_hooked`).
static HOST_HOOKED: AtomicBool = AtomicBool::new(false);

/// Called by the host hooks' `__tsan_init` (`csrc/check_hooks.c`): the program's host code
/// reports its loads and stores.
#[unsafe(no_mangle)]
pub extern "C" fn rshmem_check_hooked() {
    // Relaxed: set by a module constructor, before main and before any PE starts.
    HOST_HOOKED.store(true, Ordering::Relaxed);
}

/// One view: PE `caller`'s window on PE `target`'s part of the heap at `local_base`.
#[derive(Clone, Copy, Debug)]
struct View {
    caller: u32,
    target: u32,
    base: usize,
    len_bytes: usize,
    local_base: usize,
}

impl View {
    /// The `len` bytes at `addr` of the view as PE `p`'s symmetric object, for the call
    /// `call`: the PE that asked for the view is the one that may use it.
    fn sym(&self, p: &Pe, addr: usize, len: usize) -> Result<Sym<u8>, CallError> {
        let user = p.shmem.my_pe();
        if user != self.caller {
            return Err(CallError::Argument(format!(
                "PE {user} used the pointer nvshmem_ptr gave PE {} for PE {}; each PE asks \
                 nvshmem_ptr for its own",
                self.caller, self.target
            )));
        }
        p.sym((self.local_base + (addr - self.base)) as *const u8, len)
    }
}

/// A store through a view that is not yet a put: its address and length.
#[derive(Clone, Copy, Debug)]
struct Store {
    addr: usize,
    len: usize,
}

thread_local! {
    /// The views, by their first address. One OS thread runs a simulated run's PEs.
    static VIEWS: RefCell<BTreeMap<usize, View>> = const { RefCell::new(BTreeMap::new()) };
    /// The lowest and highest address of any view, so that a hook on other memory costs two
    /// comparisons.
    static SPAN: Cell<(usize, usize)> = const { Cell::new((usize::MAX, 0)) };
    /// The store made through a view since the last hook or call.
    static PENDING: Cell<Option<Store>> = const { Cell::new(None) };
    /// Whether a store through a view became a put since the last load through one.
    static STORED: Cell<bool> = const { Cell::new(false) };
}

/// `shmem_ptr`/`nvshmem_ptr` of PE `me` (in a kernel if `kernel`): where it loads and stores
/// PE `pe`'s part of the object at `ptr`. The backend's address where it has one (this PE's
/// own memory), a view for a load/store peer, null for a PE reached only through a NIC and for
/// no PE at all ("Otherwise, a NULL address is returned", OpenSHMEM 1.5 section 9.1).
///
/// # Errors
/// An address error if `ptr` is not symmetric; as [`address`].
pub(crate) fn pointer(
    me: &Pe,
    ptr: *const c_void,
    pe: c_int,
    kernel: bool,
) -> Result<*mut c_void, CallError> {
    let sym = me.sym(ptr.cast::<u8>(), 1)?;
    let Some(pe) = u32::try_from(pe)
        .ok()
        .filter(|&pe| me.shmem.pe_accessible(pe))
    else {
        return Ok(std::ptr::null_mut());
    };
    let Some(peer) = me.shmem.ptr(sym, pe)? else {
        return Ok(std::ptr::null_mut());
    };
    if let Some(addr) = peer.addr {
        return Ok(addr as *mut c_void);
    }
    if pe == me.shmem.my_pe() {
        return Ok(std::ptr::null_mut());
    }
    Ok(address(me, ptr, pe, kernel)?.unwrap_or(std::ptr::null_mut()))
}

/// The address at which the calling PE `me` loads and stores PE `target`'s part of the
/// object at `ptr` (this PE's address of it), or `None` where it must not: code without the
/// hooks (`kernel` says whose code asks). `target` is a load/store peer other than `me`.
///
/// # Errors
/// [`CallError::Argument`] if `ptr` is in no heap of the PE; a kernel without the hooks.
fn address(
    me: &Pe,
    ptr: *const c_void,
    target: u32,
    kernel: bool,
) -> Result<Option<*mut c_void>, CallError> {
    let hooked = if kernel { &DEVICE_HOOKED } else { &HOST_HOOKED };
    // Relaxed: see `rshmem_check_hooked`.
    if !hooked.load(Ordering::Relaxed) {
        if kernel {
            return Err(CallError::Argument(format!(
                "PE {target} is a load/store peer, but this kernel was built without \
                 -rshmem-check, so its loads and stores through the pointer would not be \
                 simulated; build it with `rshmem-nvcc -rshmem-check` (as `rshmem check` runs \
                 it), or use nvshmem_put/nvshmem_get"
            )));
        }
        return Ok(None);
    }
    let caller = me.shmem.my_pe();
    let at = ptr as u64;
    let Some(heap) = me
        .shmem
        .mapped_heaps()
        .into_iter()
        .find(|heap| at.wrapping_sub(heap.local_base) < heap.len_bytes)
    else {
        return Err(CallError::Argument(format!(
            "{ptr:?} is in no symmetric heap of PE {caller}; pass a symmetric address"
        )));
    };
    let (local_base, len_bytes) = (heap.local_base as usize, heap.len_bytes as usize);
    let view = VIEWS.with_borrow_mut(|views| {
        if let Some(view) = views
            .values()
            .find(|v| (v.caller, v.target, v.local_base) == (caller, target, local_base))
        {
            return Ok(*view);
        }
        let base = reserve(len_bytes)?;
        let view = View {
            caller,
            target,
            base,
            len_bytes,
            local_base,
        };
        views.insert(base, view);
        crate::sim_host::check::routing();
        SPAN.set((SPAN.get().0.min(base), SPAN.get().1.max(base + len_bytes)));
        Ok::<View, CallError>(view)
    })?;
    Ok(Some(
        (view.base + (ptr as usize - local_base)) as *mut c_void,
    ))
}

/// Reserves `len_bytes` of address space for a view.
fn reserve(len_bytes: usize) -> Result<usize, CallError> {
    sim::map_lazily(len_bytes)
        .map(|base| base.as_ptr() as usize)
        .map_err(|err| {
            CallError::Argument(format!(
                "no address space left for a view of {len_bytes} bytes of a peer's heap: {err}; \
                 use smaller heaps (NVSHMEM_SYMMETRIC_SIZE) or fewer PEs"
            ))
        })
}

/// The view `len` bytes at `addr` are in, if any.
fn view_of(addr: usize) -> Option<View> {
    let (low, high) = SPAN.get();
    if addr < low || addr >= high {
        return None;
    }
    VIEWS.with_borrow(|views| {
        views
            .range(..=addr)
            .next_back()
            .map(|(_, view)| *view)
            .filter(|view| addr - view.base < view.len_bytes)
    })
}

/// A hook's access of `len` bytes at `addr` (a store if `write`): `true` if it was through a
/// view, and so is an operation. Makes the last store through a view a put first.
pub(crate) fn route(addr: *const c_void, len: usize, write: bool) -> bool {
    flush();
    let addr = addr as usize;
    let Some(view) = view_of(addr) else {
        return false;
    };
    if write {
        PENDING.set(Some(Store { addr, len }));
    } else {
        load(view, addr, len);
    }
    true
}

/// Makes the store through a view that the running code made last, if any, a put of the
/// bytes it wrote.
pub(crate) fn flush() {
    let Some(store) = PENDING.take() else {
        return;
    };
    let Some(view) = view_of(store.addr) else {
        return;
    };
    // SAFETY: the view holds `len` bytes at `addr` (the store wrote them), and nothing else
    // writes it while the hook runs.
    let bytes = unsafe { std::slice::from_raw_parts(store.addr as *const u8, store.len) }.to_vec();
    const CALL: &str = "a store through nvshmem_ptr's pointer";
    STORED.set(true);
    if fiber::running().is_some() {
        device_call(CALL, |t, p| {
            let dst = view.sym(p, store.addr, store.len)?;
            Ok(fiber::block_on(t.put(dst, &bytes, view.target))?)
        });
    } else {
        with_pe(CALL, |p| {
            let dst = view.sym(p, store.addr, store.len)?;
            Ok(p.ctx(std::ptr::null_mut())?.put(dst, &bytes, view.target)?)
        });
    }
}

/// A load of `len` bytes at `addr` of `view`: a get of them into the view. After stores
/// through views it is a quiet first, so that the load reads what the thread stored: a get may
/// otherwise pass a put to the same address, where a GPU's loads see its own stores.
fn load(view: View, addr: usize, len: usize) {
    const CALL: &str = "a load through nvshmem_ptr's pointer";
    let stored = STORED.replace(false);
    let into_view = |data: &[u8]| {
        // SAFETY: the view holds `len` bytes at `addr`, and `data` is the get's `len` bytes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), addr as *mut u8, data.len()) };
    };
    if fiber::running().is_some() {
        device_call(CALL, |t, p| {
            let src = view.sym(p, addr, len)?;
            if stored {
                fiber::block_on(t.quiet())?;
            }
            Ok(fiber::block_on(t.get_with(src, view.target, into_view))?)
        });
    } else {
        with_pe(CALL, |p| {
            let src = view.sym(p, addr, len)?;
            // SAFETY: as `into_view`.
            let out = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, len) };
            Ok(p.ctx(std::ptr::null_mut())?
                .get_into(src, view.target, out)?)
        });
    }
}
