//! Why a kernel of the device-side API cannot be compiled or launched.

use crate::cuda::error::DriverCallError;
use crate::cuda::nvrtc::NvrtcError;
use crate::error::QueueError;
use crate::types::Pe;

/// Why [`crate::cuda::CudaDevice::compile_kernel`] or [`super::DeviceKernel::launch`]
/// failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DeviceApiError {
    /// NVRTC is missing, or the source does not compile: the log names each error by file
    /// (`NAME.cu` for the kernel's source, `rshmem_device.cuh` for the header) and line.
    #[error(transparent)]
    Compile(#[from] NvrtcError),
    /// The kernel's name cannot name a kernel.
    #[error(
        "{name:?} is not a kernel name: give the name of an `extern \"C\" __global__` \
         function (letters, digits and underscores)"
    )]
    BadName {
        /// The name given.
        name: String,
    },
    /// The compiled source has no kernel of that name.
    #[error(
        "the source has no kernel named {name}: declare it `extern \"C\" __global__` so that \
         its name is not mangled"
    )]
    NoKernel {
        /// The name given.
        name: String,
    },
    /// A PE's device heap is not known to this PE.
    #[error(
        "{pe}'s Device segment is not known here: create this PE's and import every peer's \
         before launching a kernel"
    )]
    NotImported {
        /// The PE whose segment is missing.
        pe: Pe,
    },
    /// The proxy of this PE's kernels toward PEs of other nodes could not start.
    #[error("the proxy of this PE's kernels toward PEs of other nodes: {0}")]
    Proxy(String),
    /// The run has more PEs than a kernel's state describes.
    #[error("the device-side API describes at most {max} PEs and the run has {n_pes}")]
    TooManyPes {
        /// PEs of the run.
        n_pes: u32,
        /// `RSHMEM_MAX_PES`.
        max: usize,
    },
    /// A block has more threads than the kernel can have.
    #[error(
        "a block of {threads} threads is more than this kernel's {max} (its registers and the \
         GPU limit it)"
    )]
    BlockTooLarge {
        /// Threads of the block asked for.
        threads: u64,
        /// The kernel's most threads per block.
        max: u32,
    },
    /// A [`super::KernelArg::Heap`] offset is past the end of the PE's device heap.
    #[error("argument {index}: heap offset {offset} is past the end of the {heap_bytes}-byte heap")]
    ArgOutsideHeap {
        /// The argument's position.
        index: usize,
        /// The offset given.
        offset: u64,
        /// The heap's length.
        heap_bytes: u64,
    },
    /// A driver call failed (a kernel that faulted is reported by the next call on its
    /// stream).
    #[error(transparent)]
    Driver(#[from] DriverCallError),
    /// The queue could not take the launch.
    #[error(transparent)]
    Queue(#[from] QueueError),
}
