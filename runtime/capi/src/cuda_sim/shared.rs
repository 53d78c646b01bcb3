//! `__shared__` memory: one block's bytes at a time in the places compiled code addresses.
//!
//! Compiled device code reads a `__shared__` variable at its address in the object's section
//! `rsim_smem` and an `extern __shared__` array at [`__rsim_dynsmem`], the same addresses for
//! every block. So the bytes of one block are in place at a time: before a thread of another
//! block runs, the resident block's bytes are copied out to its save area and the new block's
//! copied in (zeroes the first time: a block's shared memory starts zeroed here, undefined on
//! a GPU). A block whose threads have all returned is not saved. Blocks run in order and a
//! kernel whose threads never wait switches block once per block, so the copies cost the
//! bytes of each block once.
//!
//! Why a process-wide owner: [`__rsim_dynsmem`] is one buffer of libshmem, shared by every
//! simulated PE, and a device call of one PE's kernel can let another PE's kernel run; the
//! launch whose block is in place ([`OWNER`]) is saved first when another launch's block
//! needs the places.

use std::cell::{Cell, RefCell, UnsafeCell};
use std::ops::Range;
use std::sync::atomic::{AtomicPtr, Ordering};

/// The bytes of [`__rsim_dynsmem`]: the most dynamic shared memory a block of an H100 or H200
/// may opt in to (227 KiB).
pub(crate) const DYNAMIC_SHARED_BYTES: usize = 227 * 1024;

/// The buffer behind `extern __shared__` arrays (`__rsim_dynsmem` of `cuda_sim_abi.h`).
#[repr(C, align(256))]
pub struct DynamicShared(UnsafeCell<[u8; DYNAMIC_SHARED_BYTES]>);

// SAFETY: written only by the thread that runs kernels, through raw pointers: by compiled
// device code and by the swaps below, which never overlap (threads switch only in calls).
unsafe impl Sync for DynamicShared {}

/// `extern __shared__` arrays are this buffer (rshmem-nvcc links each such name to it).
#[unsafe(no_mangle)]
pub static __rsim_dynsmem: DynamicShared =
    DynamicShared(UnsafeCell::new([0; DYNAMIC_SHARED_BYTES]));

/// The launch whose block's bytes are in place; null when none. Relaxed: one thread runs
/// kernels (see `fiber.rs`).
static OWNER: AtomicPtr<SharedMemory> = AtomicPtr::new(std::ptr::null_mut());

/// The shared memory of one launch: where its bytes live, and each block's saved copy.
pub(crate) struct SharedMemory {
    /// The places: the kernel object's `rsim_smem` section and the dynamic part asked for.
    places: Vec<Range<usize>>,
    /// Their total size: the bytes of one block.
    block_bytes: usize,
    block_threads: u32,
    /// The block whose bytes are in place, while this launch is the owner.
    resident: Cell<Option<usize>>,
    /// Each block's bytes while another block's are in place; `None` before its first turn.
    saved: RefCell<Vec<Option<Box<[u8]>>>>,
    /// How many threads of each block have returned.
    returned: Vec<Cell<u32>>,
}

impl SharedMemory {
    /// The shared memory of a launch of `n_blocks` blocks of `block_threads` threads, whose
    /// kernel's object has `static_places` and which asked for `dynamic_bytes` (checked by the
    /// caller against [`DYNAMIC_SHARED_BYTES`]).
    pub(crate) fn new(
        static_places: Range<usize>,
        dynamic_bytes: usize,
        n_blocks: usize,
        block_threads: u32,
    ) -> SharedMemory {
        let dynamic_start = __rsim_dynsmem.0.get() as usize;
        let places: Vec<Range<usize>> =
            [static_places, dynamic_start..dynamic_start + dynamic_bytes]
                .into_iter()
                .filter(|place| !place.is_empty())
                .collect();
        SharedMemory {
            block_bytes: places.iter().map(ExactSizeIterator::len).sum(),
            places,
            block_threads,
            resident: Cell::new(None),
            saved: RefCell::new((0..n_blocks).map(|_| None).collect()),
            returned: (0..n_blocks).map(|_| Cell::new(0)).collect(),
        }
    }

    /// The places, for the initialisation check.
    pub(crate) fn places(&self) -> &[Range<usize>] {
        &self.places
    }

    /// Puts `block`'s bytes in place, saving those of the block (of any launch) there now.
    pub(crate) fn make_resident(&self, block: usize) {
        if self.block_bytes == 0 {
            return;
        }
        let me = std::ptr::from_ref(self).cast_mut();
        let owner = OWNER.load(Ordering::Relaxed);
        if owner == me && self.resident.get() == Some(block) {
            return;
        }
        if owner != me && !owner.is_null() {
            // SAFETY: an owner clears OWNER when it is dropped (below), so a non-null owner is
            // a live launch (of another PE, suspended in a device call).
            unsafe { &*owner }.evict();
        } else {
            self.evict();
        }
        self.load(block);
        self.resident.set(Some(block));
        OWNER.store(me, Ordering::Relaxed);
    }

    /// Records that a thread of `block` returned.
    pub(crate) fn thread_returned(&self, block: usize) {
        let returned = &self.returned[block];
        returned.set(returned.get() + 1);
    }

    /// Saves the resident block's bytes (unless all its threads returned) and gives up the
    /// places.
    fn evict(&self) {
        let Some(block) = self.resident.take() else {
            return;
        };
        let mut saved = self.saved.borrow_mut();
        if self.returned[block].get() == self.block_threads {
            saved[block] = None;
            return;
        }
        let copy = saved[block].get_or_insert_with(|| vec![0; self.block_bytes].into_boxed_slice());
        let mut at = 0;
        for place in &self.places {
            // SAFETY: a place is the object's `rsim_smem` section or a prefix of
            // `__rsim_dynsmem`, both writable for the whole run, and no thread runs during
            // the copy.
            let bytes =
                unsafe { std::slice::from_raw_parts(place.start as *const u8, place.len()) };
            copy[at..at + place.len()].copy_from_slice(bytes);
            at += place.len();
        }
    }

    /// Puts `block`'s saved bytes in place, or zeroes for its first turn.
    fn load(&self, block: usize) {
        let saved = self.saved.borrow();
        let mut at = 0;
        for place in &self.places {
            // SAFETY: as in `evict`.
            let bytes =
                unsafe { std::slice::from_raw_parts_mut(place.start as *mut u8, place.len()) };
            match &saved[block] {
                Some(copy) => bytes.copy_from_slice(&copy[at..at + place.len()]),
                None => bytes.fill(0),
            }
            at += place.len();
        }
    }
}

impl Drop for SharedMemory {
    fn drop(&mut self) {
        let me = std::ptr::from_mut(self);
        // Relaxed: see OWNER. A failed exchange means another launch owns the places.
        let _ = OWNER.compare_exchange(
            me,
            std::ptr::null_mut(),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }
}
