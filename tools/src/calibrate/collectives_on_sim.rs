//! The collective benchmark on the simulator: each collective as the CUDA device API does it
//! (`rshmem_device.cuh`), by one block per PE, on `n_pes` PEs of the topology, launched once
//! per collective (`on_stream`) or looped in one launch (`in_kernel`), timed on PE 0 and
//! computed as the benchmark computes it, so a simulated line compares one to one with the
//! measured line of the same name.
//!
//! The device API's barrier is thread 0's fence, its epoch stored into its slot on every
//! PE, and a poll of its own slots; here the same, with `p` and `wait_until`. The pushed
//! reduction, fcollect and alltoall (small enough for the scratch) are puts, a fence and
//! flags, as on the GPU. Broadcast and the pulled fcollect, alltoall and reduction pull with
//! the block's loads, which the
//! simulator has no mover for: each pull of `bytes` from PE `j` is simulated as the mirror
//! push, a put of `bytes` by the block to PE `j`. It costs the block's copy curve as the
//! pull does, and loads the switch links as the pull does with the directions swapped (the
//! root's link into the switch becomes its link out of it, which an NVSwitch board has as
//! fast), and its completion, a round trip, is the pull's too. The data is not checked:
//! the benchmark checks it on the GPUs.

use std::cell::Cell;

use anyhow::{Context, bail};
use hw::{Backend, Cmp};
use rshmem::{Config, Dim3, KernelThread, Shmem, ShmemError, Sym};
use sim::{Machine, Sim};

use super::collectives::{
    Collective, Form, PUSH_COPY_BYTES, SCRATCH_BYTES, copy_pushes, reduce_pushes,
};
use crate::bench::lines::{Line, gbps, us_per_op};

/// Collectives of each measurement at most, where the benchmark runs 1000: enough to
/// average the jitter's draws, at a tenth of the simulation's cost.
const MAX_ITERS: u32 = 100;

/// Bytes one PE copies per measurement at most: the benchmark's 20 fcollects of 64 MiB over
/// 8 PEs (10 GiB) would cost seconds per run of a fit when the simulator copied every payload,
/// as it did before pulls dropped theirs ([`DROP_PAYLOADS_FROM`]). Fewer collectives change
/// only how the jitter averages; at least one is made.
const MAX_BYTES_PER_MEASUREMENT: u64 = 8 << 20;

/// Puts of this many bytes and more carry only their size ([`sim::SimBuilder::drop_payloads_from`]):
/// every chunk a push makes is smaller (a pushed exchange's chunks fill at most half the
/// scratch), and its landed bytes are read, while nothing reads what a pull lands.
const DROP_PAYLOADS_FROM: u64 = SCRATCH_BYTES / 2 + 1;

/// One simulation: a collective at a PE count, each of its measurements a form and a size
/// (none for the barrier), reported as the lines of each collective of `reported`.
/// fcollect and alltoall make the same copies in the same order (one pull of `bytes` from
/// each PE, PE 0 first), so one simulation times both.
#[derive(Clone, Debug)]
pub(super) struct Run {
    pub(super) n_pes: u32,
    pub(super) collective: Collective,
    pub(super) reported: Vec<Collective>,
    pub(super) measurements: Vec<(Form, Option<u64>)>,
}

impl Run {
    /// The largest size measured.
    fn max_bytes(&self) -> u64 {
        self.measurements
            .iter()
            .filter_map(|&(_, bytes)| bytes)
            .max()
            .unwrap_or(0)
    }
}

/// Runs `run` on `machine` (seed 0) and returns PE 0's lines.
///
/// # Errors
/// The topology has fewer GPUs than the run's PEs, or the run failed.
pub(super) fn run(machine: &Machine, run: &Run) -> anyhow::Result<Vec<Line>> {
    let sim = Sim::builder(machine.clone())
        .pes(run.n_pes)
        .drop_payloads_from(DROP_PAYLOADS_FROM)
        .build()?;
    // The landing area with the pushes' chunk after it, the reduction's dest, the scratch,
    // and room for the rest.
    let heap_bytes = 2 * run.max_bytes() + SCRATCH_BYTES / 2 + SCRATCH_BYTES + (4 << 20);
    let config = Config::default().device_heap_size(heap_bytes);
    let output =
        rshmem::run(sim, config, |sh| measure(sh, run)).context("simulating the collectives")?;
    let (results, report) = output.all_ok().context("simulating the collectives")?;
    if let Some(failure) = report.failure {
        bail!(
            "simulating the collectives failed (seed {}): {failure}",
            report.seed
        );
    }
    let lines = results.into_iter().next().expect("PE 0 ran")?;
    Ok(lines)
}

/// The symmetric memory of the device API: its synchronisation words and scratch, and where
/// the mirrored pulls land.
struct Memory {
    /// `arrived[pe]`: the last barrier epoch PE `pe` reached.
    arrived: Sym<u64>,
    /// `pushed[pe]`: the last pushed reduction whose data PE `pe` put here.
    pushed: Sym<u64>,
    scratch: Sym<u8>,
    /// Where the pulls land (`max_bytes`), then the chunk a push loads and sends: apart, as
    /// pulls drop their bytes and the chunk is read.
    landing: Sym<u8>,
    chunk_at: usize,
    dest: Sym<f32>,
    /// Where a pushed fcollect or alltoall copies what landed.
    gathered: Sym<u8>,
    /// What a reduction stores into `dest` (see [`sums`]).
    sums: Vec<f32>,
    /// This PE's barrier and reduction epochs; one block per PE uses them, as on the GPU.
    barrier_epoch: Cell<u64>,
    reduce_epoch: Cell<u64>,
}

/// Every measurement of `run`, each started together by a barrier of the PEs.
fn measure<B: Backend>(sh: &Shmem<B>, run: &Run) -> Result<Vec<Line>, ShmemError> {
    let n_pes = sh.n_pes() as usize;
    let max_bytes = run.max_bytes().max(8) as usize;
    let memory = Memory {
        arrived: sh.calloc::<u64>(n_pes)?,
        pushed: sh.calloc::<u64>(n_pes)?,
        scratch: sh.malloc::<u8>(SCRATCH_BYTES as usize)?,
        landing: sh.malloc::<u8>(max_bytes + (SCRATCH_BYTES / 2) as usize)?,
        chunk_at: max_bytes,
        dest: sh.malloc::<f32>(max_bytes / 4)?,
        gathered: sh.malloc::<u8>(PUSH_COPY_BYTES as usize)?,
        // Zeros: a vector the allocator maps zeroed is never touched, and zeros written into
        // the simulator's memory take no pages there.
        sums: vec![0.0; max_bytes / 4],
        barrier_epoch: Cell::new(0),
        reduce_epoch: Cell::new(0),
    };
    // What the pulls put, dropped on the way (never read, so never touched), and the chunk
    // the pushes send, zeros too; what a put carries does not change its time.
    let source = vec![0u8; max_bytes];
    // The landing area written once, as it was for every fit in docs/calibration.md: the
    // write paces each PE to the world's time before the first measurement, and without it
    // the PEs start the measurements in another order (other jitter, a fit a few % apart).
    // Zeros take no pages in the simulator.
    sh.set_local(memory.landing.slice(..max_bytes)?, &source)?;
    let mut lines = Vec::new();
    for &(form, bytes) in &run.measurements {
        let iters = iterations(run, bytes);
        let op = async |t: &KernelThread<'_, B>| {
            collective(t, &memory, run.collective, bytes.unwrap_or(0), &source).await
        };
        sh.barrier_all()?;
        let start_ns = sh.now_ns();
        match form {
            Form::OnStream => {
                for _ in 0..iters {
                    sh.launch_kernel(Dim3::linear(1), Dim3::linear(1), op)?;
                }
            }
            Form::InKernel => {
                sh.launch_kernel(Dim3::linear(1), Dim3::linear(1), async |t| {
                    for _ in 0..iters {
                        op(t).await?;
                    }
                    Ok(())
                })?;
            }
        }
        let ms = (sh.now_ns() - start_ns) as f64 / 1e6;
        let n = run.n_pes;
        for &reported in &run.reported {
            let group = reported.line_name(form);
            let us = us_per_op(ms, iters);
            lines.push(Line::new(&group, bytes, us).field("us").pes(n));
            if let Some(bytes) = bytes {
                let algbw = gbps(reported.received_bytes(n, bytes), iters, ms);
                lines.push(
                    Line::new(&group, Some(bytes), algbw)
                        .field("algbw_GBps")
                        .pes(n),
                );
            }
        }
    }
    sh.barrier_all()?;
    Ok(if sh.my_pe() == 0 { lines } else { Vec::new() })
}

/// The benchmark's collectives per measurement (1000 up to 32 KiB and for the barrier, 100
/// up to 2 MiB, 20 above), at most [`MAX_ITERS`] and [`MAX_BYTES_PER_MEASUREMENT`] of
/// copies, and at least one.
fn iterations(run: &Run, bytes: Option<u64>) -> u32 {
    let Some(bytes) = bytes else {
        return MAX_ITERS;
    };
    let bench: u32 = match bytes {
        b if b <= 32 << 10 => 1000,
        b if b <= 2 << 20 => 100,
        _ => 20,
    };
    let copies = match run.collective {
        Collective::Broadcast => 1,
        _ => u64::from(run.n_pes),
    };
    let affordable = MAX_BYTES_PER_MEASUREMENT / (copies * bytes).max(1);
    let affordable = u32::try_from(affordable.max(1)).unwrap_or(u32::MAX);
    bench.min(MAX_ITERS).min(affordable)
}

/// One `collective` of `bytes` by this PE's block, as the device API makes it.
async fn collective<B: Backend>(
    t: &KernelThread<'_, B>,
    memory: &Memory,
    collective: Collective,
    bytes: u64,
    source: &[u8],
) -> Result<(), ShmemError> {
    let n_pes = t.n_pes();
    match collective {
        Collective::BarrierAll => barrier(t, memory).await,
        // rshmem_broadcast_block: barrier, pull from the root (PE 0), barrier.
        Collective::Broadcast => {
            barrier(t, memory).await?;
            pull(t, memory, source, bytes, 0).await?;
            barrier(t, memory).await
        }
        // rshmem_fcollect_block and rshmem_alltoall_block up to RSHMEM_PUSH_COPY_BYTES: the
        // pushed exchange, then the block copies what landed into dest.
        Collective::Fcollect | Collective::Alltoall if copy_pushes(n_pes, bytes) => {
            let landed = push_exchange(t, memory, bytes).await?;
            let theirs = t.local(landed)?;
            t.set_local(memory.gathered.slice(..theirs.len())?, &theirs)
        }
        // Above it: barrier, pull from each PE in order, barrier.
        Collective::Fcollect | Collective::Alltoall => {
            barrier(t, memory).await?;
            for pe in 0..n_pes {
                pull(t, memory, source, bytes, pe).await?;
            }
            barrier(t, memory).await
        }
        // rshmem_sum_reduce_block when the data fits the scratch: the pushed exchange, then
        // the block loads what landed, adds and stores.
        Collective::SumReduce if reduce_pushes(n_pes, bytes) => {
            let landed = push_exchange(t, memory, bytes).await?;
            let _theirs = t.local(landed)?;
            t.set_local(
                memory.dest.slice(..(bytes / 4) as usize)?,
                sums(memory, bytes),
            )
        }
        // rshmem_detail_sum_reduce_pulled: barrier, pull every PE's source, store the sums,
        // barrier.
        Collective::SumReduce => {
            barrier(t, memory).await?;
            for pe in 0..n_pes {
                pull(t, memory, source, bytes, pe).await?;
            }
            t.set_local(
                memory.dest.slice(..(bytes / 4) as usize)?,
                sums(memory, bytes),
            )?;
            barrier(t, memory).await
        }
    }
}

/// A pull of `bytes` from `pe` by the block, as its mirror push (see the module).
async fn pull<B: Backend>(
    t: &KernelThread<'_, B>,
    memory: &Memory,
    source: &[u8],
    bytes: u64,
    pe: u32,
) -> Result<(), ShmemError> {
    let bytes = bytes as usize;
    t.block()
        .put_nbi(memory.landing.slice(..bytes)?, &source[..bytes], pe)
        .await
}

/// rshmem_barrier_all: thread 0 fences (completing the block's copies), stores its new epoch
/// into its slot on every PE, itself included, and polls its own slots until every PE's
/// epoch reached it.
async fn barrier<B: Backend>(t: &KernelThread<'_, B>, memory: &Memory) -> Result<(), ShmemError> {
    t.quiet().await?;
    let (me, n_pes) = (t.my_pe() as usize, t.n_pes());
    let epoch = memory.barrier_epoch.get() + 1;
    memory.barrier_epoch.set(epoch);
    let mine = memory.arrived.slice(me..=me)?;
    for pe in 0..n_pes {
        t.p(mine, epoch, pe).await?;
    }
    for pe in 0..n_pes as usize {
        t.wait_until(memory.arrived.slice(pe..=pe)?, Cmp::Ge, epoch)
            .await?;
    }
    Ok(())
}

/// rshmem_detail_push_exchange: load one's chunk, put it by the block into this PE's slot of
/// every peer's scratch (the half the epoch's parity picks), fence, store the epoch into this
/// PE's word on every peer, and wait for every peer's. Returns this PE's half, where the
/// peers' chunks landed. Every PE pushes the same bytes to each peer; which bytes (alltoall's
/// block per peer) does not change the time.
async fn push_exchange<B: Backend>(
    t: &KernelThread<'_, B>,
    memory: &Memory,
    bytes: u64,
) -> Result<Sym<u8>, ShmemError> {
    let (me, n_pes) = (t.my_pe(), t.n_pes());
    let epoch = memory.reduce_epoch.get() + 1;
    memory.reduce_epoch.set(epoch);
    let len = bytes as usize;
    let half = (epoch % 2) as usize * (SCRATCH_BYTES / 2) as usize;
    let landed = memory.scratch.slice(half..half + n_pes as usize * len)?;
    let mine = t.local(
        memory
            .landing
            .slice(memory.chunk_at..memory.chunk_at + len)?,
    )?;
    let slot = landed.slice(me as usize * len..(me as usize + 1) * len)?;
    let peers = (0..n_pes).filter(|&pe| pe != me);
    for pe in peers.clone() {
        t.block().put_nbi(slot, &mine, pe).await?;
    }
    t.fence().await?;
    let word = memory.pushed.slice(me as usize..=me as usize)?;
    for pe in peers.clone() {
        t.p(word, epoch, pe).await?;
    }
    for pe in peers {
        t.wait_until(
            memory.pushed.slice(pe as usize..=pe as usize)?,
            Cmp::Ge,
            epoch,
        )
        .await?;
    }
    Ok(landed)
}

/// The floats a reduction of `bytes` stores; their values do not change its time. One
/// vector of the largest size serves every reduction: a new one per reduction of 64 MiB was
/// an allocation, a fill and an unmapping each.
fn sums(memory: &Memory, bytes: u64) -> &[f32] {
    &memory.sums[..(bytes / 4) as usize]
}
