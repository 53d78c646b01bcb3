//! The CUDA driver API's virtual-memory management (`cuMemCreate`, `cuMemAddressReserve`,
//! `cuMemMap`, `cuMemSetAccess` and their inverses), for programs built by `rshmem-nvcc`
//! (`driver.rs` the calls around it: `cuInit`, devices, errors).
//!
//! How memory aliases as on a GPU: an allocation is a memfd of its size; a reservation is a
//! `PROT_NONE` anonymous mapping; mapping an allocation puts the memfd `MAP_SHARED |
//! MAP_FIXED` over part of a reservation, so two mappings of one allocation are the same
//! pages, and `cuMemSetAccess` opens them (`mprotect`). Unmapping puts `PROT_NONE` anonymous
//! memory back, so the reservation stays whole until `cuMemAddressFree`.
//!
//! Like `cudaMalloc` memory, an allocation is PE-private: the simulator and the race detector
//! do not see its loads and stores, and a copy into or out of it is a plain copy, after
//! [`not_accessible`] checked that the range is mapped with access (`host_range.rs`).
//! `nvshmemx_buffer_register_symmetric` (`registered.rs`) maps an allocation into the
//! symmetric heap with [`allocation_at`] and [`alias`].
//!
//! Misuse returns the code CUDA returns and says once per PE and call what was wrong.

use std::collections::{BTreeMap, HashMap};
use std::ffi::{c_int, c_void};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Mutex, MutexGuard};

use crate::cuda_sim::driver::{
    CuResult, MemLocation, Refusal, check_device_location, driver_call, refuse, write_out,
};

/// The granularity of allocations, reservations and mappings: an H200's 2 MiB.
pub(crate) const GRANULARITY_BYTES: usize = 2 << 20;

/// `CU_MEM_ALLOCATION_TYPE_PINNED`.
const ALLOCATION_PINNED: c_int = 1;
/// `CU_MEM_HANDLE_TYPE_NONE` and `CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR`: the handle types
/// an allocation here can be asked for (a memfd is a POSIX file descriptor).
const HANDLE_TYPES_SUPPORTED: [c_int; 2] = [0, HANDLE_TYPE_POSIX_FD];
/// `CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR`.
const HANDLE_TYPE_POSIX_FD: c_int = 1;
/// `CU_MEM_ACCESS_FLAGS_PROT_{NONE,READ,READWRITE}`.
const ACCESS_NONE: c_int = 0;
const ACCESS_READ: c_int = 1;
const ACCESS_READWRITE: c_int = 3;

/// `CUmemAllocationProp` (the Win32 metadata pointer kept as an integer: it is never read).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct AllocationProp {
    kind: c_int,
    requested_handle_types: c_int,
    location: MemLocation,
    win32_handle_metadata: usize,
    compression_type: u8,
    gpu_direct_rdma_capable: u8,
    usage: u16,
    reserved: [u8; 4],
}

/// `CUmemAccessDesc`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct AccessDesc {
    location: MemLocation,
    flags: c_int,
}

/// An allocation: its pages, and what keeps it alive (handles not released, mappings).
struct Allocation {
    memfd: OwnedFd,
    bytes: usize,
    prop: AllocationProp,
    handle_refs: usize,
    mappings: usize,
}

/// A mapping of `bytes` of an allocation, from `offset` in it.
#[derive(Clone, Copy)]
struct Mapping {
    bytes: usize,
    handle: u64,
    offset: usize,
    access: c_int,
}

/// Every allocation, reservation (start → bytes) and mapping (start → mapping) of the process.
#[derive(Default)]
struct Vmm {
    last_handle: u64,
    allocations: HashMap<u64, Allocation>,
    reservations: BTreeMap<usize, usize>,
    mappings: BTreeMap<usize, Mapping>,
}

static VMM: Mutex<Option<Vmm>> = Mutex::new(None);

fn vmm() -> MutexGuard<'static, Option<Vmm>> {
    VMM.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// Runs `body` over the table, for the exported `call`, returning its code as an int.
fn with_vmm(call: &str, body: impl FnOnce(&mut Vmm) -> Result<(), Refusal>) -> c_int {
    driver_call(call, || body(vmm().get_or_insert_with(Vmm::default)))
}

/// Checks that `bytes` (named `what`) is a positive multiple of the granularity.
fn check_granular(what: &'static str, bytes: usize) -> Result<(), Refusal> {
    if bytes == 0 || !bytes.is_multiple_of(GRANULARITY_BYTES) {
        return Err(refuse(
            CuResult::InvalidValue,
            what,
            format!(
                "{what} {bytes:#x} is not a positive multiple of the granularity \
                 ({GRANULARITY_BYTES:#x} bytes, cuMemGetAllocationGranularity): round it up"
            ),
        ));
    }
    Ok(())
}

/// Checks an allocation's properties as `cuMemCreate` does.
fn check_prop(prop: *const AllocationProp) -> Result<AllocationProp, Refusal> {
    // SAFETY: the program passes a pointer to a CUmemAllocationProp, or null (refused).
    let Some(prop) = (unsafe { prop.as_ref() }).copied() else {
        return Err(refuse(CuResult::InvalidValue, "prop", "prop is null"));
    };
    if prop.kind != ALLOCATION_PINNED {
        return Err(refuse(
            CuResult::InvalidValue,
            "prop.type",
            format!(
                "prop.type {} is not CU_MEM_ALLOCATION_TYPE_PINNED, the one type there is",
                prop.kind
            ),
        ));
    }
    check_device_location("prop.location", prop.location)?;
    if !HANDLE_TYPES_SUPPORTED.contains(&prop.requested_handle_types) {
        return Err(refuse(
            CuResult::NotSupported,
            "prop.requestedHandleTypes",
            format!(
                "handle type {} is not supported on the simulator: ask for \
                 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR or CU_MEM_HANDLE_TYPE_NONE",
                prop.requested_handle_types
            ),
        ));
    }
    Ok(prop)
}

/// Maps `bytes` at `at` (page-aligned, or anywhere when 0) as `prot`, from `fd` at `offset`
/// shared, or anonymous memory when `fd` is `None`.
fn map(at: usize, bytes: usize, prot: c_int, fd: Option<c_int>, offset: usize) -> Option<usize> {
    let (flags, fd) = match fd {
        Some(fd) => (libc::MAP_SHARED, fd),
        None => (
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
        ),
    };
    let fixed = if at == 0 { 0 } else { libc::MAP_FIXED };
    // SAFETY: a new mapping; with MAP_FIXED it replaces pages of a range this module owns (a
    // reservation, or the heap range the caller of `alias` owns).
    let mapped = unsafe {
        libc::mmap(
            at as *mut c_void,
            bytes,
            prot,
            flags | fixed,
            fd,
            offset as libc::off_t,
        )
    };
    (mapped != libc::MAP_FAILED).then_some(mapped as usize)
}

/// Puts `PROT_NONE` anonymous memory over `bytes` at `at`, as a reservation not mapped.
fn unalias(at: usize, bytes: usize) -> bool {
    map(at, bytes, libc::PROT_NONE, None, 0).is_some()
}

/// Gives `bytes` of a heap at `at` that [`alias`] mapped a buffer over their own memory again:
/// zeroed, readable and writable, committed as written, as the heap's region was mapped.
pub(crate) fn give_back(at: usize, bytes: usize) -> bool {
    map(at, bytes, libc::PROT_READ | libc::PROT_WRITE, None, 0).is_some()
}

/// Maps `bytes` of the allocation `memfd` from `offset` at `at`, readable and writable.
pub(crate) fn alias(at: usize, bytes: usize, memfd: &OwnedFd, offset: usize) -> bool {
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    map(at, bytes, prot, Some(memfd.as_raw_fd()), offset).is_some()
}

impl Vmm {
    /// The reservation that holds `bytes` at `at` whole, if one does.
    fn reservation_holding(&self, at: usize, bytes: usize) -> Option<(usize, usize)> {
        let (&start, &len) = self.reservations.range(..=at).next_back()?;
        (at.checked_add(bytes)? <= start + len).then_some((start, len))
    }

    /// The mappings that overlap `bytes` at `at`.
    fn overlapping(&self, at: usize, bytes: usize) -> Vec<(usize, Mapping)> {
        let before = self
            .mappings
            .range(..at)
            .next_back()
            .filter(|(start, m)| *start + m.bytes > at);
        before
            .into_iter()
            .chain(self.mappings.range(at..at + bytes))
            .map(|(&start, &m)| (start, m))
            .collect()
    }

    /// Whether `bytes` at `at` are exactly covered by whole mappings, which are returned.
    fn whole_mappings(&self, at: usize, bytes: usize) -> Option<Vec<(usize, Mapping)>> {
        let found = self.overlapping(at, bytes);
        let mut next = at;
        for (start, m) in &found {
            if *start != next {
                return None;
            }
            next += m.bytes;
        }
        (next == at + bytes).then_some(found)
    }

    /// Drops the allocation `handle` once nothing keeps it.
    fn drop_if_unused(&mut self, handle: u64) {
        if self
            .allocations
            .get(&handle)
            .is_some_and(|a| a.handle_refs == 0 && a.mappings == 0)
        {
            self.allocations.remove(&handle);
        }
    }

    fn allocation(&mut self, what: &'static str, handle: u64) -> Result<&mut Allocation, Refusal> {
        self.allocations.get_mut(&handle).ok_or_else(|| {
            refuse(
                CuResult::InvalidValue,
                what,
                format!(
                    "handle {handle:#x} is no allocation of cuMemCreate that is still held (released already?)"
                ),
            )
        })
    }
}

/// Why `bytes` at `addr`, which a copy is given, are not accessible memory of a mapping, if
/// they are in a reservation and are not; `None` for memory outside every reservation.
pub(crate) fn not_accessible(addr: usize, bytes: usize) -> Option<String> {
    let table = vmm();
    let vmm = table.as_ref()?;
    let end = addr.checked_add(bytes)?;
    let reserved = vmm
        .reservations
        .range(..end)
        .next_back()
        .is_some_and(|(start, len)| start + len > addr);
    if !reserved {
        return None;
    }
    let mut next = addr;
    for (start, m) in vmm.overlapping(addr, bytes) {
        if start > next || m.access == ACCESS_NONE {
            break;
        }
        next = start + m.bytes;
    }
    (next < end).then(|| {
        format!(
            "{bytes} bytes at {addr:#x} are reserved address space that is not all mapped \
             with access (cuMemMap, then cuMemSetAccess)"
        )
    })
}

/// The allocation mapped over `bytes` at `addr` (one mapping), as a duplicate of its memfd and
/// the offset in it, for `nvshmemx_buffer_register_symmetric`.
pub(crate) fn allocation_at(addr: usize, bytes: usize) -> Result<(OwnedFd, usize), String> {
    let table = vmm();
    let not_one = || {
        format!(
            "{bytes} bytes at {addr:#x} are not memory of one cuMemMap mapping: register a \
             buffer of cuMemCreate, mapped with cuMemMap"
        )
    };
    let vmm = table.as_ref().ok_or_else(not_one)?;
    let found = vmm.overlapping(addr, bytes.max(1));
    let [(start, mapping)] = found.as_slice() else {
        return Err(not_one());
    };
    // The rules of the CUDA backend on GPUs (hw/src/cuda/program_buffer.rs), so that a program
    // the simulator accepts registers on GPUs too.
    if *start != addr {
        return Err(format!(
            "{addr:#x} lies inside the mapping at {start:#x}: register the address where the \
             allocation is mapped"
        ));
    }
    if bytes > mapping.bytes {
        return Err(format!(
            "{bytes} bytes at {addr:#x} run past its mapping ({} bytes): a registered buffer is \
             one cuMemCreate allocation",
            mapping.bytes
        ));
    }
    let allocation = &vmm.allocations[&mapping.handle];
    if allocation.prop.requested_handle_types & HANDLE_TYPE_POSIX_FD == 0 {
        return Err(
            "it was created without CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR in \
             requestedHandleTypes, so on GPUs the other PEs' processes could not map it; set it \
             in the CUmemAllocationProp passed to cuMemCreate"
                .to_owned(),
        );
    }
    let memfd = allocation
        .memfd
        .try_clone()
        .map_err(|err| format!("cannot duplicate the allocation's memfd: {err}"))?;
    Ok((memfd, mapping.offset))
}

/// `cuMemGetAllocationGranularity`: 2 MiB, minimum and recommended alike.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cuMemGetAllocationGranularity(
    granularity: *mut usize,
    prop: *const AllocationProp,
    option: c_int,
) -> c_int {
    with_vmm("cuMemGetAllocationGranularity", |_| {
        check_prop(prop)?;
        if !(0..=1).contains(&option) {
            return Err(refuse(
                CuResult::InvalidValue,
                "option",
                format!("option {option} is not CU_MEM_ALLOC_GRANULARITY_MINIMUM or _RECOMMENDED"),
            ));
        }
        write_out(granularity, "granularity", GRANULARITY_BYTES)
    })
}

/// `cuMemCreate`: a memfd of `bytes`, zeroed.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cuMemCreate(
    handle: *mut u64,
    bytes: usize,
    prop: *const AllocationProp,
    flags: u64,
) -> c_int {
    with_vmm("cuMemCreate", |vmm| {
        let prop = check_prop(prop)?;
        check_granular("size", bytes)?;
        if flags != 0 {
            return Err(refuse(CuResult::InvalidValue, "flags", "flags must be 0"));
        }
        if handle.is_null() {
            return Err(refuse(CuResult::InvalidValue, "handle", "handle is null"));
        }
        // SAFETY: memfd_create takes a NUL-terminated name and flags.
        let fd = unsafe { libc::memfd_create(c"rshmem-cumem".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            let err = std::io::Error::last_os_error();
            return Err(refuse(
                CuResult::OutOfMemory,
                "size",
                format!("memfd_create: {err}"),
            ));
        }
        // SAFETY: a new descriptor that nothing else owns.
        let memfd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: ftruncate on the descriptor just made.
        if unsafe { libc::ftruncate(memfd.as_raw_fd(), bytes as libc::off_t) } != 0 {
            let err = std::io::Error::last_os_error();
            return Err(refuse(
                CuResult::OutOfMemory,
                "size",
                format!("cannot size an allocation of {bytes} bytes: {err}"),
            ));
        }
        vmm.last_handle += 1;
        let allocation = Allocation {
            memfd,
            bytes,
            prop,
            handle_refs: 1,
            mappings: 0,
        };
        vmm.allocations.insert(vmm.last_handle, allocation);
        write_out(handle, "handle", vmm.last_handle)
    })
}

/// `cuMemRelease`: the allocation goes once it is unmapped too.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cuMemRelease(handle: u64) -> c_int {
    with_vmm("cuMemRelease", |vmm| {
        let allocation = vmm.allocation("handle", handle)?;
        if allocation.handle_refs == 0 {
            return Err(refuse(
                CuResult::InvalidValue,
                "handle",
                format!(
                    "handle {handle:#x} was released already (each cuMemCreate and \
                     cuMemRetainAllocationHandle is released once)"
                ),
            ));
        }
        allocation.handle_refs -= 1;
        vmm.drop_if_unused(handle);
        Ok(())
    })
}

/// `cuMemRetainAllocationHandle`: the handle of the allocation mapped at `addr`, held once more.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cuMemRetainAllocationHandle(handle: *mut u64, addr: *mut c_void) -> c_int {
    with_vmm("cuMemRetainAllocationHandle", |vmm| {
        let Some((_, mapping)) = vmm.overlapping(addr as usize, 1).pop() else {
            return Err(refuse(
                CuResult::InvalidValue,
                "addr",
                format!("{addr:p} is not in a mapping of cuMemMap"),
            ));
        };
        write_out(handle, "handle", mapping.handle)?;
        vmm.allocation("addr", mapping.handle)?.handle_refs += 1;
        Ok(())
    })
}

/// `cuMemGetAllocationPropertiesFromHandle`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cuMemGetAllocationPropertiesFromHandle(
    prop: *mut AllocationProp,
    handle: u64,
) -> c_int {
    with_vmm("cuMemGetAllocationPropertiesFromHandle", |vmm| {
        let found = vmm.allocation("handle", handle)?.prop;
        write_out(prop, "prop", found)
    })
}

/// `cuMemAddressReserve`: `bytes` of `PROT_NONE` address space aligned to `alignment` (the
/// granularity when 0); the address hint is taken as a hint, as CUDA does.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cuMemAddressReserve(
    out: *mut u64,
    bytes: usize,
    alignment: usize,
    _hint: u64,
    flags: u64,
) -> c_int {
    with_vmm("cuMemAddressReserve", |vmm| {
        check_granular("size", bytes)?;
        let alignment = if alignment == 0 {
            GRANULARITY_BYTES
        } else {
            alignment
        };
        if !alignment.is_power_of_two() || flags != 0 {
            return Err(refuse(
                CuResult::InvalidValue,
                "alignment",
                format!("alignment {alignment:#x} is not a power of two, or flags {flags} not 0"),
            ));
        }
        let padded = bytes.checked_add(alignment).ok_or_else(|| {
            refuse(
                CuResult::OutOfMemory,
                "size",
                format!("{bytes} bytes do not fit"),
            )
        })?;
        let Some(at) = map(0, padded, libc::PROT_NONE, None, 0) else {
            let err = std::io::Error::last_os_error();
            return Err(refuse(
                CuResult::OutOfMemory,
                "size",
                format!("{bytes} bytes: {err}"),
            ));
        };
        let start = at.next_multiple_of(alignment);
        // SAFETY: the parts of the padded mapping just made before and after the aligned range.
        unsafe {
            libc::munmap(at as *mut c_void, start - at);
            libc::munmap((start + bytes) as *mut c_void, at + padded - start - bytes);
        }
        vmm.reservations.insert(start, bytes);
        write_out(out, "ptr", start as u64)
    })
}

/// `cuMemAddressFree`: a whole reservation, with nothing mapped in it.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cuMemAddressFree(at: u64, bytes: usize) -> c_int {
    with_vmm("cuMemAddressFree", |vmm| {
        let at = at as usize;
        if vmm.reservations.get(&at) != Some(&bytes) {
            return Err(refuse(
                CuResult::InvalidValue,
                "ptr",
                format!("{bytes} bytes at {at:#x} are not a reservation of cuMemAddressReserve"),
            ));
        }
        if !vmm.overlapping(at, bytes).is_empty() {
            return Err(refuse(
                CuResult::InvalidValue,
                "ptr",
                format!("the reservation at {at:#x} still has mappings: cuMemUnmap them first"),
            ));
        }
        vmm.reservations.remove(&at);
        // SAFETY: the whole reservation, which this module mapped and nothing maps now.
        unsafe { libc::munmap(at as *mut c_void, bytes) };
        Ok(())
    })
}

/// `cuMemMap`: `bytes` of the allocation from `offset`, at `at` in a reservation, with no
/// access until `cuMemSetAccess`.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cuMemMap(
    at: u64,
    bytes: usize,
    offset: usize,
    handle: u64,
    flags: u64,
) -> c_int {
    with_vmm("cuMemMap", |vmm| {
        let at = at as usize;
        check_granular("size", bytes)?;
        if flags != 0
            || !offset.is_multiple_of(GRANULARITY_BYTES)
            || !at.is_multiple_of(GRANULARITY_BYTES)
        {
            return Err(refuse(
                CuResult::InvalidValue,
                "ptr",
                format!(
                    "ptr {at:#x} and offset {offset:#x} must be multiples of the granularity, flags 0"
                ),
            ));
        }
        if vmm.reservation_holding(at, bytes).is_none() {
            return Err(refuse(
                CuResult::InvalidValue,
                "ptr",
                format!(
                    "{bytes} bytes at {at:#x} are not inside one reservation of cuMemAddressReserve"
                ),
            ));
        }
        if let Some((start, _)) = vmm.overlapping(at, bytes).first() {
            return Err(refuse(
                CuResult::InvalidValue,
                "ptr",
                format!(
                    "{bytes} bytes at {at:#x} overlap the mapping at {start:#x}: cuMemUnmap it first"
                ),
            ));
        }
        let allocation = vmm.allocation("handle", handle)?;
        if offset
            .checked_add(bytes)
            .is_none_or(|end| end > allocation.bytes)
        {
            return Err(refuse(
                CuResult::InvalidValue,
                "size",
                format!(
                    "{bytes} bytes from offset {offset:#x} run past the allocation's {} bytes",
                    allocation.bytes
                ),
            ));
        }
        let fd = allocation.memfd.as_raw_fd();
        if map(at, bytes, libc::PROT_NONE, Some(fd), offset).is_none() {
            let err = std::io::Error::last_os_error();
            return Err(refuse(CuResult::OutOfMemory, "ptr", format!("mmap: {err}")));
        }
        allocation.mappings += 1;
        let mapping = Mapping {
            bytes,
            handle,
            offset,
            access: ACCESS_NONE,
        };
        vmm.mappings.insert(at, mapping);
        Ok(())
    })
}

/// `cuMemUnmap`: whole mappings that cover the range exactly.
#[unsafe(no_mangle)]
pub extern "C" fn __rsim_cuMemUnmap(at: u64, bytes: usize) -> c_int {
    with_vmm("cuMemUnmap", |vmm| {
        let at = at as usize;
        // A GPU's driver (measured on an H200) unmaps a reserved range that holds no mapping
        // without complaint, so a second cuMemUnmap of one range succeeds there too.
        if vmm.overlapping(at, bytes).is_empty() && vmm.reservation_holding(at, bytes).is_some() {
            return Ok(());
        }
        let Some(found) = vmm.whole_mappings(at, bytes).filter(|f| !f.is_empty()) else {
            return Err(refuse(
                CuResult::InvalidValue,
                "ptr",
                format!(
                    "{bytes} bytes at {at:#x} are not whole mappings of cuMemMap (not mapped, or only part of one)"
                ),
            ));
        };
        unalias(at, bytes);
        for (start, mapping) in found {
            vmm.mappings.remove(&start);
            if let Some(allocation) = vmm.allocations.get_mut(&mapping.handle) {
                allocation.mappings -= 1;
            }
            vmm.drop_if_unused(mapping.handle);
        }
        Ok(())
    })
}

/// `cuMemSetAccess`: the access of the device to mapped memory (the last descriptor that names
/// a device counts; every one names the PE's GPU).
///
/// # Safety
/// `desc` points to `count` descriptors.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __rsim_cuMemSetAccess(
    at: u64,
    bytes: usize,
    desc: *const AccessDesc,
    count: usize,
) -> c_int {
    with_vmm("cuMemSetAccess", |vmm| {
        let at = at as usize;
        if desc.is_null() || count == 0 {
            return Err(refuse(
                CuResult::InvalidValue,
                "desc",
                "no access descriptor",
            ));
        }
        // SAFETY: the caller's contract.
        let descs = unsafe { std::slice::from_raw_parts(desc, count) };
        let mut access = ACCESS_NONE;
        for desc in descs {
            check_device_location("desc.location", desc.location)?;
            if ![ACCESS_NONE, ACCESS_READ, ACCESS_READWRITE].contains(&desc.flags) {
                return Err(refuse(
                    CuResult::InvalidValue,
                    "desc.flags",
                    format!(
                        "flags {} is not a CU_MEM_ACCESS_FLAGS_PROT_* value",
                        desc.flags
                    ),
                ));
            }
            access = desc.flags;
        }
        let Some(found) = vmm.whole_mappings(at, bytes).filter(|f| !f.is_empty()) else {
            return Err(refuse(
                CuResult::InvalidValue,
                "ptr",
                format!("{bytes} bytes at {at:#x} are not whole mappings of cuMemMap"),
            ));
        };
        let prot = match access {
            ACCESS_READ => libc::PROT_READ,
            ACCESS_READWRITE => libc::PROT_READ | libc::PROT_WRITE,
            _ => libc::PROT_NONE,
        };
        // SAFETY: mappings this module made.
        unsafe { libc::mprotect(at as *mut c_void, bytes, prot) };
        for (start, _) in found {
            if let Some(mapping) = vmm.mappings.get_mut(&start) {
                mapping.access = access;
            }
        }
        Ok(())
    })
}
