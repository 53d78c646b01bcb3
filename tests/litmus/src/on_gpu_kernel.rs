//! Litmus tests as CUDA kernels on the device-side API: each PE's program becomes straight-line
//! device code, run many times in one launch with varied timing, so that a GPU shows its
//! outcomes at 10^5 executions a test in about a second.
//!
//! Every PE launches the same generated kernel (one block of one thread), which loops:
//!
//! 1. the PE resets its own copy of every variable to the test's initial value;
//! 2. `barrier_all`;
//! 3. the PE spins for a random 0 to [`MAX_DELAY_CYCLES`] cycles (its own generator, seeded
//!    per PE and launch), so that the PEs' programs overlap differently each time;
//! 4. the PE's program, each instruction a call of the device API (`rshmem_device.cuh`);
//! 5. `barrier_all` (quiet, then every PE arrives: every write is visible);
//! 6. the PE records the observables it owns (its registers, and the variables that live
//!    on it) for that execution.
//!
//! The device API has only the default context, so context-scoped fence and quiet run as the
//! global ones: stronger than the rules ask, which can hide an allowed outcome but never
//! produce a forbidden one. Nbi gets and fetches complete at once, one of the timings the
//! rules allow.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use hw::cuda::{CudaDevice, DeviceApiError, KernelArg, KernelOptions, ShareHeapError};
use hw::{Device, DeviceError, Instant, Launcher, MemKind, Queue, QueueError};
use model::litmus::{
    AmoOp, Cmp, GetKind, Instr, Litmus, Observable, Outcome, PutKind, SignalOp, Value,
};

use crate::on_cuda::shared_gpus;
use crate::{ExecutionError, PesFailed};

/// The longest random delay before a PE's program, in GPU cycles (about 1 µs on an H200).
pub const MAX_DELAY_CYCLES: u64 = 2_048;
/// Words between two variables: each on its own 128-byte line.
const VAR_STRIDE_WORDS: u64 = 16;
/// Where the records start in the heap; the variables come before.
const RECORDS_OFFSET: u64 = 64 << 10;
/// Executions per launch: a launch's records must fit the heap.
const BATCH: u32 = 20_000;
/// The device heap of each PE.
const HEAP_BYTES: u64 = 32 << 20;
/// A wait not satisfied within this long traps the kernel instead of hanging the GPU.
const WAIT_TIMEOUT_NS: u64 = 10_000_000_000;
/// The kernel's name.
const KERNEL: &str = "litmus_executions";

/// The observables PE `pe` records, in the order of `test.observables()`.
fn owned(test: &Litmus, pe: u32) -> Vec<(usize, Observable)> {
    test.observables()
        .into_iter()
        .enumerate()
        .filter(|(_, o)| match *o {
            Observable::Reg { pe: p, .. } => p == pe,
            Observable::Mem(loc) => loc.pe == pe,
        })
        .collect()
}

fn var(v: model::litmus::VarId) -> String {
    format!("(vars + {})", u64::from(v.0) * VAR_STRIDE_WORDS)
}

fn value(v: &Value) -> String {
    match v {
        Value::Const(c) => format!("{c}ull"),
        Value::Reg(r) => format!("r[{}]", r.0),
    }
}

fn cmp(c: Cmp) -> &'static str {
    match c {
        Cmp::Eq => "RSHMEM_CMP_EQ",
        Cmp::Ne => "RSHMEM_CMP_NE",
        Cmp::Gt => "RSHMEM_CMP_GT",
        Cmp::Ge => "RSHMEM_CMP_GE",
        Cmp::Lt => "RSHMEM_CMP_LT",
        Cmp::Le => "RSHMEM_CMP_LE",
    }
}

/// The device code of one instruction; `k` numbers it, for its source temporaries.
fn instruction(instr: &Instr, k: usize) -> String {
    match instr {
        Instr::Put {
            kind,
            dst,
            value: v,
            ..
        } => {
            let (d, pe, v) = (var(dst.var), dst.pe, value(v));
            match kind {
                PutKind::P => format!("rshmem_p({d}, {v}, {pe});"),
                PutKind::Put => format!("src[{k}] = {v}; rshmem_put({d}, &src[{k}], 1, {pe});"),
                PutKind::PutNbi => {
                    format!("src[{k}] = {v}; rshmem_putmem_nbi({d}, &src[{k}], 8, {pe});")
                }
            }
        }
        Instr::Get { kind, reg, src, .. } => {
            let (s, pe, r) = (var(src.var), src.pe, reg.0);
            match kind {
                GetKind::G => format!("r[{r}] = rshmem_g({s}, {pe});"),
                GetKind::Get => format!("rshmem_get(&r[{r}], {s}, 1, {pe});"),
                GetKind::GetNbi => format!("rshmem_getmem_nbi(&r[{r}], {s}, 8, {pe});"),
            }
        }
        Instr::Amo {
            width: model::litmus::AmoWidth::W32,
            ..
        } => format!("#error \"litmus on GPUs: no device form for {instr:?}\""),
        Instr::Amo { op, dst, fetch, .. } => {
            let (d, pe) = (var(dst.var), dst.pe);
            let call = match op {
                AmoOp::Fetch => format!("rshmem_atomic_fetch({d}, {pe})"),
                AmoOp::Set(v) => {
                    return format!("rshmem_atomic_set({d}, {}, {pe});", value(v));
                }
                AmoOp::Swap(v) => format!("rshmem_atomic_swap({d}, {}, {pe})", value(v)),
                AmoOp::CompareSwap { cond, new } => format!(
                    "rshmem_atomic_compare_swap({d}, {}, {}, {pe})",
                    value(cond),
                    value(new)
                ),
                AmoOp::Add(v) => format!("rshmem_atomic_fetch_add({d}, {}, {pe})", value(v)),
                AmoOp::Inc => format!("rshmem_atomic_fetch_add({d}, 1ull, {pe})"),
                AmoOp::And(v) => format!("rshmem_atomic_fetch_and({d}, {}, {pe})", value(v)),
                AmoOp::Or(v) => format!("rshmem_atomic_fetch_or({d}, {}, {pe})", value(v)),
                AmoOp::Xor(v) => format!("rshmem_atomic_fetch_xor({d}, {}, {pe})", value(v)),
            };
            match fetch {
                Some(r) => format!("r[{}] = {call};", r.0),
                None => format!("(void){call};"),
            }
        }
        Instr::PutSignal {
            dst,
            value: v,
            signal,
            op,
            signal_value,
            ..
        } => {
            let sig_op = match op {
                SignalOp::Set => "RSHMEM_SIGNAL_SET",
                SignalOp::Add => "RSHMEM_SIGNAL_ADD",
            };
            format!(
                "src[{k}] = {}; rshmem_put_signal({}, &src[{k}], 8, {}, {}, {sig_op}, {});",
                value(v),
                var(dst.var),
                var(signal.var),
                value(signal_value),
                dst.pe
            )
        }
        Instr::Fence { .. } => "rshmem_fence();".into(),
        Instr::Quiet { .. } => "rshmem_quiet();".into(),
        Instr::BarrierAll | Instr::SyncAll => "rshmem_barrier_all();".into(),
        Instr::Wait {
            var: v,
            cmp: c,
            value: x,
        } => format!("rshmem_wait_until({}, {}, {});", var(*v), cmp(*c), value(x)),
        Instr::SignalWait {
            var: v,
            cmp: c,
            value: x,
        } => format!(
            "rshmem_signal_wait_until({}, {}, {});",
            var(*v),
            cmp(*c),
            value(x)
        ),
        Instr::Load { reg, var: v } => {
            format!(
                "r[{}] = *(volatile unsigned long long *){};",
                reg.0,
                var(*v)
            )
        }
        Instr::Store { var: v, value: x } => {
            format!(
                "*(volatile unsigned long long *){} = {};",
                var(*v),
                value(x)
            )
        }
        // The second edition's forms (docs/litmus-format.md) have no device translation yet:
        // the kernel refuses to compile, naming the instruction.
        other => format!("#error \"litmus on GPUs: no device form for {other:?}\""),
    }
}

/// The CUDA source of `test`'s kernel: `litmus_executions(vars, records, executions, seed)`.
pub fn kernel_source(test: &Litmus) -> String {
    let n_vars = test.vars.len();
    let most_instrs = test.programs.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// {} (generated from the litmus test; one thread per PE)",
        test.name
    );
    let _ = writeln!(
        s,
        "extern \"C\" __global__ void {KERNEL}(unsigned long long *vars, unsigned long long \
         *records, unsigned int executions, unsigned long long seed) {{"
    );
    s.push_str("  const int me = rshmem_my_pe();\n");
    s.push_str("  unsigned long long rng = seed ^ (0x9e3779b97f4a7c15ull * (unsigned long long)(me + 1));\n");
    let _ = writeln!(s, "  unsigned long long src[{most_instrs}];");
    s.push_str("  for (unsigned int e = 0; e < executions; ++e) {\n");
    // 1. Reset this PE's variables.
    s.push_str("    switch (me) {\n");
    for pe in 0..test.n_pes {
        let _ = writeln!(s, "    case {pe}:");
        for v in 0..n_vars {
            let init = test
                .init
                .iter()
                .find(|(loc, _)| loc.pe == pe && usize::from(loc.var.0) == v)
                .map_or(0, |&(_, value)| value);
            let _ = writeln!(
                s,
                "      *(volatile unsigned long long *)(vars + {}) = {init}ull;",
                v as u64 * VAR_STRIDE_WORDS
            );
        }
        s.push_str("      break;\n");
    }
    s.push_str("    }\n    rshmem_barrier_all();\n");
    // 3. A random delay.
    s.push_str("    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;\n");
    let _ = writeln!(
        s,
        "    {{ long long until = clock64() + (long long)(rng % {MAX_DELAY_CYCLES}ull); \
         while (clock64() < until) {{}} }}"
    );
    let _ = writeln!(s, "    unsigned long long r[{}] = {{0}};", crate::N_REGS);
    // 4. The program.
    s.push_str("    switch (me) {\n");
    for (pe, program) in test.programs.iter().enumerate() {
        let _ = writeln!(s, "    case {pe}:");
        for (k, (instr, _)) in program.iter().enumerate() {
            let _ = writeln!(s, "      {}", instruction(instr, k));
        }
        s.push_str("      break;\n");
    }
    s.push_str("    }\n    rshmem_barrier_all();\n");
    // 6. The records.
    s.push_str("    switch (me) {\n");
    for pe in 0..test.n_pes {
        let owned = owned(test, pe);
        let _ = writeln!(s, "    case {pe}:");
        for (k, (_, o)) in owned.iter().enumerate() {
            let what = match *o {
                Observable::Reg { reg, .. } => format!("r[{}]", reg.0),
                Observable::Mem(loc) => format!("*(volatile unsigned long long *){}", var(loc.var)),
            };
            let _ = writeln!(
                s,
                "      records[(unsigned long long)e * {} + {k}] = {what};",
                owned.len().max(1)
            );
        }
        s.push_str("      break;\n");
    }
    s.push_str("    }\n  }\n}\n");
    s
}

/// How often each outcome appeared in `executions` executions of `test` on the GPUs, the
/// first launch seeded with `seed`.
///
/// # Errors
/// [`ExecutionError`]: what failed (the launch, a compile, a PE), naming the PEs.
pub fn run_on_gpu_kernel(
    test: &Litmus,
    executions: u32,
    seed: u64,
) -> Result<BTreeMap<Outcome, u64>, ExecutionError> {
    let cuda = shared_gpus(test.n_pes)?;
    let source = kernel_source(test);
    let (results, _) = cuda.launch(|dev| pe_records(&dev, test, &source, executions, seed))?;
    let records = PesFailed::collect(results, |f| format!("panicked: {}", f.message))?;
    let n_observables = test.observables().len();
    let owned: Vec<Vec<(usize, Observable)>> = (0..test.n_pes).map(|pe| owned(test, pe)).collect();
    let mut counts = BTreeMap::new();
    for e in 0..executions as usize {
        let mut outcome = vec![0; n_observables];
        for (pe, owned) in owned.iter().enumerate() {
            let width = owned.len().max(1);
            for (k, &(index, _)) in owned.iter().enumerate() {
                outcome[index] = records[pe][e * width + k];
            }
        }
        *counts.entry(Outcome(outcome)).or_insert(0) += 1;
    }
    Ok(counts)
}

/// Why one PE's part of a kernel run failed.
#[derive(Debug, thiserror::Error)]
enum PeKernelError {
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
}

/// One PE's part: its heap, the kernel, the launches; returns its records.
fn pe_records(
    dev: &CudaDevice,
    test: &Litmus,
    source: &str,
    executions: u32,
    seed: u64,
) -> Result<Vec<u64>, PeKernelError> {
    let deadline = || Instant(dev.now().0 + 120_000_000_000);
    hw::cuda::share_device_heap(dev, HEAP_BYTES, deadline())?;
    let options = KernelOptions {
        wait_timeout_ns: Some(WAIT_TIMEOUT_NS),
    };
    let kernel = dev.compile_kernel_with(source, KERNEL, &options);
    // Every PE has loaded its kernel before any launches: a launch's barrier waits for all.
    dev.exchange(&[], deadline())?;
    let kernel = kernel?;
    let queue = dev.create_queue()?;
    let width = owned(test, dev.pe().0).len().max(1) as u64;
    if RECORDS_OFFSET + u64::from(BATCH) * width * 8 > HEAP_BYTES
        || test.vars.len() as u64 * VAR_STRIDE_WORDS * 8 > RECORDS_OFFSET
    {
        return Err(PeKernelError::Layout {
            test: test.name.clone(),
        });
    }
    let mut records = Vec::with_capacity(executions as usize * width as usize);
    let mut done = 0;
    let mut launch = 0u64;
    while done < executions {
        let n = BATCH.min(executions - done);
        let args = [
            KernelArg::Heap(0),
            KernelArg::Heap(RECORDS_OFFSET),
            KernelArg::U32(n),
            KernelArg::U64(seed.wrapping_add(launch.wrapping_mul(0x9e37_79b9))),
        ];
        // SAFETY: the generated kernel takes (vars, records, executions, seed) as passed; it
        // touches the variables below RECORDS_OFFSET on every PE and `n` records of `width`
        // words from RECORDS_OFFSET (inside HEAP_BYTES: BATCH * width * 8 bytes fit), and
        // calls barrier_all with its one block, the same number of times on every PE; the
        // PEs' single blocks are co-resident even when they share a GPU.
        unsafe { kernel.launch(&queue, (1, 1, 1), (1, 1, 1), &args) }?;
        queue.quiet(deadline())?;
        let mut bytes = vec![0u8; (u64::from(n) * width * 8) as usize];
        let range = hw::LocalRange {
            kind: MemKind::Device,
            offset: RECORDS_OFFSET,
            len: bytes.len() as u64,
        };
        dev.read_local(range, &mut bytes);
        records.extend(
            bytes
                .chunks_exact(8)
                .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes"))),
        );
        done += n;
        launch += 1;
    }
    dev.exchange(&[], deadline())?;
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{catalogue_dir, load_paths};

    fn catalogue_test(file: &str) -> Litmus {
        let path = catalogue_dir().join(file);
        load_paths(&[path]).expect("the test loads").remove(0).test
    }

    /// Message passing through a fence: P0's case puts, fences, puts; P1's waits, then reads
    /// into the register it records; each PE resets its variables before the first barrier.
    #[test]
    fn message_passing_becomes_each_pes_calls_in_program_order() {
        let source = kernel_source(&catalogue_test("a2-mp-put-fence-put.litmus"));
        let program = source
            .split("switch (me)")
            .nth(2)
            .expect("the program's switch");
        let p0 = &program[..program.find("case 1:").expect("P1's case")];
        let put = p0.find("rshmem_put(").expect("a put");
        let fence = p0.find("rshmem_fence();").expect("a fence");
        assert!(put < fence, "{source}");
        assert!(p0[fence..].contains("rshmem_put("), "{source}");
        assert!(program.contains("rshmem_wait_until("), "{source}");
        assert_eq!(
            source.matches("rshmem_barrier_all();").count(),
            2,
            "{source}"
        );
        assert!(
            source.contains("records[(unsigned long long)e * 1 + 0] = r[0];"),
            "{source}"
        );
    }

    /// Every catalogue test turns into a kernel whose every PE has a case in each switch.
    #[test]
    fn every_catalogue_test_has_a_case_per_pe() {
        for file in load_paths(&[catalogue_dir()]).expect("the catalogue loads") {
            let test = file.test;
            let source = kernel_source(&test);
            for pe in 0..test.n_pes {
                assert_eq!(
                    source.matches(&format!("case {pe}:")).count(),
                    3,
                    "{}: {source}",
                    test.name
                );
            }
        }
    }
}
