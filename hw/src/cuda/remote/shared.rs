//! Pinned host memory that another party writes while this process reads it: peers through
//! the provider (the mailbox), or this PE's GPU (the kernels' channel). Its words are read and
//! written as atomics; a byte range is copied once a word published it.

use std::sync::atomic::AtomicU64;

use crate::cuda::driver::Gpu;
use crate::cuda::memory::Pinned;

#[derive(Debug)]
pub(super) struct SharedPinned {
    memory: Pinned,
}

// SAFETY: the memory is plain pinned memory, and its `Pinned` is `Send`; it is touched only
// through atomics of its words and copies of ranges that a word published, which the other
// party leaves alone until told, as each protocol using it says.
unsafe impl Sync for SharedPinned {}

impl SharedPinned {
    /// `len` zeroed bytes on `gpu`'s context; `what` names them in the error.
    pub(super) fn zeroed(gpu: &Gpu, len: usize, what: &str) -> Result<SharedPinned, String> {
        let memory =
            Pinned::new(&gpu.ctx, len).map_err(|e| format!("{what} (pinned memory): {e}"))?;
        // SAFETY: fresh memory of that length, not yet shared with anyone.
        unsafe { std::ptr::write_bytes(memory.addr() as *mut u8, 0, len) };
        Ok(SharedPinned { memory })
    }

    /// The word at `offset`.
    pub(super) fn word(&self, offset: usize) -> &AtomicU64 {
        assert!(offset.is_multiple_of(8) && offset + 8 <= self.memory.len());
        // SAFETY: an aligned word inside the allocation, which lives as long as `self`; every
        // access to it is atomic (the provider's writes are peers' atomics, the GPU's are
        // single-copy atomic 64-bit stores).
        unsafe { &*((self.memory.addr() as usize + offset) as *const AtomicU64) }
    }

    /// `len` bytes at `offset`, copied out (after the word that published them).
    pub(super) fn read(&self, offset: usize, len: usize) -> Vec<u8> {
        assert!(offset + len <= self.memory.len());
        let mut out = vec![0u8; len];
        // SAFETY: inside the allocation; the writer published these bytes before the word
        // read with Acquire before this, and leaves them alone until it is told.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (self.memory.addr() as usize + offset) as *const u8,
                out.as_mut_ptr(),
                len,
            );
        }
        out
    }

    /// Writes `bytes` at `offset`, for the other party to read after a word says so.
    pub(super) fn write(&self, offset: usize, bytes: &[u8]) {
        assert!(offset + bytes.len() <= self.memory.len());
        // SAFETY: inside the allocation; the other party reads the range only after a later
        // word tells it to, and writes it only after this process released it.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                (self.memory.addr() as usize + offset) as *mut u8,
                bytes.len(),
            );
        }
    }

    /// The address of the byte at `offset`, on the host and on the GPUs.
    pub(super) fn addr(&self, offset: usize) -> u64 {
        self.memory.addr() + offset as u64
    }
}
