//! Waits and tests on 16-bit words (`short` and `unsigned short`, which OpenSHMEM's
//! point-to-point synchronisation types include): [`Ctx::wait_until_narrow`].
//!
//! Why not through [`hw::WaitSpec`] directly: the contract's waits compare 32- and 64-bit
//! words, as its atomics do, and no backend needs more. A 16-bit element lies inside the
//! aligned 32-bit word that holds it, and that word lies inside the element's allocation
//! granule (allocations are 8-byte aligned and sized), so the call:
//!
//! 1. checks the elements as 16-bit elements (address, bounds, alignment 2);
//! 2. reads every covering word once (a test that always holds) and compares the elements;
//! 3. if it must wait on, sleeps in [`hw::Device::wait_until_any`] until one of those words
//!    differs from what it read, and goes back to 2.
//!
//! So it sleeps on many words at once and never spins; an update that changes another element
//! of a covering word only costs one more look.

use hw::{AmoWidth, Backend, Cmp, Device, LocalRange, WaitSpec};

use crate::p2p::wait::word_spec;

use crate::ctx::Ctx;
use crate::error::ShmemError;
use crate::memory::allocator::Access;
use crate::memory::sym::{Element, Sym};
use crate::pe::same_len;

/// The bytes of the word the narrow elements are read through.
const WORD_BYTES: u64 = 4;

/// A 16-bit element type of the point-to-point synchronisation calls.
pub trait NarrowElement: Element {
    /// Whether comparisons treat the element as signed.
    const SIGNED: bool;
    /// The element as a 32-bit word: sign-extended if signed, zero-extended if not.
    fn widen(self) -> u64;
    /// The element of the 16 low bits of `bits`.
    fn narrow(bits: u64) -> Self;
}

impl NarrowElement for i16 {
    const SIGNED: bool = true;
    fn widen(self) -> u64 {
        u64::from(i32::from(self) as u32)
    }
    fn narrow(bits: u64) -> i16 {
        // Why truncating: the element is exactly the low 16 bits.
        bits as u16 as i16
    }
}

impl NarrowElement for u16 {
    const SIGNED: bool = false;
    fn widen(self) -> u64 {
        u64::from(self)
    }
    fn narrow(bits: u64) -> u16 {
        // Why truncating: the element is exactly the low 16 bits.
        bits as u16
    }
}

/// What a call on a set of narrow elements looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NarrowMode {
    /// Every element left in holds (`wait_until_all`, `test_all`, and a single `wait_until`).
    All,
    /// One element holds; one such index is returned, taking turns as
    /// [`Ctx::wait_until_any`] does (`wait_until_any`, `test_any`).
    Any,
    /// At least one holds; every index that does is returned (`wait_until_some`,
    /// `test_some`).
    Some,
}

impl<B: Backend> Ctx<B> {
    /// Waits (if `block`) or tests once until the elements of this PE's `ivars` satisfy
    /// `ivars[i] cmp values[i]` as `mode` asks, and returns the indices found to hold, in
    /// increasing order (for [`NarrowMode::Any`] at most one). `values` has one entry for
    /// every element, or a single one for all. `status`, if given, has one entry per element;
    /// elements whose entry is nonzero are left out.
    ///
    /// With [`NarrowMode::All`], an element that held stays counted even if it changes
    /// later, as [`Ctx::wait_until_all`] does; the call returns once every element left in
    /// has held. A blocking call with every element left out returns at once, empty.
    ///
    /// # Ordering
    /// As [`Ctx::wait_until`] for each element found to hold.
    ///
    /// # Errors
    /// [`ShmemError::LengthMismatch`] if `status` or `values` (unless a single one) differs in
    /// length from `ivars`; an address error for `ivars` ([`ShmemError::NotInHeap`],
    /// `OutsideAllocation`, `Misaligned`, `FreedAllocation`); [`ShmemError::Queue`] if
    /// nothing satisfies a blocking call within `RSHMEM_WAIT_TIMEOUT_MS` or no PE can make
    /// progress.
    pub fn wait_until_narrow<T: NarrowElement>(
        &self,
        ivars: Sym<T>,
        status: Option<&[i32]>,
        cmp: Cmp,
        values: &[T],
        mode: NarrowMode,
        block: bool,
    ) -> Result<Vec<usize>, ShmemError> {
        if let Some(status) = status {
            same_len(ivars.len(), status.len())?;
        }
        if values.len() != 1 {
            same_len(ivars.len(), values.len())?;
        }
        let elem_bytes = std::mem::size_of::<T>() as u64;
        let all = self.local_range(Access {
            align: elem_bytes,
            ..ivars.access()
        })?;
        let included: Vec<usize> = (0..ivars.len())
            .filter(|&i| status.is_none_or(|status| status[i] == 0))
            .collect();
        if included.is_empty() {
            return Ok(Vec::new());
        }
        let first_word = all.offset - all.offset % WORD_BYTES;
        let word_of = |i: usize| (all.offset + i as u64 * elem_bytes - first_word) / WORD_BYTES;
        let words: Vec<LocalRange> = (0..=word_of(ivars.len() - 1))
            .map(|w| LocalRange {
                offset: first_word + w * WORD_BYTES,
                len: WORD_BYTES,
                ..all
            })
            .collect();
        let watched = |w: u64| included.iter().any(|&i| word_of(i) == w);
        let mut held = vec![false; ivars.len()];
        loop {
            let seen: Vec<u64> = words
                .iter()
                .map(|&word| {
                    // Why Ge 0 unsigned: it always holds, so the test returns the word.
                    self.device
                        .test(word_spec(word, Cmp::Ge, 0u32, "wait_until_narrow"))
                        .unwrap_or(0)
                })
                .collect();
            for &i in &included {
                let byte = all.offset + i as u64 * elem_bytes;
                let shift = 8 * (byte % WORD_BYTES);
                let element = T::narrow(seen[word_of(i) as usize] >> shift).widen();
                let value = values[if values.len() == 1 { 0 } else { i }].widen();
                held[i] |= cmp.eval(AmoWidth::W32, T::SIGNED, element, value);
            }
            let found: Vec<usize> = included.iter().copied().filter(|&i| held[i]).collect();
            let done = match mode {
                NarrowMode::All => found.len() == included.len(),
                NarrowMode::Any | NarrowMode::Some => !found.is_empty(),
            };
            if done || !block {
                return Ok(match mode {
                    NarrowMode::Any => self.next_any(&found).into_iter().collect(),
                    NarrowMode::All | NarrowMode::Some => found,
                });
            }
            let changes: Vec<WaitSpec> = words
                .iter()
                .zip(&seen)
                .enumerate()
                .filter(|&(w, _)| watched(w as u64))
                .map(|(_, (&word, &was))| word_spec(word, Cmp::Ne, was as u32, "wait_until_narrow"))
                .collect();
            self.device.wait_until_any(&changes, self.deadline())?;
        }
    }
}
