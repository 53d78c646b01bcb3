//! Symmetric memory management: `shmem_malloc` and its family, the deprecated `shmalloc`
//! names, and the queries `shmem_ptr`, `shmem_addr_accessible`.
//!
//! Every allocation is made in bytes from the runtime's default heap (or the heap the hints
//! pick) and handed to the program as the pointer at which this process maps its part.
//! As the specification asks, a heap that cannot hold a request (or whose growth the device
//! refuses) yields a null pointer on every PE, and a size of 0 allocates nothing and yields null; every other failure (PEs
//! asking for different sizes, say) ends the job with a message.

use std::ffi::{c_int, c_long, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

use rshmem::{MallocHints, ShmemError, Sym};

use crate::fail::CallError;
use crate::state::{Pe, with_pe};

/// The unit allocations are made in. Why not bytes: C's `malloc` returns memory aligned for
/// any type (16 bytes on x86-64 and AArch64: `long double`, SSE vectors), programs expect the
/// same of `shmem_malloc`, and the runtime aligns an allocation to its element type. The cost
/// is up to 15 bytes at the end of an allocation that accesses may touch unchecked.
type MaxAligned = u128;

/// How many [`MaxAligned`] elements hold `bytes`.
fn units(bytes: usize) -> usize {
    bytes.div_ceil(std::mem::size_of::<MaxAligned>())
}

/// Whether the program speaks NVSHMEM: `nvshmem.h` binds the kernels' state
/// (`rshmemx_bind_device_state`) in `nvshmem_init`, before any allocation.
static SPEAKS_NVSHMEM: AtomicBool = AtomicBool::new(false);

/// Notes that the program is an NVSHMEM one, so that its objects are named by its calls.
pub(crate) fn note_nvshmem_program() {
    SPEAKS_NVSHMEM.store(true, Ordering::Relaxed);
}

/// Names the object `sym` that `call` made in the PE's reports of waits, as the program
/// knows it: "nvshmem_malloc'ed object #2 (4096 bytes)", numbered in allocation order.
fn name_object<T: rshmem::Element>(call: &str, pe: &Pe, sym: Sym<T>, bytes: usize) {
    let number = pe.objects_made.fetch_add(1, Ordering::Relaxed) + 1;
    let call = match call.strip_prefix("shmem_") {
        Some(rest) if SPEAKS_NVSHMEM.load(Ordering::Relaxed) => format!("nvshmem_{rest}"),
        _ => call.to_owned(),
    };
    pe.shmem
        .name_object(sym, format!("{call}'ed object #{number} ({bytes} bytes)"));
}

/// The allocation `made` by `call`, as a pointer for the program: null where the heap was
/// exhausted or the device would not back its growth (both fail on every PE at once), which
/// is said once per PE on standard error (how much was asked, how much the heap holds of its
/// limit, the variable that raises it), since a program that does not check for NULL crashes
/// later with no word of why.
fn pointer<T: rshmem::Element>(
    call: &str,
    pe: &Pe,
    bytes: usize,
    made: Result<Sym<T>, ShmemError>,
) -> Result<*mut c_void, CallError> {
    match made {
        Ok(sym) => {
            name_object(call, pe, sym, bytes);
            Ok(pe.ptr_of(sym).cast())
        }
        Err(err @ (ShmemError::HeapExhausted { .. } | ShmemError::HeapGrowth { .. })) => {
            crate::sim_host::note_failed_alloc(pe.shmem.my_pe(), call, &err);
            Ok(std::ptr::null_mut())
        }
        Err(err) => Err(err.into()),
    }
}

/// Allocates `size` bytes of symmetric memory on every PE (collective).
#[unsafe(no_mangle)]
pub extern "C" fn shmem_malloc(size: usize) -> *mut c_void {
    with_pe("shmem_malloc", |pe| {
        if size == 0 {
            return Ok(std::ptr::null_mut());
        }
        pointer(
            "shmem_malloc",
            pe,
            size,
            pe.shmem.malloc::<MaxAligned>(units(size)),
        )
    })
}

/// Allocates `count * size` zeroed bytes of symmetric memory on every PE (collective).
#[unsafe(no_mangle)]
pub extern "C" fn shmem_calloc(count: usize, size: usize) -> *mut c_void {
    with_pe("shmem_calloc", |pe| {
        let Some(bytes) = count.checked_mul(size) else {
            return Ok(std::ptr::null_mut());
        };
        if bytes == 0 {
            return Ok(std::ptr::null_mut());
        }
        pointer(
            "shmem_calloc",
            pe,
            bytes,
            pe.shmem.calloc::<MaxAligned>(units(bytes)),
        )
    })
}

/// Allocates `size` bytes aligned to `alignment` (a power of two) on every PE (collective).
///
/// The runtime aligns the allocation's offset in its heap, and the backend maps each heap at a
/// base aligned to its size (up to 1 GiB), so the address is aligned too; an alignment beyond
/// what the base gives is refused rather than returned misaligned.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_align(alignment: usize, size: usize) -> *mut c_void {
    with_pe("shmem_align", |pe| {
        if size == 0 {
            return Ok(std::ptr::null_mut());
        }
        let made = pointer(
            "shmem_align",
            pe,
            size,
            pe.shmem.align::<u8>(alignment as u64, size),
        )?;
        if made.align_offset(alignment) != 0 {
            return Err(CallError::Argument(format!(
                "alignment {alignment:#x} is more than the heap's base here is aligned to \
                 ({made:p}); ask for a smaller alignment or a larger SHMEM_SYMMETRIC_SIZE"
            )));
        }
        Ok(made)
    })
}

/// Allocates `size` bytes in the heap `hints` pick (`SHMEM_MALLOC_*`), collective. Hint bits
/// this library does not know are advice it cannot use: the call then behaves as
/// `shmem_malloc` (OpenSHMEM 1.5 section 9.3, shmem_malloc_with_hints).
#[unsafe(no_mangle)]
pub extern "C" fn shmem_malloc_with_hints(size: usize, hints: c_long) -> *mut c_void {
    with_pe("shmem_malloc_with_hints", |pe| {
        if size == 0 {
            return Ok(std::ptr::null_mut());
        }
        let hints = MallocHints::from_bits_ignoring_unknown(hints as u64);
        pointer(
            "shmem_malloc_with_hints",
            pe,
            size,
            pe.shmem.malloc_with_hints::<MaxAligned>(units(size), hints),
        )
    })
}

/// Resizes the allocation at `ptr` to `size` bytes, keeping its contents (collective);
/// a null `ptr` allocates, a `size` of 0 frees.
///
/// # Safety
/// `ptr` is null or a pointer this library's allocation calls returned and not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_realloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    if ptr.is_null() {
        return shmem_malloc(size);
    }
    with_pe("shmem_realloc", |pe| {
        let sym = pe.sym(ptr.cast::<MaxAligned>().cast_const(), 0)?;
        pe.shmem.forget_name(sym);
        if size == 0 {
            pe.shmem.free(sym)?;
            return Ok(std::ptr::null_mut());
        }
        pointer(
            "shmem_realloc",
            pe,
            size,
            pe.shmem.realloc(sym, units(size)),
        )
    })
}

/// Frees the allocation at `ptr` on every PE (collective); a null `ptr` does nothing.
///
/// # Safety
/// `ptr` is null or a pointer this library's allocation calls returned and not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shmem_free(ptr: *mut c_void) {
    if ptr.is_null() {
        return;
    }
    with_pe("shmem_free", |pe| {
        crate::registered::refuse_registered(pe, ptr)?;
        let sym = pe.sym(ptr.cast::<u8>().cast_const(), 0)?;
        pe.shmem.forget_name(sym);
        Ok(pe.shmem.free(sym)?)
    });
}

/// The address at which this process reaches PE `pe`'s part of the symmetric object at
/// `dest` with loads and stores, or null where it cannot (`shmem_ptr`): a PE that does not
/// exist cannot be reached, so it gets null as well ("Otherwise, a NULL address is returned",
/// OpenSHMEM 1.5 section 9.1, shmem_ptr). On the simulator a load/store peer's is a view
/// whose loads and stores are operations (`cuda_sim/peer_views.rs`).
#[unsafe(no_mangle)]
pub extern "C" fn shmem_ptr(dest: *const c_void, pe: c_int) -> *mut c_void {
    with_pe("shmem_ptr", |me| {
        crate::cuda_sim::peer_views::pointer(me, dest, pe, false)
    })
}

/// 1 if `addr` is a symmetric address that PE `pe` can be reached at, else 0.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_addr_accessible(addr: *const c_void, pe: c_int) -> c_int {
    with_pe("shmem_addr_accessible", |me| {
        let Ok(sym) = me.sym(addr.cast::<u8>(), 1) else {
            return Ok(0);
        };
        let Ok(pe) = u32::try_from(pe) else {
            return Ok(0);
        };
        Ok(c_int::from(me.shmem.addr_accessible(sym, pe)))
    })
}

/// Deprecated name of [`shmem_malloc`].
#[unsafe(no_mangle)]
pub extern "C" fn shmalloc(size: usize) -> *mut c_void {
    shmem_malloc(size)
}

/// Deprecated name of [`shmem_align`].
#[unsafe(no_mangle)]
pub extern "C" fn shmemalign(alignment: usize, size: usize) -> *mut c_void {
    shmem_align(alignment, size)
}

/// Deprecated name of [`shmem_realloc`].
///
/// # Safety
/// As [`shmem_realloc`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shrealloc(ptr: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: the caller keeps shmem_realloc's contract.
    unsafe { shmem_realloc(ptr, size) }
}

/// Deprecated name of [`shmem_free`].
///
/// # Safety
/// As [`shmem_free`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn shfree(ptr: *mut c_void) {
    // SAFETY: the caller keeps shmem_free's contract.
    unsafe { shmem_free(ptr) }
}
