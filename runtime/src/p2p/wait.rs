//! Point-to-point synchronisation: waiting on and testing a word of this PE's own memory.

use hw::{Backend, Cmp, Device, LocalRange, WaitSpec};

use crate::TRACING_TARGET;
use crate::ctx::Ctx;
use crate::error::ShmemError;
use crate::memory::sym::{AtomicElement, Sym};
use crate::pe::word_access;

/// The wait for the `T` word `word` to satisfy `cmp value`.
pub(crate) fn word_spec<T: AtomicElement>(
    word: LocalRange,
    cmp: Cmp,
    value: T,
    purpose: &'static str,
) -> WaitSpec {
    WaitSpec {
        word,
        width: T::WIDTH,
        signed: T::SIGNED,
        cmp,
        value: value.to_bits(),
        purpose,
    }
}

impl<B: Backend> Ctx<B> {
    /// Blocks until this PE's element `ivar` satisfies `ivar cmp value`, and returns the value
    /// that satisfied it.
    ///
    /// # Ordering
    /// Returns only after the update that satisfied it is complete; afterwards every update to
    /// this PE's memory that was delivered is visible to this PE (docs/ordering.md).
    ///
    /// # Errors
    /// [`ShmemError::LengthMismatch`] unless `ivar` is one element; an address error
    /// ([`ShmemError::NotInHeap`], `OutsideAllocation`, `Misaligned`, `FreedAllocation`);
    /// [`ShmemError::Queue`] if nothing satisfies it within `RSHMEM_WAIT_TIMEOUT_MS` or no PE
    /// can make progress.
    pub fn wait_until<T: AtomicElement>(
        &self,
        ivar: Sym<T>,
        cmp: Cmp,
        value: T,
    ) -> Result<T, ShmemError> {
        self.wait_word(ivar, cmp, value, "wait_until")
    }

    /// Tests once whether this PE's element `ivar` satisfies `ivar cmp value`.
    ///
    /// # Ordering
    /// As [`Ctx::wait_until`] when it returns `true`.
    ///
    /// # Errors
    /// [`ShmemError::LengthMismatch`] unless `ivar` is one element; an address error
    /// ([`ShmemError::NotInHeap`], `OutsideAllocation`, `Misaligned`, `FreedAllocation`).
    pub fn test<T: AtomicElement>(
        &self,
        ivar: Sym<T>,
        cmp: Cmp,
        value: T,
    ) -> Result<bool, ShmemError> {
        let word = self.local_range(word_access(ivar)?)?;
        Ok(self
            .device
            .test(word_spec(word, cmp, value, "test"))
            .is_some())
    }

    /// Blocks until `ivar cmp value` holds; `purpose` names the caller in deadlock reports.
    pub(crate) fn wait_word<T: AtomicElement>(
        &self,
        ivar: Sym<T>,
        cmp: Cmp,
        value: T,
        purpose: &'static str,
    ) -> Result<T, ShmemError> {
        let word = self.local_range(word_access(ivar)?)?;
        tracing::trace!(
            target: TRACING_TARGET,
            pe = self.my_pe,
            op = purpose,
            offset = word.offset,
            cmp = cmp.symbol()
        );
        let spec = word_spec(word, cmp, value, purpose);
        Ok(T::from_bits(self.device.wait_until(spec, self.deadline())?))
    }
}
