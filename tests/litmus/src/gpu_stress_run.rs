//! The host side of a stressed run ([`crate::stress_kernel_source`]): each PE writes the
//! launch's plan into its heap, launches its grid, and after every PE's kernel has finished
//! reads its records and the final values of its words; PE 0 decides, launch by launch,
//! whether the run goes on (the executions asked for, within the time box).

use std::collections::BTreeMap;
use std::time::{Duration, Instant as WallClock};

use hw::cuda::{CudaDevice, KernelArg, KernelOptions};
use hw::{Device, Instant, Launcher, Queue};
use model::litmus::{Litmus, Observable, Outcome};

use crate::gpu_run::{
    GpuRunError, HEAP_BYTES, PeKernelError, WAIT_TIMEOUT_NS, count_outcomes, owned, read_words,
    write_u32s,
};
use crate::gpu_stress_kernel::{STRESS_KERNEL, instance_words, record_width, stress_kernel_source};
use crate::gpu_stress_plan::{LaunchPlan, SCRATCH_WORDS, StressOptions, VARS_WORDS};
use crate::on_cuda::shared_gpus;
use crate::{ExecutionError, PesFailed};

/// The start gate's counter (PE 0's copy counts), alone on its line.
const GATE_OFFSET: u64 = 0;
/// How many of this PE's instances have finished this launch (a 32-bit word), on its own line.
const FINISHED_OFFSET: u64 = 128;
/// The test words, then the stress scratch.
const VARS_OFFSET: u64 = 4096;
/// `roles` of this PE (one 32-bit word a thread).
const ROLES_OFFSET: u64 = VARS_OFFSET + (VARS_WORDS as u64 + SCRATCH_WORDS as u64) * 8;
/// Room for `roles`: 64 Ki threads.
const ROLES_BYTES: u64 = 256 << 10;
/// `slots` (one 32-bit word per instance word).
const SLOTS_OFFSET: u64 = ROLES_OFFSET + ROLES_BYTES;
/// Room for `slots`: as many as the test words.
const SLOTS_BYTES: u64 = VARS_WORDS as u64 * 4;
/// The stress targets.
const TARGETS_OFFSET: u64 = SLOTS_OFFSET + SLOTS_BYTES;
/// The instances' records.
const RECORDS_OFFSET: u64 = TARGETS_OFFSET + 4096;
/// How long a PE waits for the others at a rendezvous.
const RENDEZVOUS_NS: u64 = 60_000_000_000;

/// What a stressed run of one test gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StressedRun {
    /// How often each outcome appeared.
    pub counts: BTreeMap<Outcome, u64>,
    /// Executions run: fewer than asked for if the time box ended the run.
    pub executions: u64,
    /// Launches they took.
    pub launches: u64,
}

/// Runs up to `executions` executions of `test` as stressed kernels on the GPUs, at most
/// `options.instances` a launch, launching no more after `time_box` (`Duration::MAX`: no
/// limit); launch `k`'s plan comes from `seed` and `k`. PE `i` runs on `gpus[i % len]`, or
/// without `gpus` on GPU `i % n`.
///
/// # Errors
/// [`GpuRunError`]: the test is not on GPU, or what failed, naming the PEs.
pub fn run_stressed_on_gpu(
    test: &Litmus,
    options: &StressOptions,
    executions: u64,
    seed: u64,
    time_box: Duration,
    gpus: Option<&[u32]>,
) -> Result<StressedRun, GpuRunError> {
    let source = stress_kernel_source(test)?;
    let cuda = shared_gpus(test.n_pes, gpus)?;
    let (results, _) = cuda
        .launch(|dev| pe_stressed(&dev, test, &source, options, executions, seed, time_box))
        .map_err(ExecutionError::from)?;
    let pes = PesFailed::collect(results, |f| format!("panicked: {}", f.message))
        .map_err(ExecutionError::from)?;
    let launches = pes[0].1;
    let records: Vec<Vec<u64>> = pes.into_iter().map(|(records, _)| records).collect();
    let width = owned(test, 0).len().max(1);
    let done = records[0].len() / width;
    Ok(StressedRun {
        counts: count_outcomes(test, &records, done),
        executions: done as u64,
        launches,
    })
}

/// One PE's part: its records (per execution, the values of the observables it owns, as
/// [`count_outcomes`] reads them) and the number of launches.
fn pe_stressed(
    dev: &CudaDevice,
    test: &Litmus,
    source: &str,
    options: &StressOptions,
    executions: u64,
    seed: u64,
    time_box: Duration,
) -> Result<(Vec<u64>, u64), PeKernelError> {
    let started = WallClock::now();
    let deadline = || Instant(dev.now().0 + RENDEZVOUS_NS);
    let me = dev.pe().0;
    let n_pes = test.n_pes;
    let words = instance_words(test);
    let width = u64::from(record_width(test));
    let threads = u64::from(options.threads_per_pe(n_pes));
    if threads * 4 > ROLES_BYTES
        || RECORDS_OFFSET + u64::from(options.instances) * width * 8 > HEAP_BYTES
    {
        return Err(PeKernelError::Layout {
            test: test.name.clone(),
        });
    }
    hw::cuda::share_device_heap(dev, HEAP_BYTES, deadline())?;
    let kernel = dev.compile_kernel_with(
        source,
        STRESS_KERNEL,
        &KernelOptions {
            wait_timeout_ns: Some(WAIT_TIMEOUT_NS),
        },
    );
    if me == 0 {
        write_u32s(dev, GATE_OFFSET, &[0, 0]);
    }
    // Every PE has loaded its kernel, and the gate is 0, before any launches.
    dev.exchange(&[], deadline())?;
    let kernel = kernel?;
    let queue = dev.create_queue()?;
    let owned = owned(test, me);
    let blocks = options.blocks_per_pe(n_pes);
    let mut records = Vec::new();
    let mut done = 0u64;
    let mut launch = 0u64;
    loop {
        let n = u64::from(options.instances).min(executions - done) as u32;
        let plan = LaunchPlan::new(n_pes, words, options, n, seed, launch)?;
        write_u32s(dev, ROLES_OFFSET, &plan.roles[me as usize]);
        write_u32s(dev, SLOTS_OFFSET, &plan.slots);
        write_u32s(dev, TARGETS_OFFSET, &plan.targets);
        write_u32s(dev, FINISHED_OFFSET, &[0]);
        let gate_target = (launch + 1) * u64::from(blocks) * u64::from(n_pes);
        let args = [
            KernelArg::Heap(VARS_OFFSET),
            KernelArg::Heap(ROLES_OFFSET),
            KernelArg::Heap(SLOTS_OFFSET),
            KernelArg::Heap(TARGETS_OFFSET),
            KernelArg::Heap(RECORDS_OFFSET),
            KernelArg::Heap(GATE_OFFSET),
            KernelArg::U64(gate_target),
            KernelArg::Heap(FINISHED_OFFSET),
            KernelArg::U32(n),
            KernelArg::U32(plan.targets.len() as u32),
            KernelArg::U32(plan.stress_iterations),
            KernelArg::U32(plan.pattern as u32),
            KernelArg::U32(plan.pre_stress_iterations),
            KernelArg::U32(plan.max_delay_cycles),
            KernelArg::U64(plan.kernel_seed),
        ];
        // SAFETY: the generated kernel takes these fifteen parameters in this order. Each
        // thread reads its entry of `roles` (blocks * threads_per_block entries, written
        // above), the slots and targets of the plan (written above, inside their regions), and
        // touches the words those name: slots below VARS_WORDS and targets below VARS_WORDS +
        // SCRATCH_WORDS, on this PE and on its peers at the same offsets. A test thread bumps
        // this PE's `finished` word and writes its instance's record (below `instances *
        // width` words from RECORDS_OFFSET, inside HEAP_BYTES, checked above). Every PE's
        // blocks meet at the gate on PE 0, which counts blocks_in_all blocks a launch: at most
        // one per SM of the shared GPU, so all are resident at once; a wait that is never
        // satisfied traps after WAIT_TIMEOUT_NS.
        unsafe {
            kernel.launch(
                &queue,
                (blocks, 1, 1),
                (options.threads_per_block, 1, 1),
                &args,
            )
        }?;
        queue.quiet(deadline())?;
        // Every PE's kernel has finished: the words hold their final values.
        dev.exchange(&[], deadline())?;
        let regs = read_words(dev, RECORDS_OFFSET, u64::from(n) * width);
        let memory = if owned.iter().any(|(_, o)| matches!(o, Observable::Mem(_))) {
            let top = plan.slots.iter().copied().max().unwrap_or(0);
            read_words(dev, VARS_OFFSET, u64::from(top) + 1)
        } else {
            Vec::new()
        };
        for i in 0..n as usize {
            let mut next_reg = 0;
            for (_, o) in &owned {
                records.push(match *o {
                    Observable::Reg { .. } => {
                        next_reg += 1;
                        regs[i * width as usize + next_reg - 1]
                    }
                    Observable::Mem(loc) => {
                        memory[plan.slots[i * words as usize + usize::from(loc.var.0)] as usize]
                    }
                });
            }
            if owned.is_empty() {
                records.push(0);
            }
        }
        done += u64::from(n);
        launch += 1;
        // PE 0 decides for all, after everyone read this launch's words.
        let go_on = u8::from(done < executions && started.elapsed() < time_box);
        let decisions = dev.exchange(&[go_on], deadline())?;
        if decisions[0].first() != Some(&1) {
            break;
        }
    }
    Ok((records, launch))
}
