//! Pinned staging buffers for copies between host bytes and GPU memory.
//!
//! A copy from or to pageable memory is not asynchronous, and a pinned buffer must not be
//! reused while a copy that reads or writes it is in flight. So each operation takes a buffer
//! from the pool and gives it back only when its completion was observed.

use std::sync::Arc;

use cudarc::driver::CudaContext;

use super::error::DriverCallError;
use super::memory::Pinned;

/// The smallest buffer allocated: most operations move a word, and pinning is slow.
const MIN_BUFFER_BYTES: usize = 4096;

/// Free pinned buffers of one PE.
#[derive(Debug)]
pub(crate) struct StagingPool {
    ctx: Arc<CudaContext>,
    free: Vec<Pinned>,
}

impl StagingPool {
    pub(crate) fn new(ctx: Arc<CudaContext>) -> StagingPool {
        StagingPool {
            ctx,
            free: Vec::new(),
        }
    }

    /// A buffer of at least `len` bytes: a free one, or a new one of the next power of two.
    pub(crate) fn take(&mut self, len: usize) -> Result<Pinned, DriverCallError> {
        match self.free.iter().position(|b| b.len() >= len) {
            Some(i) => Ok(self.free.swap_remove(i)),
            None => Pinned::new(&self.ctx, len.max(MIN_BUFFER_BYTES).next_power_of_two()),
        }
    }

    /// Returns a buffer no copy uses any more.
    pub(crate) fn give_back(&mut self, buffer: Pinned) {
        self.free.push(buffer);
    }
}
