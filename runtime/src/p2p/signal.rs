//! Put-with-signal and waiting on signal words.

use hw::{Backend, Cmp, Copier, Device, Queue, SignalOp};

use crate::TRACING_TARGET;
use crate::ctx::Ctx;
use crate::error::ShmemError;
use crate::memory::sym::{Element, Sym, as_bytes};
use crate::pe::{same_len, word_access};

impl<B: Backend> Ctx<B> {
    /// Copies `src` into `dst` on PE `pe`, then updates the signal word `sig` on `pe` with
    /// `op` and `value`. Returns once `src` may be reused.
    ///
    /// # Ordering
    /// Once the signal update is visible, this put's data has been delivered; earlier puts
    /// only if a [`Ctx::fence`] separates them (docs/ordering.md).
    ///
    /// # Errors
    /// [`ShmemError::LengthMismatch`] if `src` and `dst` differ in length or `sig` is not one
    /// word; [`ShmemError::PeOutOfRange`]; an address error for `dst` or `sig`
    /// ([`ShmemError::NotInHeap`], `OutsideAllocation`, `Misaligned`, `FreedAllocation`);
    /// [`ShmemError::Queue`] if the queue was lost.
    pub fn put_signal<T: Element>(
        &self,
        dst: Sym<T>,
        src: &[T],
        sig: Sym<u64>,
        value: u64,
        op: SignalOp,
        pe: u32,
    ) -> Result<(), ShmemError> {
        self.put_signal_by(dst, src, sig, value, op, pe, Copier::Device)
    }

    /// [`Ctx::put_signal`], its data copied by `copier` (see [`Ctx::put_by`]).
    #[allow(clippy::too_many_arguments)] // put_signal's six, and who copies
    pub(crate) fn put_signal_by<T: Element>(
        &self,
        dst: Sym<T>,
        src: &[T],
        sig: Sym<u64>,
        value: u64,
        op: SignalOp,
        pe: u32,
        copier: Copier,
    ) -> Result<(), ShmemError> {
        same_len(dst.len(), src.len())?;
        let data = self.store_range(dst.access(), pe, "put_signal")?;
        let signal = self.store_range(word_access(sig)?, pe, "put_signal")?;
        tracing::trace!(
            target: TRACING_TARGET,
            pe = self.my_pe,
            peer = pe,
            op = "put_signal",
            offset = data.offset,
            bytes = data.len,
            signal = signal.offset
        );
        self.queue
            .put_signal(data, as_bytes(src), signal, op, value, copier)?;
        Ok(())
    }

    /// Non-blocking [`Ctx::put_signal`]. The backend copies `src` when the operation is
    /// issued, so `src` may be reused at once; completion is guaranteed only after the next
    /// [`Ctx::quiet`].
    ///
    /// # Ordering
    /// As [`Ctx::put_signal`].
    ///
    /// # Errors
    /// As [`Ctx::put_signal`].
    pub fn put_signal_nbi<T: Element>(
        &self,
        dst: Sym<T>,
        src: &[T],
        sig: Sym<u64>,
        value: u64,
        op: SignalOp,
        pe: u32,
    ) -> Result<(), ShmemError> {
        self.put_signal(dst, src, sig, value, op, pe)
    }

    /// Updates the signal word `sig` on PE `pe` with `op` and `value`, with no data
    /// (`nvshmemx_signal_op`). Returns once issued; the update completes at the next
    /// [`Ctx::quiet`].
    ///
    /// # Ordering
    /// An atomic update: ordered by [`Ctx::fence`] like a put, atomic with the other signal
    /// operations on `sig` (docs/ordering.md).
    ///
    /// # Errors
    /// [`ShmemError::LengthMismatch`] unless `sig` is one word; [`ShmemError::PeOutOfRange`];
    /// an address error ([`ShmemError::NotInHeap`], `OutsideAllocation`, `Misaligned`,
    /// `FreedAllocation`); [`ShmemError::StoreOnNostoreContext`]; [`ShmemError::Queue`] if the
    /// queue was lost.
    pub fn signal_op(
        &self,
        sig: Sym<u64>,
        value: u64,
        op: SignalOp,
        pe: u32,
    ) -> Result<(), ShmemError> {
        let signal = self.store_range(word_access(sig)?, pe, "signal_op")?;
        tracing::trace!(
            target: TRACING_TARGET,
            pe = self.my_pe,
            peer = pe,
            op = "signal_op",
            signal = signal.offset
        );
        self.queue.amo(signal, op.as_amo(value), false)?;
        Ok(())
    }

    /// Adds `value` to the signal word `sig` on PE `pe`: [`Ctx::signal_op`] with
    /// [`SignalOp::Add`].
    ///
    /// # Ordering
    /// As [`Ctx::signal_op`].
    ///
    /// # Errors
    /// As [`Ctx::signal_op`].
    pub fn signal_add(&self, sig: Sym<u64>, value: u64, pe: u32) -> Result<(), ShmemError> {
        self.signal_op(sig, value, SignalOp::Add, pe)
    }

    /// Sets the signal word `sig` on PE `pe` to `value`: [`Ctx::signal_op`] with
    /// [`SignalOp::Set`].
    ///
    /// # Ordering
    /// As [`Ctx::signal_op`].
    ///
    /// # Errors
    /// As [`Ctx::signal_op`].
    pub fn signal_set(&self, sig: Sym<u64>, value: u64, pe: u32) -> Result<(), ShmemError> {
        self.signal_op(sig, value, SignalOp::Set, pe)
    }

    /// Reads this PE's signal word `sig` with a plain load.
    ///
    /// # Ordering
    /// Sees remote updates once they are visible to this PE; use
    /// [`Ctx::signal_wait_until`] to wait for one.
    ///
    /// # Errors
    /// [`ShmemError::LengthMismatch`] unless `sig` is one word; an address error
    /// ([`ShmemError::NotInHeap`], `OutsideAllocation`, `Misaligned`, `FreedAllocation`).
    pub fn signal_fetch(&self, sig: Sym<u64>) -> Result<u64, ShmemError> {
        let range = self.local_range(word_access(sig)?)?;
        let mut word = [0; 8];
        self.device.read_local(range, &mut word);
        Ok(u64::from_le_bytes(word))
    }

    /// Blocks until this PE's signal word `sig` satisfies `sig cmp value`, and returns the
    /// value that satisfied it.
    ///
    /// # Ordering
    /// As [`Ctx::wait_until`]: the data of the put-with-signal that satisfied it is then
    /// visible to this PE.
    ///
    /// # Errors
    /// As [`Ctx::wait_until`].
    pub fn signal_wait_until(
        &self,
        sig: Sym<u64>,
        cmp: Cmp,
        value: u64,
    ) -> Result<u64, ShmemError> {
        self.wait_word(sig, cmp, value, "signal_wait_until")
    }
}
