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
//! global ones (and `pe_quiet` as quiet): stronger than the rules ask, which can hide an
//! allowed outcome but never produce a forbidden one. A team's rendezvous counts on a word
//! after the variables, reset with them (`barrier_all` is the device API's, which needs every
//! PE). Nbi gets and fetches complete at once, one of the timings the
//! rules allow.
//!
//! The barrier-aligned start rarely shows weak outcomes; the stressed kernel
//! (`gpu_stress_kernel.rs`) runs many instances at once for that.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use hw::cuda::{CudaDevice, KernelArg, KernelOptions};
use hw::{Device, Instant, Launcher, Queue};
use model::litmus::{Litmus, Observable, Outcome, VarId};

use crate::gpu_instr::{DEVICE_HELPERS, NotOnGpu, Spelling, longest_program, program_cases};
use crate::gpu_run::{
    GpuRunError, HEAP_BYTES, PeKernelError, WAIT_TIMEOUT_NS, count_outcomes, initial_value, owned,
    read_words,
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
/// The kernel's name.
const KERNEL: &str = "litmus_executions";

/// The C expression of PE `me`'s copy of `v` in the plain kernel: its own 128-byte line.
fn var(v: VarId) -> String {
    format!("(vars + {})", u64::from(v.0) * VAR_STRIDE_WORDS)
}

/// The words of each PE's copy of a test: its variables, then one counter per team
/// (`Litmus::team_sets`) for the team rendezvous.
fn words(test: &Litmus) -> usize {
    test.vars.len() + test.team_sets().len()
}

/// The CUDA source of `test`'s kernel: `litmus_executions(vars, records, executions, seed)`.
///
/// # Errors
/// [`NotOnGpu`] if the test holds an instruction the generator does not translate.
pub fn kernel_source(test: &Litmus) -> Result<String, NotOnGpu> {
    let n_vars = test.vars.len();
    let barrier = |_: usize| "rshmem_barrier_all();".to_string();
    let team_counter = |t: usize| var(VarId((n_vars + t) as u16));
    let program = program_cases(
        test,
        &Spelling {
            var: &var,
            barrier: &barrier,
            team_counter: &team_counter,
        },
        "    ",
    )?;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// {} (generated from the litmus test; one thread per PE)",
        test.name
    );
    s.push_str(DEVICE_HELPERS);
    let _ = writeln!(
        s,
        "extern \"C\" __global__ void {KERNEL}(unsigned long long *vars, unsigned long long \
         *records, unsigned int executions, unsigned long long seed) {{"
    );
    s.push_str("  const int me = rshmem_my_pe();\n");
    s.push_str("  unsigned long long rng = seed ^ (0x9e3779b97f4a7c15ull * (unsigned long long)(me + 1));\n");
    let _ = writeln!(s, "  unsigned long long src[{}];", longest_program(test));
    s.push_str("  for (unsigned int e = 0; e < executions; ++e) {\n");
    // 1. Reset this PE's variables and team counters (after the last execution's final
    // barrier, before this one's first: no PE counts on them meanwhile).
    s.push_str("    switch (me) {\n");
    for pe in 0..test.n_pes {
        let _ = writeln!(s, "    case {pe}:");
        for v in 0..words(test) {
            let init = if v < n_vars {
                initial_value(test, pe, v)
            } else {
                0
            };
            let _ = writeln!(
                s,
                "      *(volatile unsigned long long *)(vars + {}) = {init}ull;",
                v as u64 * VAR_STRIDE_WORDS,
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
    s.push_str(&program);
    s.push_str("    rshmem_barrier_all();\n");
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
    Ok(s)
}

/// How often each outcome appeared in `executions` executions of `test` on the GPUs, the
/// first launch seeded with `seed`; PE `i` runs on `gpus[i % len]`, or without `gpus` on GPU
/// `i % n`.
///
/// # Errors
/// [`GpuRunError`]: the test is not on GPU, or what failed (the launch, a compile, a PE),
/// naming the PEs.
pub fn run_on_gpu_kernel(
    test: &Litmus,
    executions: u32,
    seed: u64,
    gpus: Option<&[u32]>,
) -> Result<BTreeMap<Outcome, u64>, GpuRunError> {
    let source = kernel_source(test)?;
    let cuda = shared_gpus(test.n_pes, gpus)?;
    let (results, _) = cuda
        .launch(|dev| pe_records(&dev, test, &source, executions, seed))
        .map_err(ExecutionError::from)?;
    let records = PesFailed::collect(results, |f| format!("panicked: {}", f.message))
        .map_err(ExecutionError::from)?;
    Ok(count_outcomes(test, &records, executions as usize))
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
        || words(test) as u64 * VAR_STRIDE_WORDS * 8 > RECORDS_OFFSET
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
        records.extend(read_words(dev, RECORDS_OFFSET, u64::from(n) * width));
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
        let source = kernel_source(&catalogue_test("a2-mp-put-fence-put.litmus")).expect("on GPU");
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

    /// Every catalogue test not listed as refused turns into a kernel whose every PE has a
    /// case in each switch.
    #[test]
    fn every_catalogue_test_has_a_case_per_pe() {
        for (test, source) in crate::gpu_instr::catalogue_sources(kernel_source) {
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
