//! A CPU cache hint shared by the world's event loop, the memory model and the ticket sets.
//!
//! Why a module of its own: the world, `memory.rs` and `ordering.rs` all start loading what
//! the next events will touch, and a hint that belongs to none of them should not make the
//! lower modules import the world.

/// Starts loading the cache lines of `value` (a hint; it changes no result).
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let start: *const i8 = (value as *const T).cast();
        for line in (0..size_of::<T>()).step_by(64) {
            // SAFETY: a prefetch is a hint: it never faults and has no effect the program can
            // observe, whatever the address; SSE is part of the x86-64 baseline.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(line)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
