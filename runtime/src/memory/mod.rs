//! Symmetric memory (docs/heaps.md): the heaps, the addresses in them, and the collective
//! calls that allocate from them.
//!
//! - `space.rs`: the symmetric address space, one window per heap, so an address names its heap;
//! - `allocator.rs`: the deterministic allocator of one heap's window;
//! - `heaps.rs` and `heaps/`: a PE's device and host heaps, their segments and their queries;
//! - `alloc.rs`: malloc, calloc, align, malloc_with_hints (`hints.rs`), realloc and free;
//! - `buffers.rs`: a program's own buffers registered as symmetric memory;
//! - `call_agreement.rs`: the check that every PE made the same collective memory call;
//! - `sym.rs`: typed handles ([`Sym`](crate::Sym)) and the element types;
//! - `ptr.rs`: direct load/store access to a peer's memory (`ptr`, `team_ptr`);
//! - `local.rs`: where this process holds its own part of each heap (pointers of the C API);
//! - `mapped.rs`: where it may load every PE's part with plain loads, where the backend allows it.

mod alloc;
pub(crate) mod allocator;
mod buffers;
pub(crate) mod call_agreement;
pub(crate) mod heaps;
pub(crate) mod hints;
pub(crate) mod local;
pub(crate) mod mapped;
pub(crate) mod ptr;
pub(crate) mod space;
pub(crate) mod sym;
