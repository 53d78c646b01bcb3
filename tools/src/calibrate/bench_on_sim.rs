//! The metrics of `rshmem bench` that the simulator models, run on the simulator with the
//! runtime API: PE 0 and PE 1, the bench's sizes and iteration counts, timed in simulated
//! time on PE 0 and computed as the bench computes them, so a simulated line compares one to
//! one with the measured line of the same name. The puts and the latencies are two
//! simulations, so that either can run alone and its jitter draws never depend on the other.

use anyhow::{Context, bail};
use hw::{Backend, Cmp, SignalOp, Topology};
use rshmem::{Config, Shmem, ShmemError, Sym};
use sim::Sim;

use super::catalogue::{PUT_BW_BYTES, REDUCE_BYTES, SIGNAL_BYTES};
use crate::bench::lines::{Line, gbps, half_rtt_us, us_per_op};

/// The largest put, and the buffer that receives every put.
const MAX_PUT_BYTES: u64 = PUT_BW_BYTES[PUT_BW_BYTES.len() - 1];

/// Simulated bytes per put size at most. The simulator copies every payload, so the bench's
/// 20 puts of 256 MiB would cost seconds per run of a fit. Fewer puts change only the share
/// of the final quiet (a round trip and a fence, a few µs) in the time, under 0.5 % even for
/// the single put of 256 MiB (680 µs).
const MAX_PUT_BYTES_PER_SIZE: u64 = 256 << 20;

/// Iterations of each measurement, as the bench runs them (`bench/measure.rs`).
const SIGNAL_ITERS: u32 = 5000;
const BARRIER_ITERS: u32 = 5000;
const REDUCE_ITERS: u32 = 1000;
const P_ITERS: u32 = 10_000;
const FETCH_ADD_ITERS: u32 = 10_000;

/// The bench's puts of `bytes`: 200 below 16 MiB, 20 from there, at most
/// [`MAX_PUT_BYTES_PER_SIZE`] bytes.
fn put_iterations(bytes: u64) -> u32 {
    let bench: u32 = if bytes >= 16 << 20 { 20 } else { 200 };
    let affordable = u32::try_from((MAX_PUT_BYTES_PER_SIZE / bytes).max(1)).unwrap_or(u32::MAX);
    bench.min(affordable)
}

/// A part of the modelled bench, run as a simulation of its own: a fit reruns the cheap part
/// alone when only latencies can move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Part {
    /// `put_bw` from 1 MiB: seconds of copying payloads.
    Puts,
    /// Everything else: thousands of small operations, a fraction of a second.
    Latencies,
}

/// Runs `part` on `topology` (seed 0) and returns PE 0's lines, in the bench's order.
///
/// # Errors
/// The topology has fewer than two GPUs, or the run failed (a bug: the workloads are fixed).
pub(super) fn run(topology: &Topology, part: Part) -> anyhow::Result<Vec<Line>> {
    let sim = Sim::builder(topology.clone()).pes(2).build()?;
    let heap_bytes = match part {
        // Room for the put buffer and the allocator's alignment.
        Part::Puts => MAX_PUT_BYTES + (1 << 20),
        Part::Latencies => 1 << 20,
    };
    let config = Config::default().device_heap_size(heap_bytes);
    let output = rshmem::run(sim, config, |sh| match part {
        Part::Puts => put_bandwidth(sh),
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

/// Every latency measurement in the bench's order; PE 0 reports.
fn latencies<B: Backend>(sh: &Shmem<B>) -> Result<Vec<Line>, ShmemError> {
    let objects = Objects {
        data: sh.malloc::<u8>(SIGNAL_BYTES as usize)?,
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

/// The other PE.
fn peer<B: Backend>(sh: &Shmem<B>) -> u32 {
    1 - sh.my_pe()
}

/// Milliseconds since `start_ns` on this PE's clock, the unit the bench's formulas take.
fn ms_since<B: Backend>(sh: &Shmem<B>, start_ns: u64) -> f64 {
    (sh.now_ns() - start_ns) as f64 / 1e6
}

/// Puts PE 0 → PE 1 of each [`PUT_BW_BYTES`] size, then quiet; PE 0 reports. The bench's
/// 32 thread blocks share each put; a simulated PE issues it whole.
fn put_bandwidth<B: Backend>(sh: &Shmem<B>) -> Result<Vec<Line>, ShmemError> {
    let buf = sh.malloc::<u8>(MAX_PUT_BYTES as usize)?;
    // Not zeros: the simulator scans a write's trailing zeros, which would cost more than the
    // copy; what a put carries does not change its time.
    let source = if sh.my_pe() == 0 {
        vec![0xa5; MAX_PUT_BYTES as usize]
    } else {
        Vec::new()
    };
    let mut lines = Vec::new();
    for bytes in PUT_BW_BYTES {
        if sh.my_pe() == 0 {
            let iters = put_iterations(bytes);
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

/// put_signal ping-pong of one word with a SET signal; half a round trip.
fn signal_pingpong<B: Backend>(
    sh: &Shmem<B>,
    objects: &Objects,
    lines: &mut Vec<Line>,
) -> Result<(), ShmemError> {
    let data = objects.data;
    let payload = [0x5a; SIGNAL_BYTES as usize];
    let start_ns = sh.now_ns();
    for i in 1..=u64::from(SIGNAL_ITERS) {
        if sh.my_pe() == 0 {
            sh.put_signal(data, &payload, objects.sig, i, SignalOp::Set, peer(sh))?;
            sh.signal_wait_until(objects.sig, Cmp::Eq, i)?;
        } else {
            sh.signal_wait_until(objects.sig, Cmp::Eq, i)?;
            sh.put_signal(data, &payload, objects.sig, i, SignalOp::Set, peer(sh))?;
        }
    }
    let ms = ms_since(sh, start_ns);
    lines.push(
        Line::new(
            "put_signal_pingpong",
            Some(SIGNAL_BYTES),
            half_rtt_us(ms, SIGNAL_ITERS),
        )
        .field("half_rtt_us"),
    );
    sh.barrier_all()
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
/// pushed): each PE puts its vector into the half of the peer's landing area that the
/// reduction's parity picks, with a signal, waits for the peer's, and adds locally.
fn sum_reduce<B: Backend>(
    sh: &Shmem<B>,
    objects: &Objects,
    lines: &mut Vec<Line>,
) -> Result<(), ShmemError> {
    let start_ns = sh.now_ns();
    for epoch in 1..=u64::from(REDUCE_ITERS) {
        let half = objects.landed.slice(
            (epoch % 2) as usize * REDUCE_FLOATS..(epoch % 2 + 1) as usize * REDUCE_FLOATS,
        )?;
        let mine = sh.local(objects.sources)?;
        sh.put_signal(half, &mine, objects.pushed, epoch, SignalOp::Set, peer(sh))?;
        sh.signal_wait_until(objects.pushed, Cmp::Ge, epoch)?;
        let theirs = sh.local(half)?;
        let sums: Vec<f32> = mine.iter().zip(&theirs).map(|(a, b)| a + b).collect();
        sh.set_local(objects.sums, &sums)?;
    }
    let ms = ms_since(sh, start_ns);
    lines.push(
        Line::new(
            "sum_reduce_in_kernel",
            Some(REDUCE_BYTES),
            us_per_op(ms, REDUCE_ITERS),
        )
        .field("us"),
    );
    Ok(())
}

/// p ping-pong on a 32-bit flag: PE 0 sends i and waits for it back; half a round trip.
fn p_pingpong<B: Backend>(
    sh: &Shmem<B>,
    objects: &Objects,
    lines: &mut Vec<Line>,
) -> Result<(), ShmemError> {
    let iters = i32::try_from(P_ITERS).expect("the count fits the flag");
    let start_ns = sh.now_ns();
    for i in 1..=iters {
        if sh.my_pe() == 0 {
            sh.p(objects.flag, i, peer(sh))?;
            sh.wait_until(objects.flag, Cmp::Eq, i)?;
        } else {
            sh.wait_until(objects.flag, Cmp::Eq, i)?;
            sh.p(objects.flag, i, peer(sh))?;
        }
    }
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
