//! The contract's atomics ([`crate::AmoOp`]) as CPU atomics on words of a shared mapping.
//!
//! A word of shared memory (of a [`Mapping`], or at an address the caller vouches for: the
//! CUDA backend's host segments) is viewed as an `AtomicU32` or `AtomicU64` with `from_ptr`: the
//! contract's widths, and atomic with respect to atomics of the same width on the same word in
//! every process that maps it (the CPU's coherence does not care which process issued them).
//! Orderings are the callers' (each backend's `queue.rs` says why each is what it is).

use crate::sync::cross_process::{AtomicU32, AtomicU64, Ordering};

use crate::amo::{AmoKind, AmoOp, AmoWidth};

#[cfg(feature = "process")]
use super::memfd::Mapping;

/// The word of `width` at `offset` of `mapping`, read atomically with `order`.
///
/// # Panics
/// If the word is outside the mapping or not aligned to its width (contract violations: the
/// runtime checks both).
#[cfg(feature = "process")]
pub(crate) fn load(mapping: &Mapping, offset: u64, width: AmoWidth, order: Ordering) -> u64 {
    let word = mapping.span(offset, width.bytes(), "an atomic load");
    // SAFETY: `span` checked that the word lies inside the mapping, which outlives the call.
    unsafe { load_at(word, width, order) }
}

/// Applies `op` to the word at `offset` of `mapping` as one atomic read-modify-write of
/// `order` (a `Fetch` is a load of `order`'s read half), and returns the old value,
/// zero-extended.
///
/// # Panics
/// As [`load`].
#[cfg(feature = "process")]
pub(crate) fn apply(mapping: &Mapping, offset: u64, op: AmoOp, order: Ordering) -> u64 {
    let word = mapping.span(offset, op.width.bytes(), "an atomic");
    // SAFETY: as in `load`.
    unsafe { apply_at(word, op, order) }
}

/// [`load`] of the word at address `word`.
///
/// # Safety
/// `word` points to `width` bytes of memory mapped read/write for the duration of the call,
/// which every party updates with atomics of this width.
///
/// # Panics
/// If `word` is not aligned to its width (a contract violation).
pub(crate) unsafe fn load_at(word: *mut u8, width: AmoWidth, order: Ordering) -> u64 {
    match width {
        // SAFETY: the caller's promise.
        AmoWidth::W32 => u64::from(unsafe { word32(word) }.load(order)),
        // SAFETY: the caller's promise.
        AmoWidth::W64 => unsafe { word64(word) }.load(order),
    }
}

/// [`apply`] to the word at address `word`.
///
/// # Safety
/// As [`load_at`], for `op.width`.
///
/// # Panics
/// As [`load_at`].
pub(crate) unsafe fn apply_at(word: *mut u8, op: AmoOp, order: Ordering) -> u64 {
    match op.width {
        AmoWidth::W32 => {
            // SAFETY: the caller's promise.
            let word = unsafe { word32(word) };
            let operand = op.operand as u32;
            u64::from(match op.kind {
                AmoKind::Fetch => word.load(read_half(order)),
                AmoKind::Set | AmoKind::Swap => word.swap(operand, order),
                AmoKind::CompareSwap { compare } => word
                    .compare_exchange(compare as u32, operand, order, read_half(order))
                    .unwrap_or_else(|old| old),
                AmoKind::Add => word.fetch_add(operand, order),
                AmoKind::And => word.fetch_and(operand, order),
                AmoKind::Or => word.fetch_or(operand, order),
                AmoKind::Xor => word.fetch_xor(operand, order),
            })
        }
        AmoWidth::W64 => {
            // SAFETY: the caller's promise.
            let word = unsafe { word64(word) };
            let operand = op.operand;
            match op.kind {
                AmoKind::Fetch => word.load(read_half(order)),
                AmoKind::Set | AmoKind::Swap => word.swap(operand, order),
                AmoKind::CompareSwap { compare } => word
                    .compare_exchange(compare, operand, order, read_half(order))
                    .unwrap_or_else(|old| old),
                AmoKind::Add => word.fetch_add(operand, order),
                AmoKind::And => word.fetch_and(operand, order),
                AmoKind::Or => word.fetch_or(operand, order),
                AmoKind::Xor => word.fetch_xor(operand, order),
            }
        }
    }
}

/// The ordering of a load that stands for a read-modify-write of `order`.
fn read_half(order: Ordering) -> Ordering {
    match order {
        Ordering::Release | Ordering::Relaxed => Ordering::Relaxed,
        Ordering::SeqCst => Ordering::SeqCst,
        _ => Ordering::Acquire,
    }
}

/// # Safety
/// `word` points to 4 bytes mapped read/write while the reference lives.
unsafe fn word32<'a>(word: *mut u8) -> &'a AtomicU32 {
    let ptr = word.cast::<u32>();
    assert!(
        ptr.is_aligned(),
        "a 32-bit atomic at unaligned address {ptr:p}"
    );
    // SAFETY: mapped (the caller's promise) and aligned; atomics of this width are how every
    // party updates it concurrently.
    unsafe { AtomicU32::from_ptr(ptr) }
}

/// # Safety
/// `word` points to 8 bytes mapped read/write while the reference lives.
unsafe fn word64<'a>(word: *mut u8) -> &'a AtomicU64 {
    let ptr = word.cast::<u64>();
    assert!(
        ptr.is_aligned(),
        "a 64-bit atomic at unaligned address {ptr:p}"
    );
    // SAFETY: as in `word32`, for 8 bytes.
    unsafe { AtomicU64::from_ptr(ptr) }
}

// The tests use the `Mapping` helpers, which exist only with the process backend.
#[cfg(all(test, feature = "process"))]
mod tests {
    use super::*;
    use crate::common::memfd::shared_memory;

    fn op(kind: AmoKind, operand: u64, width: AmoWidth) -> AmoOp {
        AmoOp {
            kind,
            operand,
            width,
        }
    }

    /// Every op at both widths agrees with the contract's reference (`AmoOp::apply`), and a
    /// 32-bit op leaves the neighbouring word alone.
    #[test]
    fn every_op_at_both_widths_matches_the_reference() {
        let (_fd, mapping) = shared_memory(c"rshmem-test-amo", 64).expect("a memfd");
        let kinds = [
            AmoKind::Fetch,
            AmoKind::Set,
            AmoKind::Swap,
            AmoKind::CompareSwap {
                compare: 0xffff_fff0,
            },
            AmoKind::CompareSwap { compare: 1 },
            AmoKind::Add,
            AmoKind::And,
            AmoKind::Or,
            AmoKind::Xor,
        ];
        for width in [AmoWidth::W32, AmoWidth::W64] {
            for kind in kinds {
                let start = width.truncate(0xffff_ffff_ffff_fff0);
                apply(
                    &mapping,
                    8,
                    op(AmoKind::Set, start, width),
                    Ordering::SeqCst,
                );
                if width == AmoWidth::W32 {
                    let neighbour = op(AmoKind::Set, 0x5a5a, AmoWidth::W32);
                    apply(&mapping, 12, neighbour, Ordering::SeqCst);
                }
                let the_op = op(kind, 0x1_0000_0021, width);
                let old = apply(&mapping, 8, the_op, Ordering::AcqRel);
                assert_eq!(old, start, "{kind:?} {width:?} returns the old value");
                let now = load(&mapping, 8, width, Ordering::Relaxed);
                assert_eq!(now, the_op.apply(start), "{kind:?} {width:?}");
                if width == AmoWidth::W32 {
                    let neighbour = load(&mapping, 12, AmoWidth::W32, Ordering::Relaxed);
                    assert_eq!(neighbour, 0x5a5a, "{kind:?} touched the next word");
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "unaligned")]
    fn an_unaligned_word_is_a_contract_violation() {
        let (_fd, mapping) = shared_memory(c"rshmem-test-amo", 64).expect("a memfd");
        load(&mapping, 4, AmoWidth::W64, Ordering::Relaxed);
    }
}
