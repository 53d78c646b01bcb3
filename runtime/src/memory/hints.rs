//! [`MallocHints`]: what `malloc_with_hints` is told about an allocation.

use std::fmt;
use std::ops::BitOr;

use hw::MemKind;

use crate::error::ShmemError;

/// Hints to [`crate::Shmem::malloc_with_hints`] (`shmem_malloc_with_hints`), combined with
/// `|`: OpenSHMEM 1.5's usage hints, which are advisory, and the multi-heap proposal's heap
/// hints, which pick the heap (docs/heaps.md).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct MallocHints(u32);

/// Each hint's bit and its name in the spec (less the `SHMEM_MALLOC_` prefix).
const NAMES: [(MallocHints, &str); 4] = [
    (MallocHints::ATOMICS_REMOTE, "ATOMICS_REMOTE"),
    (MallocHints::SIGNAL_REMOTE, "SIGNAL_REMOTE"),
    (MallocHints::HOST_HEAP, "HOST_HEAP"),
    (MallocHints::DEVICE_HEAP, "DEVICE_HEAP"),
];

impl MallocHints {
    /// No hint: the default heap, as [`crate::Shmem::malloc`].
    pub const NONE: MallocHints = MallocHints(0);
    /// `SHMEM_MALLOC_ATOMICS_REMOTE`: the object is mostly updated by remote atomics.
    /// Advisory; every heap serves atomics alike here.
    pub const ATOMICS_REMOTE: MallocHints = MallocHints(1);
    /// `SHMEM_MALLOC_SIGNAL_REMOTE`: the object is a signal of put-with-signal. Advisory.
    pub const SIGNAL_REMOTE: MallocHints = MallocHints(1 << 1);
    /// `SHMEM_MALLOC_HOST_HEAP`: allocate from the host heap (`SHMEM_SYMMETRIC_SIZE`).
    pub const HOST_HEAP: MallocHints = MallocHints(1 << 2);
    /// `SHMEM_MALLOC_DEVICE_HEAP`: allocate from the device heap
    /// (`SHMEM_DEVICE_SYMMETRIC_SIZE`).
    pub const DEVICE_HEAP: MallocHints = MallocHints(1 << 3);

    /// Whether every hint of `other` is set here.
    pub fn contains(self, other: MallocHints) -> bool {
        self.0 & other.0 == other.0
    }

    /// The heap the hints pick, if they pick one.
    ///
    /// # Errors
    /// [`ShmemError::ConflictingHeapHints`] if both heap hints are set.
    pub(crate) fn heap(self) -> Result<Option<MemKind>, ShmemError> {
        match (
            self.contains(MallocHints::HOST_HEAP),
            self.contains(MallocHints::DEVICE_HEAP),
        ) {
            (true, true) => Err(ShmemError::ConflictingHeapHints),
            (true, false) => Ok(Some(MemKind::Host)),
            (false, true) => Ok(Some(MemKind::Device)),
            (false, false) => Ok(None),
        }
    }

    /// The hints as bits: the agreement check's encoding and the values of `shmem.h`.
    pub fn bits(self) -> u32 {
        self.0
    }

    /// The hints `bits` encode (the C API's `SHMEM_MALLOC_*` values are these bits), unknown
    /// bits left out: hints are advisory, and an implementation that cannot use one behaves as
    /// `shmem_malloc` (OpenSHMEM 1.5 section 9.3, shmem_malloc_with_hints).
    pub fn from_bits_ignoring_unknown(bits: u64) -> MallocHints {
        // Why truncating: every known bit lies in the low 32.
        MallocHints(bits as u32 & Self::KNOWN_BITS)
    }

    /// The hints `bits` encode, if they encode known hints only (the agreement check's
    /// decoding).
    pub fn from_bits(bits: u64) -> Option<MallocHints> {
        u32::try_from(bits)
            .ok()
            .filter(|b| b & !Self::KNOWN_BITS == 0)
            .map(MallocHints)
    }

    /// Every hint's bit.
    const KNOWN_BITS: u32 = {
        let mut bits = 0;
        let mut i = 0;
        while i < NAMES.len() {
            bits |= NAMES[i].0.0;
            i += 1;
        }
        bits
    };
}

impl BitOr for MallocHints {
    type Output = MallocHints;

    fn bitor(self, other: MallocHints) -> MallocHints {
        MallocHints(self.0 | other.0)
    }
}

/// As C would write them: `ATOMICS_REMOTE|DEVICE_HEAP`, or `NONE`.
impl fmt::Debug for MallocHints {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = NAMES
            .iter()
            .filter(|(hint, _)| self.contains(*hint))
            .map(|(_, name)| *name)
            .collect();
        if names.is_empty() {
            f.write_str("NONE")
        } else {
            f.write_str(&names.join("|"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_hints_pick_the_heap_and_never_both() {
        let atomics = MallocHints::ATOMICS_REMOTE;
        assert_eq!(atomics.heap().ok(), Some(None));
        assert_eq!(
            (atomics | MallocHints::HOST_HEAP).heap().ok(),
            Some(Some(MemKind::Host))
        );
        assert_eq!(
            MallocHints::DEVICE_HEAP.heap().ok(),
            Some(Some(MemKind::Device))
        );
        assert!(matches!(
            (MallocHints::HOST_HEAP | MallocHints::DEVICE_HEAP).heap(),
            Err(ShmemError::ConflictingHeapHints)
        ));
    }

    #[test]
    fn hints_round_trip_through_bits_and_print_as_in_c() {
        let hints = MallocHints::SIGNAL_REMOTE | MallocHints::DEVICE_HEAP;
        assert_eq!(
            MallocHints::from_bits_ignoring_unknown(u64::from(hints.bits())),
            hints
        );
        assert_eq!(
            MallocHints::from_bits_ignoring_unknown(1 << 4 | 1 << 40 | 1),
            MallocHints::ATOMICS_REMOTE
        );
        assert_eq!(MallocHints::from_bits(u64::from(hints.bits())), Some(hints));
        assert_eq!(MallocHints::from_bits(1 << 4), None);
        assert_eq!(format!("{hints:?}"), "SIGNAL_REMOTE|DEVICE_HEAP");
        assert_eq!(format!("{:?}", MallocHints::NONE), "NONE");
    }
}
