//! Host-initiated operations to PEs of other nodes: requests to their proxies
//! (`cuda/remote/`), each complete when it returns.
//!
//! Each one first drains the queue's stream, so it is performed after every operation issued
//! before it on this queue; and it completes before it returns, so everything after it on the
//! queue is performed after it. Delivery therefore stays in issue order to every target, as
//! the rest of the queue keeps it, and fence and quiet need nothing more for these.

use super::CudaQueue;
use super::cpu::on_host;
use crate::amo::AmoOp;
use crate::cuda::error::During;
use crate::cuda::remote::Remote;
use crate::error::QueueError;
use crate::types::{LocalRange, RemoteRange, Ticket};

impl CudaQueue {
    /// The path to `range`'s PE if it is on another node.
    pub(super) fn remote_path(&self, range: RemoteRange) -> Option<&Remote> {
        self.ctx.world.remote_to(range.pe)
    }

    /// [`crate::Queue::put`] to a PE of another node.
    pub(super) fn put_remote(
        &self,
        remote: &Remote,
        dst: RemoteRange,
        data: &[u8],
    ) -> Result<Ticket, QueueError> {
        self.drain()?;
        remote.put(dst.pe, dst.kind.into(), dst.offset, data)?;
        Ok(self.done(None))
    }

    /// [`crate::Queue::put_from_local`] to a PE of another node: this PE's bytes are read
    /// once the stream's earlier operations are done, then sent.
    pub(super) fn put_from_local_remote(
        &self,
        remote: &Remote,
        dst: RemoteRange,
        src: LocalRange,
    ) -> Result<Ticket, QueueError> {
        self.drain()?;
        let data = self.read_own(src)?;
        remote.put(dst.pe, dst.kind.into(), dst.offset, &data)?;
        Ok(self.done(None))
    }

    /// [`crate::Queue::get`] from a PE of another node.
    pub(super) fn get_remote(
        &self,
        remote: &Remote,
        src: RemoteRange,
    ) -> Result<Ticket, QueueError> {
        self.drain()?;
        let mut bytes = vec![0u8; src.len as usize];
        remote.get(src.pe, src.kind.into(), src.offset, &mut bytes)?;
        Ok(self.done(Some(bytes)))
    }

    /// [`crate::Queue::get_into`] from a PE of another node: the bytes arrive here, then
    /// land in this PE's range before this returns.
    pub(super) fn get_into_remote(
        &self,
        remote: &Remote,
        src: RemoteRange,
        dst: LocalRange,
    ) -> Result<Ticket, QueueError> {
        self.drain()?;
        let mut bytes = vec![0u8; src.len as usize];
        remote.get(src.pe, src.kind.into(), src.offset, &mut bytes)?;
        self.write_own(dst, &bytes)?;
        Ok(self.done(None))
    }

    /// [`crate::Queue::amo`] on a word of a PE of another node.
    pub(super) fn amo_remote(
        &self,
        remote: &Remote,
        dst: RemoteRange,
        op: AmoOp,
        fetch: bool,
    ) -> Result<Ticket, QueueError> {
        self.drain()?;
        let old = remote.amo(dst.pe, dst.kind.into(), dst.offset, op)?;
        Ok(self.done(fetch.then(|| old.to_le_bytes().to_vec())))
    }

    /// The bytes of this PE's own `src`, the stream drained.
    fn read_own(&self, src: LocalRange) -> Result<Vec<u8>, QueueError> {
        let len = src.len as usize;
        let mut out = vec![0u8; len];
        let from = self.local(src, "put_from_local");
        if on_host(src.kind) {
            // SAFETY: `from` is inside this PE's host segment (checked by `local`).
            unsafe { self.read_on_host(from, &mut out) }?;
            return Ok(out);
        }
        if len == 0 {
            return Ok(out);
        }
        let staging = self.ctx.staging.borrow_mut().take(len)?;
        self.copy(staging.addr(), from, len)?;
        self.stream.synchronize().during("cuStreamSynchronize")?;
        // SAFETY: the copy into the buffer has completed.
        unsafe {
            std::ptr::copy_nonoverlapping(staging.addr() as *const u8, out.as_mut_ptr(), len);
        }
        self.ctx.staging.borrow_mut().give_back(staging);
        Ok(out)
    }

    /// Writes `data` into this PE's own `dst` and waits until it is there.
    fn write_own(&self, dst: LocalRange, data: &[u8]) -> Result<(), QueueError> {
        let to = self.local(dst, "get_into");
        if on_host(dst.kind) {
            // SAFETY: `to` is inside this PE's host segment (checked by `local`); `data` is
            // a buffer of this function's caller.
            unsafe { self.copy_on_host(to, data.as_ptr() as u64, dst.len) }?;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let staging = self.stage(data)?;
        self.copy(to, staging.addr(), data.len())?;
        self.stream.synchronize().during("cuStreamSynchronize")?;
        self.ctx.staging.borrow_mut().give_back(staging);
        Ok(())
    }
}
