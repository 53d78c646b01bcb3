//! Remote memory access: put, get and their variants, and plain access to this PE's own part
//! of a symmetric object.

use hw::{Backend, Copier, Device, Instant, Queue, RemoteRange, Ticket};

use crate::TRACING_TARGET;
use crate::ctx::Ctx;
use crate::error::ShmemError;
use crate::memory::sym::{Element, Sym, SymAddr, as_bytes, as_bytes_mut};
use crate::pe::{byte_access, same_len};

impl<B: Backend> Ctx<B> {
    /// Copies `src` into `dst` on PE `pe`. Returns once `src` may be reused, not once the data
    /// has arrived.
    ///
    /// # Ordering
    /// Unordered with other puts unless a [`Ctx::fence`] or [`Ctx::quiet`] separates them;
    /// complete (delivered) after the next quiet or barrier_all (docs/ordering.md).
    ///
    /// # Errors
    /// [`ShmemError::LengthMismatch`] if `src` and `dst` differ in length;
    /// [`ShmemError::PeOutOfRange`]; an address error ([`ShmemError::NotInHeap`],
    /// `OutsideAllocation`, `Misaligned`, `FreedAllocation`); [`ShmemError::Queue`] if the
    /// queue was lost.
    pub fn put<T: Element>(&self, dst: Sym<T>, src: &[T], pe: u32) -> Result<(), ShmemError> {
        self.put_by(dst, src, pe, Copier::Device)
    }

    /// [`Ctx::put`] made by `copier` (a kernel's thread, warp or block), which a backend
    /// that models time paces the put by.
    pub(crate) fn put_by<T: Element>(
        &self,
        dst: Sym<T>,
        src: &[T],
        pe: u32,
        copier: Copier,
    ) -> Result<(), ShmemError> {
        same_len(dst.len(), src.len())?;
        let range = self.store_range(dst.access(), pe, "put")?;
        self.put_checked(range, as_bytes(src), copier)
    }

    /// Non-blocking [`Ctx::put`]. The backend copies `src` when the put is issued, so `src`
    /// may be reused at once; as with any put, delivery is guaranteed only after the next
    /// [`Ctx::quiet`].
    ///
    /// # Errors
    /// As [`Ctx::put`].
    pub fn put_nbi<T: Element>(&self, dst: Sym<T>, src: &[T], pe: u32) -> Result<(), ShmemError> {
        self.put(dst, src, pe)
    }

    /// Writes the single element `dst` on PE `pe`.
    ///
    /// # Ordering
    /// As [`Ctx::put`].
    ///
    /// # Errors
    /// As [`Ctx::put`]; [`ShmemError::LengthMismatch`] unless `dst` is one element.
    pub fn p<T: Element>(&self, dst: Sym<T>, value: T, pe: u32) -> Result<(), ShmemError> {
        self.put(dst, &[value], pe)
    }

    /// Copies the bytes `src` to `dst` on PE `pe`; no alignment needed.
    ///
    /// # Ordering
    /// As [`Ctx::put`].
    ///
    /// # Errors
    /// [`ShmemError::PeOutOfRange`]; [`ShmemError::NotInHeap`] or
    /// [`ShmemError::OutsideAllocation`] unless the bytes lie in one live allocation;
    /// [`ShmemError::Queue`] if the queue was lost.
    pub fn put_bytes(&self, dst: SymAddr, src: &[u8], pe: u32) -> Result<(), ShmemError> {
        self.put_checked(
            self.store_range(byte_access(dst, src.len() as u64), pe, "put_bytes")?,
            src,
            Copier::Device,
        )
    }

    /// Reads `src` from PE `pe`.
    ///
    /// # Ordering
    /// With NVSHMEM semantics, unordered with other fetching operations unless a
    /// [`Ctx::fence`] separates them (docs/ordering.md).
    ///
    /// # Errors
    /// [`ShmemError::PeOutOfRange`]; an address error ([`ShmemError::NotInHeap`],
    /// `OutsideAllocation`, `Misaligned`, `FreedAllocation`); [`ShmemError::Queue`] if the
    /// data does not arrive within `RSHMEM_WAIT_TIMEOUT_MS`.
    pub fn get<T: Element>(&self, src: Sym<T>, pe: u32) -> Result<Vec<T>, ShmemError> {
        let mut out = vec![T::zeroed(); src.len()];
        self.get_into(src, pe, &mut out)?;
        Ok(out)
    }

    /// Reads `src` from PE `pe` into `out`.
    ///
    /// # Ordering
    /// As [`Ctx::get`].
    ///
    /// # Errors
    /// As [`Ctx::get`]; [`ShmemError::LengthMismatch`] if `out` and `src` differ in length.
    pub fn get_into<T: Element>(
        &self,
        src: Sym<T>,
        pe: u32,
        out: &mut [T],
    ) -> Result<(), ShmemError> {
        same_len(src.len(), out.len())?;
        self.get_checked(self.read_range(src.access(), pe)?, as_bytes_mut(out))
    }

    /// Reads the single element `src` from PE `pe`.
    ///
    /// # Ordering
    /// As [`Ctx::get`].
    ///
    /// # Errors
    /// As [`Ctx::get`]; [`ShmemError::LengthMismatch`] unless `src` is one element.
    pub fn g<T: Element>(&self, src: Sym<T>, pe: u32) -> Result<T, ShmemError> {
        let mut out = [T::zeroed()];
        self.get_into(src, pe, &mut out)?;
        let [value] = out;
        Ok(value)
    }

    /// Reads `len_bytes` bytes at `src` from PE `pe`; no alignment needed.
    ///
    /// # Ordering
    /// As [`Ctx::get`].
    ///
    /// # Errors
    /// As [`Ctx::put_bytes`]; [`ShmemError::Queue`] if the data does not arrive within
    /// `RSHMEM_WAIT_TIMEOUT_MS`.
    pub fn get_bytes(
        &self,
        src: SymAddr,
        len_bytes: usize,
        pe: u32,
    ) -> Result<Vec<u8>, ShmemError> {
        let mut out = vec![0; len_bytes];
        self.get_checked(
            self.read_range(byte_access(src, len_bytes as u64), pe)?,
            &mut out,
        )?;
        Ok(out)
    }

    /// Starts reading `src` from PE `pe` into this PE's part of `dst`, and returns at once.
    /// `dst` holds the data after the next [`Ctx::quiet`] (or barrier_all).
    ///
    /// # Ordering
    /// Not ordered by [`Ctx::fence`]; only quiet completes it (docs/ordering.md).
    ///
    /// # Errors
    /// [`ShmemError::LengthMismatch`] if `dst` and `src` differ in length;
    /// [`ShmemError::PeOutOfRange`]; an address error for either view
    /// ([`ShmemError::NotInHeap`], `OutsideAllocation`, `Misaligned`, `FreedAllocation`);
    /// [`ShmemError::Queue`] if the queue was lost.
    pub fn get_nbi<T: Element>(&self, dst: Sym<T>, src: Sym<T>, pe: u32) -> Result<(), ShmemError> {
        same_len(src.len(), dst.len())?;
        let source = self.read_range(src.access(), pe)?;
        let target = self.local_range(dst.access())?;
        tracing::trace!(
            target: TRACING_TARGET,
            pe = self.my_pe,
            peer = pe,
            op = "get_nbi",
            bytes = source.len
        );
        self.queue.get_into(source, target)?;
        Ok(())
    }

    /// Reads this PE's own part of `sym` with plain loads.
    ///
    /// # Ordering
    /// Sees this PE's own stores, and remote updates once they are visible to this PE (after
    /// a wait, test, quiet or barrier that observed them).
    ///
    /// # Errors
    /// An address error ([`ShmemError::NotInHeap`], `OutsideAllocation`, `Misaligned`,
    /// `FreedAllocation`).
    pub fn local<T: Element>(&self, sym: Sym<T>) -> Result<Vec<T>, ShmemError> {
        let range = self.local_range(sym.access())?;
        let mut out = vec![T::zeroed(); sym.len()];
        self.device.read_local(range, as_bytes_mut(&mut out));
        Ok(out)
    }

    /// Writes `values` to this PE's own part of `sym` with plain stores.
    ///
    /// # Ordering
    /// Visible to this PE at once, to peers after a later quiet or barrier_all.
    ///
    /// # Errors
    /// [`ShmemError::LengthMismatch`] if `values` and `sym` differ in length; an address error
    /// ([`ShmemError::NotInHeap`], `OutsideAllocation`, `Misaligned`, `FreedAllocation`).
    pub fn set_local<T: Element>(&self, sym: Sym<T>, values: &[T]) -> Result<(), ShmemError> {
        same_len(sym.len(), values.len())?;
        let range = self.local_range(sym.access())?;
        self.device.write_local(range, as_bytes(values));
        Ok(())
    }

    /// Issues a put of `data` to the checked range `dst`, copied by `copier`.
    pub(crate) fn put_checked(
        &self,
        dst: RemoteRange,
        data: &[u8],
        copier: Copier,
    ) -> Result<(), ShmemError> {
        tracing::trace!(
            target: TRACING_TARGET,
            pe = self.my_pe,
            peer = dst.pe.0,
            op = "put",
            offset = dst.offset,
            bytes = dst.len
        );
        self.queue.put(dst, data, copier)?;
        Ok(())
    }

    /// Reads the checked range `src` into `out` and waits for the data.
    pub(crate) fn get_checked(&self, src: RemoteRange, out: &mut [u8]) -> Result<(), ShmemError> {
        self.trace_get(src);
        // A backend that completes gets at issue copies straight into `out`, with no ticket.
        if self.queue.get_now(src, out)? {
            return Ok(());
        }
        let ticket = self.queue.get(src)?;
        self.get_finish(ticket, out, self.deadline())
    }

    /// Issues a get of the checked range `src`; [`Ctx::get_finish`] collects the data.
    pub(crate) fn get_issue(&self, src: RemoteRange) -> Result<Ticket, ShmemError> {
        self.trace_get(src);
        Ok(self.queue.get(src)?)
    }

    fn trace_get(&self, src: RemoteRange) {
        tracing::trace!(
            target: TRACING_TARGET,
            pe = self.my_pe,
            peer = src.pe.0,
            op = "get",
            offset = src.offset,
            bytes = src.len
        );
    }

    /// Waits until `deadline` for the get of `ticket` and copies its data into `out`.
    pub(crate) fn get_finish(
        &self,
        ticket: Ticket,
        out: &mut [u8],
        deadline: Instant,
    ) -> Result<(), ShmemError> {
        self.queue.wait_ticket(ticket, deadline)?;
        let data = self.queue.take_fetched(ticket);
        assert_eq!(
            data.len(),
            out.len(),
            "backend contract violation: a get of {} bytes returned {}",
            out.len(),
            data.len()
        );
        out.copy_from_slice(&data);
        Ok(())
    }
}
