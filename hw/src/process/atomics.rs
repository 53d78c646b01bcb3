//! The contract's atomics ([`crate::AmoOp`]) as CPU atomics on words of a shared mapping.
//!
//! A word of a segment is viewed as an `AtomicU32` or `AtomicU64` with `from_ptr`: the
//! contract's widths, and atomic with respect to atomics of the same width on the same word in
//! every process that maps it (the CPU's coherence does not care which process issued them).
//! Orderings are the callers' (`queue.rs` says why each is what it is).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::amo::{AmoKind, AmoOp, AmoWidth};

use super::memory::Mapping;

/// The word of `width` at `offset` of `mapping`, read atomically with `order`.
///
/// # Panics
/// If the word is outside the mapping or not aligned to its width (contract violations: the
/// runtime checks both).
pub(crate) fn load(mapping: &Mapping, offset: u64, width: AmoWidth, order: Ordering) -> u64 {
    match width {
        AmoWidth::W32 => u64::from(word32(mapping, offset).load(order)),
        AmoWidth::W64 => word64(mapping, offset).load(order),
    }
}

/// Applies `op` to the word at `offset` of `mapping` as one atomic read-modify-write of
/// `order` (a `Fetch` is a load of `order`'s read half), and returns the old value,
/// zero-extended.
///
/// # Panics
/// As [`load`].
pub(crate) fn apply(mapping: &Mapping, offset: u64, op: AmoOp, order: Ordering) -> u64 {
    match op.width {
        AmoWidth::W32 => {
            let word = word32(mapping, offset);
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
            let word = word64(mapping, offset);
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

fn word32(mapping: &Mapping, offset: u64) -> &AtomicU32 {
    let ptr = mapping.span(offset, 4, "a 32-bit atomic").cast::<u32>();
    assert!(
        ptr.is_aligned(),
        "a 32-bit atomic at unaligned offset {offset:#x}"
    );
    // SAFETY: the word is inside the mapping, which outlives the reference, and aligned;
    // atomics of this width are how every party updates it concurrently.
    unsafe { AtomicU32::from_ptr(ptr) }
}

fn word64(mapping: &Mapping, offset: u64) -> &AtomicU64 {
    let ptr = mapping.span(offset, 8, "a 64-bit atomic").cast::<u64>();
    assert!(
        ptr.is_aligned(),
        "a 64-bit atomic at unaligned offset {offset:#x}"
    );
    // SAFETY: as in `word32`, for 8 bytes.
    unsafe { AtomicU64::from_ptr(ptr) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::memory::shared_memory;

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
