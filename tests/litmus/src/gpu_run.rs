//! What the plain and the stressed GPU runs share on the host: their error, which PE records
//! which observable, the tests' initial values, and the counting of outcomes from the PEs'
//! records.

use std::collections::BTreeMap;

use hw::cuda::{CudaDevice, DeviceApiError, ShareHeapError};
use hw::{Device, DeviceError, MemKind, QueueError};
use model::litmus::{Litmus, Observable, Outcome};

use crate::ExecutionError;
use crate::gpu_instr::NotOnGpu;
use crate::gpu_stress_plan::PlanError;

/// Each PE's device heap for a kernel run.
pub(crate) const HEAP_BYTES: u64 = 32 << 20;
/// A wait not satisfied within this long traps the kernel instead of hanging the GPU.
pub(crate) const WAIT_TIMEOUT_NS: u64 = 10_000_000_000;

/// Why a litmus test gave no outcomes on the GPUs.
#[derive(Debug, thiserror::Error)]
pub enum GpuRunError {
    /// The test holds an instruction the kernel generator does not translate.
    #[error(transparent)]
    NotOnGpu(#[from] NotOnGpu),
    /// The GPUs could not be had, or a PE failed (a compile, a launch, a timed-out wait).
    #[error(transparent)]
    Execution(#[from] ExecutionError),
}

/// The observables PE `pe` records, each with its index in `test.observables()`: its
/// registers and the variables that live on it.
pub(crate) fn owned(test: &Litmus, pe: u32) -> Vec<(usize, Observable)> {
    test.observables()
        .into_iter()
        .enumerate()
        .filter(|(_, o)| match *o {
            Observable::Reg { pe: p, .. } => p == pe,
            Observable::Mem(loc) => loc.pe == pe,
        })
        .collect()
}

/// The initial value of PE `pe`'s copy of variable `var`.
pub(crate) fn initial_value(test: &Litmus, pe: u32, var: usize) -> u64 {
    test.init
        .iter()
        .find(|(loc, _)| loc.pe == pe && usize::from(loc.var.0) == var)
        .map_or(0, |&(_, value)| value)
}

/// How often each outcome appeared in `executions` executions, from each PE's records: for
/// every execution in turn, the values of the observables it owns ([`owned`]), in that
/// order, or one unused word if it owns none.
pub(crate) fn count_outcomes(
    test: &Litmus,
    records: &[Vec<u64>],
    executions: usize,
) -> BTreeMap<Outcome, u64> {
    let n_observables = test.observables().len();
    let owned: Vec<Vec<(usize, Observable)>> = (0..test.n_pes).map(|pe| owned(test, pe)).collect();
    let mut counts = BTreeMap::new();
    for e in 0..executions {
        let mut outcome = vec![0; n_observables];
        for (pe, owned) in owned.iter().enumerate() {
            let width = owned.len().max(1);
            for (k, &(index, _)) in owned.iter().enumerate() {
                outcome[index] = records[pe][e * width + k];
            }
        }
        *counts.entry(Outcome(outcome)).or_insert(0) += 1;
    }
    counts
}

/// Why one PE's part of a kernel run failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PeKernelError {
    /// The PEs' device heaps could not be shared.
    #[error(transparent)]
    Heap(#[from] ShareHeapError),
    /// A rendezvous or the wait for a launch did not complete.
    #[error(transparent)]
    Queue(#[from] QueueError),
    /// The kernel did not compile or launch.
    #[error(transparent)]
    Kernel(#[from] DeviceApiError),
    /// The device had no queue to give.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The test does not fit the kernel's heap layout.
    #[error("{test} has too many variables or observables for the kernel's heap layout")]
    Layout {
        /// The test's name.
        test: String,
    },
    /// A stressed launch could not be planned.
    #[error(transparent)]
    Plan(#[from] PlanError),
}

/// `words` 64-bit words of this PE's device heap from `offset`.
pub(crate) fn read_words(dev: &CudaDevice, offset: u64, words: u64) -> Vec<u64> {
    let mut bytes = vec![0u8; (words * 8) as usize];
    let range = hw::LocalRange {
        kind: MemKind::Device,
        offset,
        len: bytes.len() as u64,
    };
    dev.read_local(range, &mut bytes);
    bytes
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
        .collect()
}

/// Writes `words` (32-bit) into this PE's device heap at `offset`.
pub(crate) fn write_u32s(dev: &CudaDevice, offset: u64, words: &[u32]) {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let range = hw::LocalRange {
        kind: MemKind::Device,
        offset,
        len: bytes.len() as u64,
    };
    dev.write_local(range, &bytes);
}
