//! A program's own buffers made symmetric memory (NVSHMEM's
//! `nvshmemx_buffer_register_symmetric`): the range of the device heap each takes, and the
//! calls that put the buffer's memory there and take it back.
//!
//! Why the range sits where the heap's backing ends: on a GPU the heap is address space into
//! which memory is mapped piece by piece, and a piece cannot be split, so a buffer can only
//! take address space that no piece covers yet. Every PE's heap is backed alike, so the range
//! is the same on every PE. Unregistering the highest registered buffer gives its range back
//! to the heap; one below later growth leaves its range without memory, never handed out
//! again (`Heap::retire`).
//!
//! Who maps the buffer there: the backend, from the buffer's address
//! ([`hw::Device::attach_buffer`]: the CUDA backend, with the real driver), or the caller,
//! given the address of this PE's part of the range (the C API's emulated driver on the
//! simulator, whose buffers are its own memfds). A caller can map over any range of memory it
//! owns, so its buffer takes an aligned allocation of the default heap instead, freed on
//! unregistration. Either way the PEs learn together whether every one succeeded, and all
//! fail alike if one did not.

use hw::{Backend, Device, MemKind};

use crate::TRACING_TARGET;
use crate::error::ShmemError;
use crate::memory::call_agreement::MemCall;
use crate::memory::heaps::{Registered, default_setting};
use crate::memory::space;
use crate::memory::sym::{Sym, SymAddr};
use crate::shmem::Shmem;

/// Maps or unmaps this PE's buffer at a range of the device heap, given the range's offset in
/// the heap's segment and its address in this process.
type MapHere<'a> = &'a mut dyn FnMut(u64, u64) -> Result<(), String>;

impl<B: Backend> Shmem<B> {
    /// Makes `len_bytes` of this PE's memory at `buffer_addr` (memory the program allocated
    /// itself; which memory qualifies is the backend's to say, [`hw::Device::attach_buffer`])
    /// a symmetric array of the device heap, and returns it: a store through either address is
    /// seen through the other, and every RMA, collective and `ptr` reaches the buffer as it
    /// reaches allocated memory.
    ///
    /// Collective: every PE must call it with the same `len_bytes`, each with its own buffer.
    ///
    /// # Errors
    /// [`ShmemError::CollectiveMismatch`] on every PE if the sizes differ;
    /// [`ShmemError::BufferRegistration`] on every PE if the run has no device heap, the
    /// backend cannot take buffers, or a PE's buffer does not qualify (its own error says
    /// why); [`ShmemError::HeapExhausted`] if the heap's remaining room is too small.
    pub fn register_buffer(&self, buffer_addr: u64, len_bytes: u64) -> Result<Sym<u8>, ShmemError> {
        self.register_range(len_bytes, None, &mut |offset_bytes, _| {
            self.device
                .attach_buffer(
                    MemKind::Device,
                    offset_bytes,
                    buffer_addr,
                    len_bytes,
                    self.deadline(),
                )
                .map_err(|e| e.to_string())
        })
    }

    /// As [`Shmem::register_buffer`], for memory the caller maps itself over an allocation of
    /// the default heap aligned to `align_bytes`: `map_here` gets the address in this process
    /// of this PE's part of it and puts the buffer's pages there; `unmap_here` gives the range
    /// its own memory back, should another PE's `map_here` fail.
    ///
    /// # Errors
    /// As [`Shmem::register_buffer`], but for the heap's room; [`ShmemError::HeapExhausted`]
    /// if the default heap has no such room; a PE whose `map_here` failed says why.
    pub fn register_buffer_with(
        &self,
        len_bytes: u64,
        align_bytes: u64,
        mut map_here: impl FnMut(u64) -> Result<(), String>,
        mut unmap_here: impl FnMut(u64) -> Result<(), String>,
    ) -> Result<Sym<u8>, ShmemError> {
        self.register_range(len_bytes, Some(align_bytes), &mut |_, local| {
            let mapped = map_here(local);
            let all = self
                .device
                .exchange(&[u8::from(mapped.is_ok())], self.deadline())
                .map_err(|e| format!("agreeing on the buffers: {e}"))?;
            mapped?;
            match all.iter().position(|ok| ok.as_slice() != [1]) {
                Some(refused) => {
                    unmap_here(local)?;
                    Err(format!(
                        "PE {refused}'s buffer was refused (its own error says why)"
                    ))
                }
                None => Ok(()),
            }
        })
    }

    /// Gives back the buffer that [`Shmem::register_buffer`] returned as `sym`, `len_bytes`
    /// long: afterwards no PE reaches it through the heap, and it is the program's alone.
    /// Every PE's operations on it must be complete (the barrier this begins with completes
    /// them).
    ///
    /// Collective: every PE must give back the same registration.
    ///
    /// # Errors
    /// [`ShmemError::CollectiveMismatch`] on every PE if the arguments differ; the errors of
    /// [`Shmem::free`] for `sym`; [`ShmemError::BufferRegistration`] if `sym` is not a
    /// registered buffer of `len_bytes`.
    pub fn unregister_buffer(&self, sym: Sym<u8>, len_bytes: u64) -> Result<(), ShmemError> {
        self.unregister_range(sym, len_bytes, true, &mut |offset_bytes, _| {
            self.device
                .detach_buffer(MemKind::Device, offset_bytes, len_bytes)
                .map_err(|e| e.to_string())
        })
    }

    /// As [`Shmem::unregister_buffer`] for a buffer [`Shmem::register_buffer_with`] mapped:
    /// `unmap_here` gets the address in this process of this PE's part of the range.
    ///
    /// # Errors
    /// As [`Shmem::unregister_buffer`].
    pub fn unregister_buffer_with(
        &self,
        sym: Sym<u8>,
        len_bytes: u64,
        mut unmap_here: impl FnMut(u64) -> Result<(), String>,
    ) -> Result<(), ShmemError> {
        self.unregister_range(sym, len_bytes, false, &mut |_, local| unmap_here(local))
    }

    /// Agrees on `len_bytes`, takes the range (where the device heap's backing ends, or with
    /// `aligned` an allocation of the default heap so aligned), and has `map` put the buffer
    /// there (collectively: every PE's `map` fails if one does).
    fn register_range(
        &self,
        len_bytes: u64,
        aligned: Option<u64>,
        map: MapHere<'_>,
    ) -> Result<Sym<u8>, ShmemError> {
        self.agree(MemCall::RegisterBuffer { len_bytes })?;
        let refused = |reason: String| ShmemError::BufferRegistration { len_bytes, reason };
        let count = usize::try_from(len_bytes).map_err(|_| refused("too large".into()))?;
        let allocation = match aligned {
            Some(align) => {
                let kind = self.default_heap_kind();
                self.alloc_backed(kind, len_bytes, align, || default_setting(kind))?
            }
            None => {
                if self.heaps.borrow().find(MemKind::Device).is_none() {
                    return Err(refused(
                        "the run has no device heap to take it into \
                         (SHMEM_DEVICE_SYMMETRIC_SIZE is 0); buffers are registered on GPUs \
                         (oshrun --gpu) and on the simulator (oshrun --sim)"
                            .into(),
                    ));
                }
                self.back_heap(MemKind::Device)?;
                let mut heaps = self.heaps.borrow_mut();
                let heap = heaps.find_mut(MemKind::Device).expect("checked above");
                let start = space::base_of(MemKind::Device) + heap.backed_bytes();
                heap.alloc_at(start, len_bytes)?
            }
        };
        let (kind, offset_bytes) = space::locate(allocation.offset);
        let local = self.local_addr(SymAddr(allocation.offset)).unwrap_or(0);
        let mapped = map(offset_bytes, local);
        let mut heaps = self.heaps.borrow_mut();
        let heap = heaps.holding_mut(allocation.offset)?;
        if let Err(reason) = mapped {
            // Every PE was refused alike (the mapping fails on all together), so all free alike.
            heap.free(allocation.offset, Some(allocation.id))?;
            return Err(refused(reason));
        }
        if aligned.is_none() {
            heap.set_backed_bytes(offset_bytes + len_bytes);
        }
        let registered = Registered {
            len_bytes,
            by_backend: aligned.is_none(),
        };
        heaps.set_buffer(allocation.offset, Some(registered));
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, ?kind, offset = allocation.offset, bytes = len_bytes, "register buffer");
        Ok(Sym::new(allocation.offset, count, Some(allocation.id)))
    }

    /// Agrees on the registration to give back, waits for every PE in a barrier, has `unmap`
    /// take the buffer out, and gives the range back (or retires it, below later growth).
    fn unregister_range(
        &self,
        sym: Sym<u8>,
        len_bytes: u64,
        by_backend: bool,
        unmap: MapHere<'_>,
    ) -> Result<(), ShmemError> {
        let access = sym.access();
        self.agree(MemCall::UnregisterBuffer {
            offset: access.offset,
            len_bytes,
        })?;
        let refused = |reason: String| ShmemError::BufferRegistration { len_bytes, reason };
        let wanted = Registered {
            len_bytes,
            by_backend,
        };
        if self.heaps.borrow().buffer_at(access.offset) != Some(wanted) {
            let counterpart = match by_backend {
                true => "register_buffer",
                false => "register_buffer_with",
            };
            return Err(refused(format!(
                "{:#x} is not the address of a buffer of that length that {counterpart} \
                 registered as symmetric memory",
                access.offset
            )));
        }
        // Why a barrier: no PE may still reach the buffer through the heap once it goes.
        self.barrier_all()?;
        let offset_bytes = space::locate(access.offset).1;
        let local = self.local_addr(SymAddr(access.offset)).unwrap_or(0);
        unmap(offset_bytes, local).map_err(refused)?;
        let mut heaps = self.heaps.borrow_mut();
        heaps.set_buffer(access.offset, None);
        let heap = heaps.holding_mut(access.offset)?;
        if !by_backend {
            heap.free(access.offset, access.owner)?;
        } else if offset_bytes + len_bytes == heap.backed_bytes() {
            heap.free(access.offset, access.owner)?;
            heap.set_backed_bytes(offset_bytes);
        } else {
            heap.retire(access.offset, access.owner)?;
        }
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, offset = access.offset, bytes = len_bytes, "unregister buffer");
        Ok(())
    }
}
