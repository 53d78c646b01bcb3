//! Memory behind the device heap, grown as allocations need it.
//!
//! The device heap's segment is created with room for the whole heap (`SHMEM_DEVICE_SYMMETRIC_SIZE`,
//! the limit) but memory behind its first part only (`hw::Device::create_growable_segment`).
//! After every collective allocation, if the highest allocation ends past what is backed,
//! every PE backs more (`hw::Device::grow_segment`, itself collective). The allocator is
//! deterministic and every PE makes the same calls, so every PE decides the same growth at
//! the same point. The host heap is backed whole at init.
//!
//! Growth goes in steps of [`GROWTH_STEP_BYTES`], so that a program's many small allocations
//! cost one growth, not one each: each growth is a round of the bootstrap exchange and, on
//! CUDA, a physical allocation that the peers map.

use hw::{Backend, Device, MemKind};

use crate::error::ShmemError;
use crate::pe::PeState;

/// The granule of growth.
pub(crate) const GROWTH_STEP_BYTES: u64 = 64 << 20;

/// The bytes to back for a heap of `size_bytes` whose highest allocation ends at
/// `high_water_bytes` while `backed_bytes` are backed: `None` when that suffices.
pub(crate) fn next_backing(
    high_water_bytes: u64,
    backed_bytes: u64,
    size_bytes: u64,
) -> Option<u64> {
    (high_water_bytes > backed_bytes).then(|| {
        high_water_bytes
            .next_multiple_of(GROWTH_STEP_BYTES)
            .min(size_bytes)
    })
}

impl<B: Backend> PeState<B> {
    /// Backs the heap of `kind` on every PE up to its highest allocation, if it is not yet.
    /// Collective, as the allocation that calls it: every PE reaches it with the same heap.
    ///
    /// # Errors
    /// [`ShmemError::HeapGrowth`] if the device will not provide the memory.
    pub(crate) fn back_heap(&self, kind: MemKind) -> Result<(), ShmemError> {
        let next = self.heaps.borrow().find(kind).and_then(|heap| {
            next_backing(
                heap.high_water_bytes(),
                heap.backed_bytes(),
                heap.size_bytes(),
            )
        });
        let Some(backed_bytes) = next else {
            return Ok(());
        };
        tracing::debug!(target: crate::TRACING_TARGET, pe = self.my_pe, ?kind, backed_bytes, "heap growth");
        self.device
            .grow_segment(kind, backed_bytes, self.deadline())
            .map_err(|source| ShmemError::HeapGrowth {
                kind,
                backed_bytes,
                source,
            })?;
        if let Some(heap) = self.heaps.borrow_mut().find_mut(kind) {
            heap.set_backed_bytes(backed_bytes);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_comes_in_steps_up_to_the_heap_and_only_when_needed() {
        let step = GROWTH_STEP_BYTES;
        assert_eq!(next_backing(8, 0, 1 << 30), Some(step));
        assert_eq!(next_backing(step, step, 1 << 30), None);
        assert_eq!(next_backing(step + 1, step, 1 << 30), Some(2 * step));
        assert_eq!(next_backing(3 * step, step, 1 << 30), Some(3 * step));
        assert_eq!(next_backing(step + 1, 0, step + 100), Some(step + 100));
        assert_eq!(next_backing(0, 0, 1 << 30), None);
    }
}
