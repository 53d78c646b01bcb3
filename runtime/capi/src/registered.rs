//! NVSHMEM's registration of a program's buffer as symmetric memory
//! (`nvshmemx_buffer_register_symmetric`, `nvshmemx_buffer_unregister_symmetric`, the inline
//! wrappers of `nvshmem.h`), collective over the world.
//!
//! The design: the runtime takes a range of the device heap where its backing ends, at the
//! same offset on every PE (`Shmem::register_buffer`, `runtime/src/memory/buffers.rs`), and
//! the buffer's pages become the PE's part of that range, so every RMA, collective and
//! `nvshmem_ptr` reaches the buffer as it reaches `nvshmem_malloc` memory, and a store through
//! either address is seen through the other. Every PE learns whether every PE's buffer
//! qualified, and all fail alike if one did not.
//!
//! On GPUs the CUDA backend maps the buffer's allocation of the real driver there
//! (`hw::Device::attach_buffer`). On the simulator a PE's heap is a region of this process at
//! a stable address and the buffer is an allocation of the emulated driver API
//! (`cuda_sim/driver_vmm.rs`), a memfd: this file maps its pages over the range
//! (`MAP_SHARED | MAP_FIXED`, `Shmem::register_buffer_with`), and gives the range anonymous
//! memory back on unregistration. PEs as processes without GPUs have no device heap, and the
//! call fails there, on every PE alike, saying so.

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

use rshmem::Sym;

use crate::cuda_sim::driver_vmm::{self, GRANULARITY_BYTES};
use crate::cuda_sim::runtime_api::say_once;
use crate::fail::CallError;
use crate::state::{Pe, with_pe};

const REGISTER: &str = "nvshmemx_buffer_register_symmetric";
const UNREGISTER: &str = "nvshmemx_buffer_unregister_symmetric";

/// The ranges registered, by PE and address: their sizes.
static REGISTERED: Mutex<Option<HashMap<(u32, usize), usize>>> = Mutex::new(None);

fn with_registered<R>(body: impl FnOnce(&mut HashMap<(u32, usize), usize>) -> R) -> R {
    let mut table = REGISTERED
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    body(table.get_or_insert_with(HashMap::new))
}

/// Refuses to free the range at `at` while a buffer is registered there: freed, it would be
/// handed to another allocation with the buffer's pages still in it.
pub(crate) fn refuse_registered(pe: &Pe, at: *mut c_void) -> Result<(), CallError> {
    let key = (pe.shmem.my_pe(), at as usize);
    if with_registered(|table| table.contains_key(&key)) {
        return Err(CallError::Argument(format!(
            "{at:p} is a buffer registered by {REGISTER}: give it back with {UNREGISTER}, \
             not nvshmem_free"
        )));
    }
    Ok(())
}

/// Registers `bytes` of the buffer at `buffer` on this PE, or says why not.
fn register(
    pe: &Pe,
    buffer: *mut c_void,
    bytes: usize,
    flags: c_int,
) -> Result<*mut c_void, String> {
    if flags != 0 {
        return Err(format!("flags {flags} must be 0"));
    }
    if !crate::state::simulated() {
        let sym = pe
            .shmem
            .register_buffer(buffer as u64, bytes as u64)
            .map_err(|err| err.to_string())?;
        return Ok(remember(pe, sym, buffer, bytes));
    }
    // Checked before the collective part, which then fails on every PE alike if this one's
    // buffer does not qualify.
    let memory = if bytes == 0 || !bytes.is_multiple_of(GRANULARITY_BYTES) {
        Err(format!(
            "size {bytes:#x} is not a positive multiple of the granularity ({GRANULARITY_BYTES:#x} \
             bytes, cuMemGetAllocationGranularity)"
        ))
    } else {
        driver_vmm::allocation_at(buffer as usize, bytes)
    };
    let sym = pe
        .shmem
        .register_buffer_with(
            bytes as u64,
            GRANULARITY_BYTES as u64,
            |at| {
                let (memfd, offset) = memory.as_ref().map_err(Clone::clone)?;
                if driver_vmm::alias(at as usize, bytes, memfd, *offset) {
                    Ok(())
                } else {
                    let err = std::io::Error::last_os_error();
                    Err(format!(
                        "cannot map the buffer over the heap at {at:#x}: {err}"
                    ))
                }
            },
            |at| give_back(at, bytes),
        )
        .map_err(|err| err.to_string())?;
    Ok(remember(pe, sym, buffer, bytes))
}

/// Gives the heap's range at `at` its own memory back, on the simulator.
fn give_back(at: u64, bytes: usize) -> Result<(), String> {
    if driver_vmm::give_back(at as usize, bytes) {
        Ok(())
    } else {
        let err = std::io::Error::last_os_error();
        Err(format!("cannot unmap the buffer at {at:#x}: {err}"))
    }
}

/// Names the registered range `sym` after the program's `buffer` and records it for
/// unregistration; returns its address.
fn remember(pe: &Pe, sym: Sym<u8>, buffer: *mut c_void, bytes: usize) -> *mut c_void {
    let at = pe.ptr_of(sym);
    pe.shmem.name_object(
        sym,
        format!("{REGISTER}'ed buffer at {buffer:p} ({bytes} bytes)"),
    );
    with_registered(|table| table.insert((pe.shmem.my_pe(), at as usize), bytes));
    at.cast()
}

/// `nvshmemx_buffer_register_symmetric` (and `_at_preferred_address`, whose address is a hint
/// this library does not take): the symmetric address of the buffer, or null after saying why.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemx_buffer_register_symmetric(
    buffer: *mut c_void,
    bytes: usize,
    flags: c_int,
) -> *mut c_void {
    with_pe(REGISTER, |pe| {
        Ok(register(pe, buffer, bytes, flags).unwrap_or_else(|why| {
            say_once(REGISTER, "buf_ptr", &why);
            std::ptr::null_mut()
        }))
    })
}

/// `nvshmemx_buffer_unregister_symmetric`: 0, or 1 after saying why the range at `at` is not
/// one `nvshmemx_buffer_register_symmetric` returned.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemx_buffer_unregister_symmetric(at: *mut c_void, bytes: usize) -> c_int {
    with_pe(UNREGISTER, |pe| {
        let key = (pe.shmem.my_pe(), at as usize);
        let Some(registered) = with_registered(|table| table.get(&key).copied()) else {
            let why = format!(
                "{at:p} is not an address {REGISTER} returned and that is still registered"
            );
            say_once(UNREGISTER, "mmap_ptr", &why);
            return Ok(1);
        };
        if registered != bytes {
            let why = format!("size {bytes} is not the {registered} bytes registered at {at:p}");
            say_once(UNREGISTER, "size", &why);
            return Ok(1);
        }
        let sym = pe.sym(at.cast::<u8>().cast_const(), 0)?;
        let given_back = if crate::state::simulated() {
            pe.shmem
                .unregister_buffer_with(sym, bytes as u64, |at| give_back(at, bytes))
        } else {
            pe.shmem.unregister_buffer(sym, bytes as u64)
        };
        if let Err(err) = given_back {
            say_once(UNREGISTER, "mmap_ptr", &err.to_string());
            return Ok(1);
        }
        with_registered(|table| table.remove(&key));
        pe.shmem.forget_name(sym);
        Ok(0)
    })
}
