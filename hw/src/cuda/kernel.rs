//! The atomics kernel: one thread performs one atomic read-modify-write on a word of any GPU's
//! memory (or pinned host memory) with system-scope atomics, and writes the old value to
//! pinned host memory when it is wanted.
//!
//! It is CUDA C compiled once per process and compute capability by NVRTC into PTX, which the
//! driver then loads into each GPU's context. System scope because the word may be read by
//! the host (waits copy it out) and written by other GPUs over NVLink.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;

use super::error::{DriverCallError, During};
use super::nvrtc::{NvrtcError, arch, compile_ptx};
use crate::amo::{AmoKind, AmoOp, AmoWidth};

/// The kernel's name in [`SOURCE`].
const ENTRY: &str = "rshmem_amo";

/// The operations the kernel performs, by the code it is passed. `Set` and `Swap` are both an
/// exchange: `Set` just does not keep the old value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
enum Rmw {
    Fetch = 0,
    Exchange = 1,
    CompareSwap = 2,
    Add = 3,
    And = 4,
    Or = 5,
    Xor = 6,
}

impl Rmw {
    fn of(kind: AmoKind) -> Rmw {
        match kind {
            AmoKind::Fetch => Rmw::Fetch,
            AmoKind::Set | AmoKind::Swap => Rmw::Exchange,
            AmoKind::CompareSwap { .. } => Rmw::CompareSwap,
            AmoKind::Add => Rmw::Add,
            AmoKind::And => Rmw::And,
            AmoKind::Or => Rmw::Or,
            AmoKind::Xor => Rmw::Xor,
        }
    }
}

/// The kernel. Its operation codes are those of [`Rmw`] (a unit test checks they agree).
const SOURCE: &str = r#"
// Operation codes: Rmw in kernel.rs.
template <typename T>
__device__ T rmw(T *word, unsigned int op, T operand, T compare) {
    switch (op) {
    case 0: return atomicOr_system(word, (T)0);  // an atomic read
    case 1: return atomicExch_system(word, operand);
    case 2: return atomicCAS_system(word, compare, operand);
    case 3: return atomicAdd_system(word, operand);
    case 4: return atomicAnd_system(word, operand);
    case 5: return atomicOr_system(word, operand);
    default: return atomicXor_system(word, operand);
    }
}

// One thread: the read-modify-write on `target` (8 bytes if `wide`, else 4), then the old
// value, zero-extended, to `old_out` unless it is 0.
extern "C" __global__ void rshmem_amo(unsigned long long target, unsigned int op,
                                      unsigned int wide, unsigned long long operand,
                                      unsigned long long compare,
                                      unsigned long long old_out) {
    // Stream order already completed the operations issued before this one (a
    // put-with-signal's data among them); the fence orders their writes before this atomic
    // for every observer in the system, the host and the other GPUs included.
    __threadfence_system();
    unsigned long long old;
    if (wide) {
        old = rmw((unsigned long long *)target, op, operand, compare);
    } else {
        old = rmw((unsigned int *)target, op, (unsigned int)operand, (unsigned int)compare);
    }
    if (old_out) {
        *(volatile unsigned long long *)old_out = old;
    }
}
"#;

/// Why the atomics kernel cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum KernelError {
    /// NVRTC is missing or failed.
    #[error("the atomics kernel: {0}")]
    Nvrtc(#[from] NvrtcError),
    /// The driver refused the compiled kernel.
    #[error("the atomics kernel does not load: {0}")]
    Load(#[from] DriverCallError),
}

/// The atomics kernel loaded into one GPU's context.
#[derive(Debug)]
pub(crate) struct AmoKernel {
    function: CudaFunction,
}

impl AmoKernel {
    /// Compiles the kernel for `ctx`'s GPU (once per compute capability and process) and loads
    /// it into `ctx`.
    ///
    /// # Errors
    /// [`KernelError`] naming what failed.
    pub(crate) fn load(ctx: &Arc<CudaContext>) -> Result<AmoKernel, KernelError> {
        let (major, minor) = ctx
            .compute_capability()
            .during("cuDeviceGetAttribute(compute capability)")?;
        let ptx = ptx_for(major, minor)?;
        let module = ctx.load_module(ptx).during("cuModuleLoadData")?;
        let function = module.load_function(ENTRY).during("cuModuleGetFunction")?;
        // Asking for an attribute loads the function now. Under CUDA's lazy loading its first
        // launch would load it, which waits for the kernels running on the GPU: a deadlock
        // when a proxy performs a peer's atomic for a kernel that spins until it lands.
        function
            .max_threads_per_block()
            .during("cuFuncGetAttribute(max threads per block)")?;
        tracing::debug!(
            target: "rshmem::hw::cuda",
            gpu = ctx.ordinal(),
            "atomics kernel loaded for compute_{major}{minor}"
        );
        Ok(AmoKernel { function })
    }

    /// Enqueues `op` on the word at device address `target` on `stream` (one thread). The old
    /// value is written, zero-extended to 8 bytes, to `old_out` if given.
    ///
    /// # Safety
    /// `target` must be a word of `op`'s width, naturally aligned, in memory mapped for
    /// `stream`'s GPU, and `old_out` 8 bytes of pinned host memory; both must stay mapped
    /// until the work enqueued now has completed.
    pub(crate) unsafe fn enqueue(
        &self,
        stream: &CudaStream,
        target: u64,
        op: AmoOp,
        old_out: Option<u64>,
    ) -> Result<(), DriverCallError> {
        let code = Rmw::of(op.kind) as u32;
        let wide = u32::from(op.width == AmoWidth::W64);
        let compare = match op.kind {
            AmoKind::CompareSwap { compare } => compare,
            _ => 0,
        };
        let old_out = old_out.unwrap_or(0);
        let one_thread = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&self.function);
        launch
            .arg(&target)
            .arg(&code)
            .arg(&wide)
            .arg(&op.operand)
            .arg(&compare)
            .arg(&old_out);
        // SAFETY: the arguments match the kernel's parameters in order and type (u64, u32,
        // u32, u64, u64, u64), and the caller guarantees the addresses the kernel touches.
        unsafe { launch.launch(one_thread) }.during("cuLaunchKernel")?;
        Ok(())
    }
}

/// The kernel's PTX for compute capability `major.minor`, compiled on first use.
fn ptx_for(major: i32, minor: i32) -> Result<Ptx, KernelError> {
    static PTX: Mutex<BTreeMap<(i32, i32), Result<Ptx, NvrtcError>>> = Mutex::new(BTreeMap::new());
    let mut cache = PTX.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .entry((major, minor))
        .or_insert_with(|| compile_ptx(SOURCE, "rshmem_amo.cu", &arch(major, minor), &[]))
        .clone()
        .map_err(KernelError::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codes in the kernel's `switch` are those of `Rmw`, with the intrinsic each needs.
    #[test]
    fn kernel_codes_match_rmw() {
        for (rmw, intrinsic) in [
            (Rmw::Fetch, "atomicOr_system(word, (T)0)"),
            (Rmw::Exchange, "atomicExch_system(word, operand)"),
            (Rmw::CompareSwap, "atomicCAS_system(word, compare, operand)"),
            (Rmw::Add, "atomicAdd_system(word, operand)"),
            (Rmw::And, "atomicAnd_system(word, operand)"),
            (Rmw::Or, "atomicOr_system(word, operand)"),
        ] {
            let line = format!("case {}: return {intrinsic};", rmw as u32);
            assert!(SOURCE.contains(&line), "{rmw:?}: no line {line:?}");
        }
        assert!(SOURCE.contains("default: return atomicXor_system(word, operand);"));
        assert_eq!(Rmw::Xor as u32, 6, "Xor is the kernel's default case");
    }

    #[test]
    fn every_amo_kind_has_an_operation() {
        assert_eq!(Rmw::of(AmoKind::Set), Rmw::Exchange);
        assert_eq!(Rmw::of(AmoKind::Swap), Rmw::Exchange);
        assert_eq!(
            Rmw::of(AmoKind::CompareSwap { compare: 1 }),
            Rmw::CompareSwap
        );
        assert_eq!(Rmw::of(AmoKind::Fetch), Rmw::Fetch);
    }

    /// Without NVRTC (this machine when it has no CUDA toolkit) the error says so; with it,
    /// the kernel compiles.
    #[test]
    fn compiling_gives_ptx_or_a_typed_error() {
        match compile_ptx(SOURCE, "rshmem_amo.cu", "compute_90", &[]) {
            Ok(ptx) => assert!(ptx.to_src().contains(ENTRY)),
            Err(e) => assert_eq!(e, NvrtcError::NoNvrtc, "{e}"),
        }
    }
}
