//! `rshmem bench` on the simulator, with the runtime API on PE 0 and PE 1: the bench's sizes
//! and iteration counts, each measurement made by the same kind of caller as on the GPU (the
//! PE, a kernel's thread, warp or block, a stream), timed in simulated time on PE 0 and
//! computed as the bench computes it, so a simulated line compares one to one with the
//! measured line of the same name. The parts are simulations of their own, so that each can
//! run alone and its jitter draws never depend on another.

use anyhow::{Context, bail};
use hw::{Backend, Cmp, SignalOp};
use rshmem::{Config, Dim3, KernelThread, Scoped, Shmem, ShmemError, Sym};
use sim::{Machine, Sim};

use super::catalogue::{
    BLOCK_PUT_BW_BYTES, DEVICE_PUT_BYTES, HOST_PUT_BYTES, MALLOC_BYTES, REDUCE_BYTES, SIGNAL_BYTES,
    SMALL_PUT_BYTES,
};
use crate::bench::lines::{Line, gbps, half_rtt_us, us_per_op};

/// The largest put, and the buffers that hold it.
const MAX_PUT_BYTES: u64 = 256 << 20;

/// Simulated bytes per size of a stream of puts at most. The simulator copies every payload,
/// so the bench's 20 puts of 256 MiB would cost seconds per run of a fit. Fewer puts change
/// only the share of the final quiet (a round trip and a fence, a few µs) in the time, under
/// 0.5 % even for the single put of 256 MiB (680 µs).
const MAX_BYTES_PER_SIZE: u64 = 256 << 20;

/// The same for the puts of one warp or block, whose slow copies leave the final quiet an
/// even smaller share.
const MAX_KERNEL_BYTES_PER_SIZE: u64 = 64 << 20;

/// Iterations of each measurement, as the bench runs them (`bench/measure.rs`).
const SMALL_PUT_ITERS: u32 = 500;
const SIGNAL_ITERS: u32 = 5000;
const BARRIER_ITERS: u32 = 5000;
const REDUCE_ITERS: u32 = 1000;
const P_ITERS: u32 = 10_000;
const FETCH_ADD_ITERS: u32 = 10_000;

/// The bench's puts of `bytes` (200 below 16 MiB, 20 from there) or `bench` if given, at
/// most `max_bytes` of them and at least one.
fn iterations(bytes: u64, bench: Option<u32>, max_bytes: u64) -> u32 {
    let bench = bench.unwrap_or(if bytes >= 16 << 20 { 20 } else { 200 });
    let affordable = u32::try_from((max_bytes / bytes).max(1)).unwrap_or(u32::MAX);
    bench.min(affordable)
}

/// A part of the bench, run as a simulation of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Part {
    /// `init_ms` and `malloc_1GiB_ms`.
    Startup,
    /// `put_bw` from 1 MiB, which the bench puts with 32 blocks: PE 0's own puts.
    DevicePuts,
    /// `put_bw` below 1 MiB and `small_put`: kernels of one block or one warp.
    KernelPuts,
    /// `host_put_on_stream`: puts on a context's stream (the copy engine).
    HostPuts,
    /// Everything else: thousands of small operations.
    Latencies,
}

impl Part {
    pub(super) const ALL: [Part; 5] = [
        Part::Startup,
        Part::DevicePuts,
        Part::KernelPuts,
        Part::HostPuts,
        Part::Latencies,
    ];

    /// The symmetric heap the part needs, with room for the allocator's alignment.
    fn heap_bytes(self) -> u64 {
        match self {
            Part::Startup => MALLOC_BYTES + (64 << 20),
            Part::DevicePuts => MAX_PUT_BYTES + (1 << 20),
            Part::HostPuts => 2 * MAX_PUT_BYTES + (1 << 20),
            Part::KernelPuts | Part::Latencies => 4 << 20,
        }
    }
}

/// Runs `part` on `machine` (seed 0) and returns PE 0's lines, in the bench's order.
///
/// # Errors
/// The topology has fewer than two GPUs, or the run failed (a bug: the workloads are fixed).
pub(super) fn run(machine: &Machine, part: Part) -> anyhow::Result<Vec<Line>> {
    let sim = Sim::builder(machine.clone())
        .pes(2)
        .drop_payloads_from(DROP_PAYLOADS_FROM)
        .build()?;
    let config = Config::default().device_heap_size(part.heap_bytes());
    let output = rshmem::run(sim, config, |sh| match part {
        Part::Startup => startup(sh),
        Part::DevicePuts => device_puts(sh),
        Part::KernelPuts => kernel_puts(sh),
        Part::HostPuts => host_puts(sh),
        Part::Latencies => latencies(sh),
    })
    .context("simulating the bench")?;
    let (results, report) = output.all_ok().context("simulating the bench")?;
    if let Some(failure) = report.failure {
        bail!(
            "simulating the bench failed (seed {}): {failure}",
            report.seed
        );
    }
    let lines = results.into_iter().next().expect("PE 0 ran")?;
    Ok(lines)
}

/// The other PE.
fn peer<B: Backend>(sh: &Shmem<B>) -> u32 {
    1 - sh.my_pe()
}

/// Milliseconds since `start_ns` on this PE's clock, the unit the bench's formulas take.
fn ms_since<B: Backend>(sh: &Shmem<B>, start_ns: u64) -> f64 {
    (sh.now_ns() - start_ns) as f64 / 1e6
}

/// A source of `bytes`: zeros, which the allocator maps without touching them, what a put
/// that drops its bytes never reads ([`DROP_PAYLOADS_FROM`]), and what takes no pages when
/// written into the simulator's memory; what a put carries does not change its time.
fn pattern(bytes: u64) -> Vec<u8> {
    vec![0; bytes as usize]
}

/// Puts larger than the reduction's vector carry only their size
/// ([`sim::SimBuilder::drop_payloads_from`]): the vector is the only data the bench reads
/// back (the reduction's sums), so a fit copies none of the puts of up to 256 MiB.
const DROP_PAYLOADS_FROM: u64 = REDUCE_BYTES + 1;

/// The time the PE's program starts at (the GPUs' start-up and the runtime's init), and a
/// collective allocation of 1 GiB, which backs that much more of every PE's heap.
fn startup<B: Backend>(sh: &Shmem<B>) -> Result<Vec<Line>, ShmemError> {
    let init_ms = sh.now_ns() as f64 / 1e6;
    let start_ns = sh.now_ns();
    let buf = sh.malloc::<u8>(MALLOC_BYTES as usize)?;
    let malloc_ms = ms_since(sh, start_ns);
    sh.free(buf)?;
    Ok(if sh.my_pe() == 0 {
        vec![
            Line::new("init_ms", None, init_ms),
            Line::new("malloc_1GiB_ms", None, malloc_ms),
        ]
    } else {
        Vec::new()
    })
}

/// PE 0's own puts to PE 1 of each [`DEVICE_PUT_BYTES`] size, back to back, then quiet; the
/// bench's 32 blocks share each put, and a simulated PE issues it whole.
fn device_puts<B: Backend>(sh: &Shmem<B>) -> Result<Vec<Line>, ShmemError> {
    let buf = sh.malloc::<u8>(MAX_PUT_BYTES as usize)?;
    let source = if sh.my_pe() == 0 {
        pattern(MAX_PUT_BYTES)
    } else {
        Vec::new()
    };
    let mut lines = Vec::new();
    for bytes in DEVICE_PUT_BYTES {
        if sh.my_pe() == 0 {
            let iters = iterations(bytes, None, MAX_BYTES_PER_SIZE);
            let dst = buf.slice(..bytes as usize)?;
            let start_ns = sh.now_ns();
            for _ in 0..iters {
                sh.put_nbi(dst, &source[..bytes as usize], 1)?;
            }
            sh.quiet()?;
            let ms = ms_since(sh, start_ns);
            lines.push(Line::new("put_bw", Some(bytes), gbps(bytes, iters, ms)).field("GBps"));
        }
        sh.barrier_all()?;
    }
    Ok(lines)
}

/// Which group of a kernel makes the puts.
#[derive(Clone, Copy)]
enum Group {
    Warp,
    Block,
}

impl Group {
    fn of<'k, B: Backend>(self, t: &KernelThread<'k, B>) -> Scoped<'k, B> {
        match self {
            Group::Warp => t.warp(),
            Group::Block => t.block(),
        }
    }
}

/// The bench's kernel puts: one block's puts of each [`BLOCK_PUT_BW_BYTES`] size (`put_bw`),
/// then one warp's and one block's of each [`SMALL_PUT_BYTES`] size (`small_put`). A block of
/// one thread stands for the bench's 1024: the mover is the block either way.
fn kernel_puts<B: Backend>(sh: &Shmem<B>) -> Result<Vec<Line>, ShmemError> {
    let max_bytes = SMALL_PUT_BYTES[SMALL_PUT_BYTES.len() - 1];
    let buf = sh.malloc::<u8>(max_bytes as usize)?;
    let source = pattern(max_bytes);
    let mut lines = Vec::new();
    if sh.my_pe() == 0 {
        let timed = |group: Group, bytes: u64, iters: u32| -> Result<f64, ShmemError> {
            let (dst, src) = (buf.slice(..bytes as usize)?, &source[..bytes as usize]);
            let start_ns = sh.now_ns();
            sh.launch_kernel(Dim3::linear(1), Dim3::linear(1), async |t| {
                let scope = group.of(t);
                for _ in 0..iters {
                    scope.put_nbi(dst, src, 1).await?;
                }
                scope.quiet().await
            })?;
            Ok(gbps(bytes, iters, ms_since(sh, start_ns)))
        };
        for bytes in BLOCK_PUT_BW_BYTES {
            let iters = iterations(bytes, None, MAX_KERNEL_BYTES_PER_SIZE);
            let value = timed(Group::Block, bytes, iters)?;
            lines.push(Line::new("put_bw", Some(bytes), value).field("GBps"));
        }
        for bytes in SMALL_PUT_BYTES {
            let iters = iterations(bytes, Some(SMALL_PUT_ITERS), MAX_KERNEL_BYTES_PER_SIZE);
            let warp = timed(Group::Warp, bytes, iters)?;
            let block = timed(Group::Block, bytes, iters)?;
            lines.push(Line::new("small_put", Some(bytes), warp).field("warp_GBps"));
            lines.push(Line::new("small_put", Some(bytes), block).field("block_GBps"));
        }
    }
    sh.barrier_all()?;
    Ok(lines)
}

/// Puts of symmetric data on the default context's stream (the copy engine), PE 0 → PE 1,
/// each [`HOST_PUT_BYTES`] size, then a quiet.
fn host_puts<B: Backend>(sh: &Shmem<B>) -> Result<Vec<Line>, ShmemError> {
    let dst = sh.malloc::<u8>(MAX_PUT_BYTES as usize)?;
    let src = sh.malloc::<u8>(MAX_PUT_BYTES as usize)?;
    let mut lines = Vec::new();
    if sh.my_pe() == 0 {
        sh.set_local(src, &pattern(MAX_PUT_BYTES))?;
        for bytes in HOST_PUT_BYTES {
            let iters = iterations(bytes, None, MAX_BYTES_PER_SIZE);
            let (to, from) = (dst.slice(..bytes as usize)?, src.slice(..bytes as usize)?);
            let start_ns = sh.now_ns();
            for _ in 0..iters {
                sh.put_on_stream(to, from, 1)?;
            }
            sh.quiet()?;
            let ms = ms_since(sh, start_ns);
            lines.push(
                Line::new("host_put_on_stream", Some(bytes), gbps(bytes, iters, ms)).field("GBps"),
            );
            lines.push(
                Line::new("host_put_on_stream", Some(bytes), us_per_op(ms, iters))
                    .field("us_per_op"),
            );
        }
    }
    sh.barrier_all()?;
    Ok(lines)
}

/// Every other measurement in the bench's order; PE 0 reports. The ping-pongs and the
/// reduction run in kernels, by one thread or one block as on the GPU; the barrier and the
/// fetch-adds, which move no data a mover would copy, from the PE.
fn latencies<B: Backend>(sh: &Shmem<B>) -> Result<Vec<Line>, ShmemError> {
    let largest_signal = SIGNAL_BYTES[SIGNAL_BYTES.len() - 1] as usize;
    let objects = Objects {
        data: sh.malloc::<u8>(largest_signal)?,
        flag: sh.calloc::<i32>(1)?,
        sig: sh.calloc::<u64>(1)?,
        ctr: sh.calloc::<u64>(1)?,
        sources: sh.malloc::<f32>(REDUCE_FLOATS)?,
        landed: sh.malloc::<f32>(2 * REDUCE_FLOATS)?,
        pushed: sh.calloc::<u64>(1)?,
        sums: sh.malloc::<f32>(REDUCE_FLOATS)?,
    };
    sh.set_local(objects.sources, &[1.0 + sh.my_pe() as f32; REDUCE_FLOATS])?;
    sh.barrier_all()?;
    let mut lines = Vec::new();
    signal_pingpong(sh, &objects, &mut lines)?;
    barrier(sh, &mut lines)?;
    sum_reduce(sh, &objects, &mut lines)?;
    p_pingpong(sh, &objects, &mut lines)?;
    fetch_add_latency(sh, &objects, &mut lines)?;
    Ok(if sh.my_pe() == 0 { lines } else { Vec::new() })
}

/// Floats of the sum reduction.
const REDUCE_FLOATS: usize = REDUCE_BYTES as usize / size_of::<f32>();

/// The symmetric objects of the latency measurements.
struct Objects {
    data: Sym<u8>,
    flag: Sym<i32>,
    sig: Sym<u64>,
    ctr: Sym<u64>,
    sources: Sym<f32>,
    /// Where the peer's vector lands: two halves, by the reduction's parity.
    landed: Sym<f32>,
    /// The last reduction whose vector the peer pushed.
    pushed: Sym<u64>,
    sums: Sym<f32>,
}

/// put_signal ping-pong of each [`SIGNAL_BYTES`] size with a SET signal, by one thread of a
/// kernel on each PE; half a round trip.
fn signal_pingpong<B: Backend>(
    sh: &Shmem<B>,
    objects: &Objects,
    lines: &mut Vec<Line>,
) -> Result<(), ShmemError> {
    let (me, peer) = (sh.my_pe(), peer(sh));
    for bytes in SIGNAL_BYTES {
        sh.set_local(objects.sig, &[0])?;
        sh.barrier_all()?;
        let (data, payload) = (objects.data.slice(..bytes as usize)?, pattern(bytes));
        let sig = objects.sig;
        let start_ns = sh.now_ns();
        sh.launch_kernel(Dim3::linear(1), Dim3::linear(1), async |t| {
            for i in 1..=u64::from(SIGNAL_ITERS) {
                if me == 0 {
                    t.put_signal(data, &payload, sig, i, SignalOp::Set, peer)
                        .await?;
                    t.signal_wait_until(sig, Cmp::Eq, i).await?;
                } else {
                    t.signal_wait_until(sig, Cmp::Eq, i).await?;
                    t.put_signal(data, &payload, sig, i, SignalOp::Set, peer)
                        .await?;
                }
            }
            Ok(())
        })?;
        let ms = ms_since(sh, start_ns);
        lines.push(
            Line::new(
                "put_signal_pingpong",
                Some(bytes),
                half_rtt_us(ms, SIGNAL_ITERS),
            )
            .field("half_rtt_us"),
        );
        sh.barrier_all()?;
    }
    Ok(())
}

/// `barrier_all`, averaged.
fn barrier<B: Backend>(sh: &Shmem<B>, lines: &mut Vec<Line>) -> Result<(), ShmemError> {
    let start_ns = sh.now_ns();
    for _ in 0..BARRIER_ITERS {
        sh.barrier_all()?;
    }
    let ms = ms_since(sh, start_ns);
    lines.push(Line::new(
        "device_barrier_all_us",
        None,
        us_per_op(ms, BARRIER_ITERS),
    ));
    Ok(())
}

/// The sum reduction as the device API does it for NVLink peers (`rshmem_sum_reduce_block`,
/// pushed), by one block per PE: load one's vector, put it with a signal into the half of
/// the peer's landing area that the reduction's parity picks, wait for the peer's signal,
/// load what landed, add, store. First launched once per reduction
/// (`sum_reduce_on_stream`), then all inside one launch (`sum_reduce_in_kernel`).
fn sum_reduce<B: Backend>(
    sh: &Shmem<B>,
    objects: &Objects,
    lines: &mut Vec<Line>,
) -> Result<(), ShmemError> {
    let peer = peer(sh);
    let reduce = async |t: &KernelThread<'_, B>, epoch: u64| {
        let half = objects.landed.slice(
            (epoch % 2) as usize * REDUCE_FLOATS..(epoch % 2 + 1) as usize * REDUCE_FLOATS,
        )?;
        let mine = t.local(objects.sources)?;
        t.block()
            .put_signal(half, &mine, objects.pushed, epoch, SignalOp::Set, peer)
            .await?;
        t.signal_wait_until(objects.pushed, Cmp::Ge, epoch).await?;
        let theirs = t.local(half)?;
        let sums: Vec<f32> = mine.iter().zip(&theirs).map(|(a, b)| a + b).collect();
        t.set_local(objects.sums, &sums)
    };
    let one = |epoch: u64| {
        sh.launch_kernel(Dim3::linear(1), Dim3::linear(1), async |t| {
            reduce(t, epoch).await
        })
        .map(drop)
    };
    let start_ns = sh.now_ns();
    for epoch in 1..=u64::from(REDUCE_ITERS) {
        one(epoch)?;
    }
    let launched_ms = ms_since(sh, start_ns);
    let start_ns = sh.now_ns();
    sh.launch_kernel(Dim3::linear(1), Dim3::linear(1), async |t| {
        for i in 1..=u64::from(REDUCE_ITERS) {
            reduce(t, u64::from(REDUCE_ITERS) + i).await?;
        }
        Ok(())
    })?;
    let in_kernel_ms = ms_since(sh, start_ns);
    lines.extend([
        Line::new(
            "sum_reduce_on_stream",
            Some(REDUCE_BYTES),
            us_per_op(launched_ms, REDUCE_ITERS),
        )
        .field("us"),
        Line::new(
            "sum_reduce_on_stream",
            Some(REDUCE_BYTES),
            gbps(REDUCE_BYTES, REDUCE_ITERS, launched_ms),
        )
        .field("algbw_GBps"),
        Line::new(
            "sum_reduce_in_kernel",
            Some(REDUCE_BYTES),
            us_per_op(in_kernel_ms, REDUCE_ITERS),
        )
        .field("us"),
    ]);
    sh.barrier_all()
}

/// p ping-pong on a 32-bit flag by one thread of a kernel on each PE: PE 0 sends i and waits
/// for it back; half a round trip.
fn p_pingpong<B: Backend>(
    sh: &Shmem<B>,
    objects: &Objects,
    lines: &mut Vec<Line>,
) -> Result<(), ShmemError> {
    let iters = i32::try_from(P_ITERS).expect("the count fits the flag");
    let (me, peer, flag) = (sh.my_pe(), peer(sh), objects.flag);
    let start_ns = sh.now_ns();
    sh.launch_kernel(Dim3::linear(1), Dim3::linear(1), async |t| {
        for i in 1..=iters {
            if me == 0 {
                t.p(flag, i, peer).await?;
                t.wait_until(flag, Cmp::Eq, i).await?;
            } else {
                t.wait_until(flag, Cmp::Eq, i).await?;
                t.p(flag, i, peer).await?;
            }
        }
        Ok(())
    })?;
    let ms = ms_since(sh, start_ns);
    lines.push(Line::new("p_pingpong", None, half_rtt_us(ms, P_ITERS)).field("half_rtt_us"));
    sh.barrier_all()
}

/// Dependent fetch-adds PE 0 → PE 1.
fn fetch_add_latency<B: Backend>(
    sh: &Shmem<B>,
    objects: &Objects,
    lines: &mut Vec<Line>,
) -> Result<(), ShmemError> {
    if sh.my_pe() == 0 {
        let start_ns = sh.now_ns();
        for _ in 0..FETCH_ADD_ITERS {
            sh.atomic_fetch_add(objects.ctr, 1, 1)?;
        }
        let ms = ms_since(sh, start_ns);
        lines.push(Line::new(
            "fetch_add_latency_us",
            None,
            us_per_op(ms, FETCH_ADD_ITERS),
        ));
    }
    sh.barrier_all()
}
