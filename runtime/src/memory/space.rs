//! The symmetric address space: one window of addresses per heap kind.
//!
//! Why windows: an address alone then says which heap it lies in, so a [`crate::Sym`] (an
//! address, a length and an allocation) carries its heap without a field of its own, a raw
//! [`crate::SymAddr`] works for either heap, and the query `heap_kind_of` is exact, as it is
//! for pointers in C. The device heap's window starts at 0, so a device-heap address equals
//! the offset into the PE's device segment, which is what device-API kernels take.

use hw::MemKind;

/// The size of each window, in bytes: the largest heap of one kind.
pub(crate) const WINDOW_BYTES: u64 = 1 << 62;

/// Where the window of `kind` starts.
pub(crate) fn base_of(kind: MemKind) -> u64 {
    match kind {
        MemKind::Device => 0,
        MemKind::Host => WINDOW_BYTES,
        MemKind::Static => 2 * WINDOW_BYTES,
    }
}

/// The heap kind whose window holds `addr`, and the offset of `addr` into that heap's
/// segment. Addresses past the static window land at static offsets no segment holds, so a
/// check refuses them.
pub(crate) fn locate(addr: u64) -> (MemKind, u64) {
    if addr >= 2 * WINDOW_BYTES {
        (MemKind::Static, addr - 2 * WINDOW_BYTES)
    } else if addr >= WINDOW_BYTES {
        (MemKind::Host, addr - WINDOW_BYTES)
    } else {
        (MemKind::Device, addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_round_trips_through_its_window() {
        for kind in [MemKind::Device, MemKind::Host, MemKind::Static] {
            for offset in [0, 8, WINDOW_BYTES - 1] {
                assert_eq!(locate(base_of(kind) + offset), (kind, offset));
            }
        }
        assert_eq!(
            locate(u64::MAX),
            (MemKind::Static, u64::MAX - 2 * WINDOW_BYTES)
        );
    }
}
