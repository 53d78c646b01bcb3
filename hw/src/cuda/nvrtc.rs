//! Compiling CUDA C to PTX with NVRTC, loaded at run time: the atomics kernel and the kernels
//! of the device-side API share this one path.
//!
//! PTX for a virtual architecture (`compute_90`) is what NVRTC produces here, and what the
//! driver then loads (it finishes the compilation for the GPU it runs on).

use std::panic::{AssertUnwindSafe, catch_unwind};

use cudarc::nvrtc::{self, CompileError, CompileOptions, Ptx};

use crate::common::threads::panic_message;

/// Why NVRTC gave no PTX.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NvrtcError {
    /// NVRTC's library could not be loaded.
    #[error(
        "NVRTC (libnvrtc.so) was not found; add the CUDA toolkit's library folder \
         (/usr/local/cuda/lib64) to LD_LIBRARY_PATH"
    )]
    NoNvrtc,
    /// The source does not compile, or NVRTC failed or panicked.
    #[error("NVRTC could not compile {file} for {arch}:\n{log}")]
    Compile {
        /// The file name the source was given (it prefixes each line of the log).
        file: String,
        /// The virtual architecture compiled for (`compute_90`).
        arch: String,
        /// NVRTC's log, `file(line): error: ...` per diagnostic, or its error.
        log: String,
    },
}

/// The virtual architecture of compute capability `major.minor` (`compute_90`).
pub(crate) fn arch(major: i32, minor: i32) -> String {
    format!("compute_{major}{minor}")
}

/// Compiles `source`, named `file` in diagnostics, to PTX for the virtual architecture `arch`,
/// with the extra NVRTC `options` (`-DNAME=VALUE`, ...).
///
/// # Errors
/// [`NvrtcError`] if NVRTC is missing or the source does not compile.
pub(crate) fn compile_ptx(
    source: &str,
    file: &str,
    arch: &str,
    options: &[String],
) -> Result<Ptx, NvrtcError> {
    // SAFETY: this opens libnvrtc by name and closes it again; loading runs the library's
    // initialisers, and nothing here relies on it staying unloaded.
    if !unsafe { nvrtc::sys::is_culib_present() } {
        return Err(NvrtcError::NoNvrtc);
    }
    // Why name the dialect: NVRTC's default differs between CUDA versions (11.8's predates
    // `static_assert` and `nullptr`), and the device API is C++17.
    let mut all_options = vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".to_owned(),
    ];
    all_options.extend_from_slice(options);
    let compile_options = CompileOptions {
        options: all_options,
        name: Some(file.into()),
        ..CompileOptions::default()
    };
    let compile_error = |log| NvrtcError::Compile {
        file: file.to_string(),
        arch: arch.to_string(),
        log,
    };
    // The bindings panic if a symbol is missing from the library they found.
    catch_unwind(AssertUnwindSafe(|| {
        nvrtc::compile_ptx_with_opts(source, compile_options)
    }))
    .map_err(|payload| compile_error(panic_message(&*payload)))?
    .map_err(|e| {
        compile_error(match e {
            CompileError::CompileError { log, .. } => log.to_string_lossy().into_owned(),
            other => other.to_string(),
        })
    })
}
