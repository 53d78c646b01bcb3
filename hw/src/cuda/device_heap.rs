//! A symmetric device heap made outside `rshmem`: each PE creates one `Device` segment and
//! imports every PE's, as the runtime does at init. Tests and benchmarks of the device-side
//! API work in it without starting the runtime.

use crate::backend::Device;
use crate::error::{DeviceError, QueueError};
use crate::types::{Instant, MemKind, Pe, SegmentKey};

use super::CudaDevice;

/// Why a device heap could not be shared.
#[derive(Debug, thiserror::Error)]
pub enum ShareHeapError {
    /// This PE's segment could not be created, or a peer's could not be imported.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The exchange of the segments' keys did not complete.
    #[error(transparent)]
    Exchange(#[from] QueueError),
}

/// Creates this PE's `Device` segment of `heap_bytes` and imports every PE's (collective: every
/// PE of the run calls it): the symmetric heap that a test or benchmark of the device-side API
/// works in, as `Shmem` makes its own at init.
///
/// # Errors
/// [`ShareHeapError`] if the segment cannot be created or imported, or the exchange of keys
/// does not complete by `deadline`.
pub fn share_device_heap(
    dev: &CudaDevice,
    heap_bytes: u64,
    deadline: Instant,
) -> Result<(), ShareHeapError> {
    let key = dev.create_segment(MemKind::Device, heap_bytes)?;
    let keys = dev.exchange(&key.0, deadline)?;
    for (peer, bytes) in (0..).zip(keys.iter()) {
        dev.import_segment(Pe(peer), MemKind::Device, &SegmentKey(bytes.clone()))?;
    }
    Ok(())
}
