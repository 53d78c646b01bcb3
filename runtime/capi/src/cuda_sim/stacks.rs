//! The stacks of GPU threads: 64 KiB each with a guard page, mapped lazily and pooled.
//!
//! Why pooled: mapping a stack costs two system calls (about 6 µs), more than a whole empty
//! GPU thread. A thread takes a stack at its first resume and gives it back the moment it
//! returns, so a kernel whose threads never block runs every thread on one stack, and a kernel
//! whose threads park holds one stack per parked thread, reused by the next launch.
//!
//! Why 64 KiB: x86 device code keeps in memory what a GPU keeps in registers and calls libc
//! (`vprintf`), so a GPU's 1 KiB is far too little; 64 KiB is committed page by page as it is
//! touched (`MAP_NORESERVE`), so a parked thread costs the pages it used. An overflow hits the
//! guard page and faults, as on a thread.

use std::cell::RefCell;
use std::io;
use std::ptr::NonNull;

use corosensei::stack::{Stack, StackPointer};

/// Usable bytes of a GPU thread's stack.
pub(crate) const STACK_BYTES: usize = 64 * 1024;

/// Free stacks kept per OS thread; a launch that parked more gives the rest back to the OS.
const KEPT: usize = 4096;

/// A stack: a guard page at the bottom, then [`STACK_BYTES`] for a GPU thread ([`FiberStack::map`]
/// takes other sizes).
#[derive(Debug)]
pub(crate) struct FiberStack {
    /// The lowest address of the mapping: the guard page.
    bottom: NonNull<u8>,
    /// The mapping's length, guard page included.
    len: usize,
}

impl FiberStack {
    /// A new stack of `usable_bytes` (rounded up to whole pages) above its guard page; a PE's
    /// `main` runs on one as well (`sim_host/exit.rs`).
    pub(crate) fn map(usable_bytes: usize) -> io::Result<FiberStack> {
        // SAFETY: sysconf reads a constant of the system.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let len = usable_bytes.next_multiple_of(page) + page;
        // SAFETY: a new private anonymous mapping; no existing memory is named.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let bottom = NonNull::new(addr.cast::<u8>()).ok_or_else(io::Error::last_os_error)?;
        // Owned from here, so an early return below unmaps it.
        let stack = FiberStack { bottom, len };
        // SAFETY: the first page of the mapping just made, which nothing uses yet.
        if unsafe { libc::mprotect(addr, page, libc::PROT_NONE) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(stack)
    }
}

impl Drop for FiberStack {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`; a stack is dropped only when no coroutine runs on
        // it (it finished, or was reset without unwinding).
        unsafe { libc::munmap(self.bottom.as_ptr().cast(), self.len) };
    }
}

// SAFETY: the mapping has a PROT_NONE guard page at its lowest address and the usable bytes
// above it; both ends are page-aligned (so aligned to STACK_ALIGNMENT), and the mapping
// lives as long as the value.
unsafe impl Stack for FiberStack {
    fn base(&self) -> StackPointer {
        StackPointer::new(self.bottom.as_ptr() as usize + self.len).expect("a mapping's end")
    }

    fn limit(&self) -> StackPointer {
        StackPointer::new(self.bottom.as_ptr() as usize).expect("a mapping's start")
    }
}

thread_local! {
    /// Stacks no GPU thread uses.
    static FREE: RefCell<Vec<FiberStack>> = const { RefCell::new(Vec::new()) };
}

/// A stack for a GPU thread's first resume: a free one, or a new mapping.
pub(crate) fn take() -> io::Result<FiberStack> {
    match FREE.with_borrow_mut(Vec::pop) {
        Some(stack) => Ok(stack),
        None => FiberStack::map(STACK_BYTES),
    }
}

/// Gives back the stack of a GPU thread that returned.
pub(crate) fn give_back(stack: FiberStack) {
    FREE.with_borrow_mut(|free| {
        if free.len() < KEPT {
            free.push(stack);
        }
    });
}
