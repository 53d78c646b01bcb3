//! The CUDA backend's errors: why CUDA cannot be used at all, and which driver call failed.

use cudarc::driver::{DriverError, sys};

use crate::error::{DeviceError, LaunchError, QueueError};

/// Why the CUDA backend cannot run on this machine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CudaUnavailable {
    /// The driver library could not be loaded.
    #[error(
        "the CUDA driver library (libcuda.so) was not found; install the NVIDIA driver or add \
         the folder that holds libcuda.so.1 to LD_LIBRARY_PATH"
    )]
    NoDriver,
    /// The driver loaded but sees no GPU.
    #[error("the CUDA driver sees no GPU (check CUDA_VISIBLE_DEVICES and nvidia-smi)")]
    NoGpu,
    /// A driver call failed while taking the inventory.
    #[error("the CUDA driver failed: {0}")]
    Driver(#[from] DriverCallError),
    /// Loading the driver or one of its symbols panicked (an old driver lacks a symbol the
    /// bindings need, for instance).
    #[error("loading the CUDA driver failed: {0}")]
    Load(String),
}

/// A driver call that failed: the call and the driver's name of the error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed with {error}")]
pub struct DriverCallError {
    /// The driver function, as CUDA names it (`cuMemCreate`).
    pub call: &'static str,
    /// The driver's name of the error (`CUDA_ERROR_OUT_OF_MEMORY`).
    pub error: String,
}

impl DriverCallError {
    /// Whether the driver ran out of memory.
    pub(crate) fn is_out_of_memory(&self) -> bool {
        self.error == "CUDA_ERROR_OUT_OF_MEMORY"
    }
}

/// Names the driver call a [`DriverError`] came from.
pub(crate) trait During<T> {
    /// The result with the failing call named.
    fn during(self, call: &'static str) -> Result<T, DriverCallError>;
}

impl<T> During<T> for Result<T, DriverError> {
    fn during(self, call: &'static str) -> Result<T, DriverCallError> {
        self.map_err(|e| DriverCallError {
            call,
            error: error_name(e),
        })
    }
}

impl During<()> for sys::CUresult {
    fn during(self, call: &'static str) -> Result<(), DriverCallError> {
        self.result().during(call)
    }
}

/// The driver's name of `e` (`CUDA_ERROR_INVALID_VALUE`), or its number if the driver has no
/// name for it.
fn error_name(e: DriverError) -> String {
    e.error_name().map_or_else(
        |_| format!("CUresult {}", e.0 as u32),
        |name| name.to_string_lossy().into_owned(),
    )
}

impl From<DriverCallError> for DeviceError {
    fn from(e: DriverCallError) -> Self {
        DeviceError::Lost(e.to_string())
    }
}

impl From<DriverCallError> for QueueError {
    fn from(e: DriverCallError) -> Self {
        QueueError::Lost(e.to_string())
    }
}

impl From<DriverCallError> for LaunchError {
    fn from(e: DriverCallError) -> Self {
        LaunchError::Init(e.to_string())
    }
}

impl From<CudaUnavailable> for LaunchError {
    fn from(e: CudaUnavailable) -> Self {
        LaunchError::Init(e.to_string())
    }
}
