//! One PE's part of `rshmem bench`: the heap, the kernels, each measurement. PE 0 reports.
//!
//! Every measurement times stream work between two CUDA events (`CudaQueue::time_on_stream`),
//! as NVSHMEM's benchmark does, after a warm-up of the same work; sizes and iteration counts
//! are NVSHMEM's, so each line compares with the line of the same name there. Each is made
//! [`REPEATS`] times and its median reported.

use std::time::Instant as WallClock;

use hw::cuda::{CudaDevice, KernelArg};
use hw::{Device, Instant, LocalRange, MemKind, Pe, Queue, RemoteRange};

use super::lines::{Line, gbps, half_rtt_us, us_per_op};
use super::pe::{BenchPe, Kernels};

/// The heap: the 1 GiB allocation NVSHMEM's benchmark times, which holds everything else.
const HEAP_BYTES: u64 = 1 << 30;
/// The largest transfer, and the two buffers of that size.
const MAX_BYTES: u64 = 256 << 20;
const BUF: u64 = 0;
const SRC: u64 = MAX_BYTES;
/// Small words after the buffers, each on its own line.
const FLAG: u64 = 2 * MAX_BYTES;
const SIG: u64 = FLAG + 128;
const CTR: u64 = FLAG + 256;
const OUT: u64 = FLAG + 384;
/// How often each measurement is made; the median is reported. Single runs of one kernel
/// differed by more than the calibration's 5 % target: `put_bw` and `small_put` time the same
/// 4 KiB block puts, and one run measured 262 and 282 ns a put (docs/calibration.md).
const REPEATS: usize = 5;

/// What a PE measured (PE 0's lines; PE 1 returns none), or why it could not.
pub(super) type PeResult = Result<Vec<Line>, String>;

/// The other PE of the two.
fn peer(pe: &BenchPe<'_>) -> i32 {
    i32::from(pe.me == 0)
}

/// Runs every measurement on this PE. `started` is when the launcher was first called, for
/// the init time.
pub(super) fn run(dev: &CudaDevice, started: WallClock) -> PeResult {
    let me = dev.pe().0;
    let init_ms = started.elapsed().as_secs_f64() * 1e3;
    let malloc_started = WallClock::now();
    let deadline = Instant(dev.now().0 + 120_000_000_000);
    hw::cuda::share_device_heap(dev, HEAP_BYTES, deadline).map_err(|e| e.to_string())?;
    let malloc_ms = malloc_started.elapsed().as_secs_f64() * 1e3;
    let pe = BenchPe::new(dev)?;
    let mut lines = vec![
        Line::new("init_ms", None, init_ms),
        Line::new("malloc_1GiB_ms", None, malloc_ms),
    ];
    // The source buffer holds a pattern, as NVSHMEM's does.
    let pattern = vec![1 + me as u8; 1 << 20];
    for chunk in 0..MAX_BYTES / (1 << 20) {
        dev.write_local(
            LocalRange {
                kind: MemKind::Device,
                offset: SRC + chunk * (1 << 20),
                len: 1 << 20,
            },
            &pattern,
        );
    }
    pe.sync()?;
    device_put_bandwidth(&pe, &mut lines)?;
    host_put_bandwidth(&pe, &mut lines)?;
    small_puts(&pe, &mut lines)?;
    signal_pingpong(&pe, &mut lines)?;
    device_barrier(&pe, &mut lines)?;
    sum_reduce(&pe, &mut lines)?;
    p_pingpong(&pe, &mut lines)?;
    fetch_add_latency(&pe, &mut lines)?;
    pe.sync()?;
    Ok(if me == 0 { lines } else { Vec::new() })
}

/// Block-scoped device puts PE 0 → PE 1, 4 KiB to 256 MiB.
fn device_put_bandwidth(pe: &BenchPe<'_>, lines: &mut Vec<Line>) -> Result<(), String> {
    let kernel = pe.kernel(Kernels::PointToPoint, "put_bw")?;
    let mut bytes = 4096u64;
    while bytes <= MAX_BYTES {
        if pe.me == 0 {
            let blocks: u32 = if bytes >= 1 << 20 { 32 } else { 1 };
            let chunk = bytes / u64::from(blocks);
            let iters: u32 = if bytes >= 16 << 20 { 20 } else { 200 };
            let args = |iters: u32| {
                [
                    KernelArg::Heap(BUF),
                    KernelArg::Heap(SRC),
                    KernelArg::U64(chunk),
                    KernelArg::U32(iters),
                    KernelArg::I32(peer(pe)),
                ]
            };
            pe.timed(&kernel, blocks, 1024, &args(2))?;
            let ms = pe.median_of(REPEATS, || pe.timed(&kernel, blocks, 1024, &args(iters)))?;
            lines.push(Line::new("put_bw", Some(bytes), gbps(bytes, iters, ms)).field("GBps"));
        }
        pe.sync()?;
        bytes *= 4;
    }
    Ok(())
}

/// Host-initiated puts of symmetric data on the queue's stream (the copy engine), PE 0 →
/// PE 1, 4 KiB to 256 MiB.
fn host_put_bandwidth(pe: &BenchPe<'_>, lines: &mut Vec<Line>) -> Result<(), String> {
    let mut bytes = 4096u64;
    while bytes <= MAX_BYTES {
        if pe.me == 0 {
            let iters: u32 = if bytes >= 16 << 20 { 20 } else { 200 };
            let dst = RemoteRange {
                pe: Pe(1),
                kind: MemKind::Device,
                offset: BUF,
                len: bytes,
            };
            let src = LocalRange {
                kind: MemKind::Device,
                offset: SRC,
                len: bytes,
            };
            pe.queue
                .put_from_local(dst, src)
                .map_err(|e| e.to_string())?;
            pe.queue.quiet(pe.deadline()).map_err(|e| e.to_string())?;
            let ms = pe.median_of(REPEATS, || {
                let ((), ms) = pe
                    .queue
                    .time_on_stream(|q| {
                        for _ in 0..iters {
                            q.put_from_local(dst, src)?;
                        }
                        Ok::<(), hw::QueueError>(())
                    })
                    .map_err(|e| e.to_string())?;
                pe.queue.quiet(pe.deadline()).map_err(|e| e.to_string())?;
                Ok(ms)
            })?;
            lines.push(
                Line::new("host_put_on_stream", Some(bytes), gbps(bytes, iters, ms)).field("GBps"),
            );
            lines.push(
                Line::new("host_put_on_stream", Some(bytes), us_per_op(ms, iters))
                    .field("us_per_op"),
            );
        }
        pe.sync()?;
        bytes *= 16;
    }
    Ok(())
}

/// One warp's and one block's puts, 1 KiB to 1 MiB.
fn small_puts(pe: &BenchPe<'_>, lines: &mut Vec<Line>) -> Result<(), String> {
    let (warp, block) = (
        pe.kernel(Kernels::PointToPoint, "put_warp")?,
        pe.kernel(Kernels::PointToPoint, "put_block")?,
    );
    let mut bytes = 1024u64;
    while bytes <= 1 << 20 {
        if pe.me == 0 {
            let iters = 500;
            let args = |iters: u32| {
                [
                    KernelArg::Heap(BUF),
                    KernelArg::Heap(SRC),
                    KernelArg::U64(bytes),
                    KernelArg::U32(iters),
                    KernelArg::I32(peer(pe)),
                ]
            };
            pe.timed(&warp, 1, 32, &args(10))?;
            pe.timed(&block, 1, 1024, &args(10))?;
            let warp_ms = pe.median_of(REPEATS, || pe.timed(&warp, 1, 32, &args(iters)))?;
            let block_ms = pe.median_of(REPEATS, || pe.timed(&block, 1, 1024, &args(iters)))?;
            lines.push(
                Line::new("small_put", Some(bytes), gbps(bytes, iters, warp_ms)).field("warp_GBps"),
            );
            lines.push(
                Line::new("small_put", Some(bytes), gbps(bytes, iters, block_ms))
                    .field("block_GBps"),
            );
        }
        pe.sync()?;
        bytes *= 4;
    }
    Ok(())
}

/// put_signal ping-pong of 8 B, 512 B and 32 KiB; half a round trip, after a warm-up of 10
/// (the signal word is zeroed before each, with both PEs out of the kernel).
fn signal_pingpong(pe: &BenchPe<'_>, lines: &mut Vec<Line>) -> Result<(), String> {
    let kernel = pe.kernel(Kernels::PointToPoint, "signal_pingpong")?;
    let mut bytes = 8u64;
    while bytes <= 65_536 {
        let args = |iters: u32| {
            [
                KernelArg::Heap(BUF),
                KernelArg::Heap(SIG),
                KernelArg::U64(bytes),
                KernelArg::U32(iters),
                KernelArg::I32(pe.me as i32),
                KernelArg::I32(peer(pe)),
            ]
        };
        let iters = 5000;
        let run = |run_iters: u32| -> Result<f64, String> {
            zero_word(pe, SIG);
            pe.sync()?;
            let ms = pe.timed(&kernel, 1, 1, &args(run_iters))?;
            pe.queue.quiet(pe.deadline()).map_err(|e| e.to_string())?;
            pe.sync()?;
            Ok(ms)
        };
        run(10)?;
        let ms = pe.median_of(REPEATS, || run(iters))?;
        if pe.me == 0 {
            lines.push(
                Line::new("put_signal_pingpong", Some(bytes), half_rtt_us(ms, iters))
                    .field("half_rtt_us"),
            );
        }
        pe.sync()?;
        bytes *= 64;
    }
    Ok(())
}

/// `barrier_all` from the device, averaged over 5000.
fn device_barrier(pe: &BenchPe<'_>, lines: &mut Vec<Line>) -> Result<(), String> {
    let kernel = pe.kernel(Kernels::Collectives, "barrier")?;
    pe.sync()?;
    pe.timed(&kernel, 1, 1, &[KernelArg::U32(10)])?;
    let iters = 5000;
    let ms = pe.median_of(REPEATS, || {
        pe.sync()?;
        pe.timed(&kernel, 1, 1, &[KernelArg::U32(iters)])
    })?;
    if pe.me == 0 {
        lines.push(Line::new(
            "device_barrier_all_us",
            None,
            us_per_op(ms, iters),
        ));
    }
    pe.sync()
}

/// Sum reduction of 8 KiB of floats over both PEs by the device API's
/// `rshmem_sum_reduce_block` (one block of 1024 threads per PE). As NVSHMEM's
/// `sum_reduce_on_stream`, each reduction is one launch on the queue's stream, timed over 1000
/// launches, so the launch's cost counts; `sum_reduce_in_kernel` is the same reduction 1000
/// times inside one launch (the collective's own cost).
fn sum_reduce(pe: &BenchPe<'_>, lines: &mut Vec<Line>) -> Result<(), String> {
    let kernel = pe.kernel(Kernels::Collectives, "sum_reduce")?;
    let bytes = 8192u64;
    let args = |iters: u32| {
        [
            KernelArg::Heap(BUF),
            KernelArg::Heap(SRC),
            KernelArg::U64(bytes / 4),
            KernelArg::U32(iters),
        ]
    };
    pe.sync()?;
    pe.timed_launches(&kernel, 1, 1024, &args(1), 10)?;
    let iters = 1000;
    let launched_ms = pe.median_of(REPEATS, || {
        pe.sync()?;
        pe.timed_launches(&kernel, 1, 1024, &args(1), iters)
    })?;
    let in_kernel_ms = pe.median_of(REPEATS, || {
        pe.sync()?;
        pe.timed(&kernel, 1, 1024, &args(iters))
    })?;
    if pe.me == 0 {
        lines.push(
            Line::new(
                "sum_reduce_on_stream",
                Some(bytes),
                us_per_op(launched_ms, iters),
            )
            .field("us"),
        );
        lines.push(
            Line::new(
                "sum_reduce_on_stream",
                Some(bytes),
                gbps(bytes, iters, launched_ms),
            )
            .field("algbw_GBps"),
        );
        lines.push(
            Line::new(
                "sum_reduce_in_kernel",
                Some(bytes),
                us_per_op(in_kernel_ms, iters),
            )
            .field("us"),
        );
    }
    pe.sync()
}

/// p ping-pong on a 32-bit flag; half a round trip.
fn p_pingpong(pe: &BenchPe<'_>, lines: &mut Vec<Line>) -> Result<(), String> {
    let kernel = pe.kernel(Kernels::PointToPoint, "p_pingpong")?;
    let iters = 10_000;
    let ms = pe.median_of(REPEATS, || {
        zero_word(pe, FLAG);
        pe.sync()?;
        let ms = pe.timed(
            &kernel,
            1,
            1,
            &[
                KernelArg::Heap(FLAG),
                KernelArg::U32(iters),
                KernelArg::I32(pe.me as i32),
                KernelArg::I32(peer(pe)),
            ],
        )?;
        pe.sync()?;
        Ok(ms)
    })?;
    if pe.me == 0 {
        lines.push(Line::new("p_pingpong", None, half_rtt_us(ms, iters)).field("half_rtt_us"));
    }
    pe.sync()
}

/// Dependent fetch-adds PE 0 → PE 1.
fn fetch_add_latency(pe: &BenchPe<'_>, lines: &mut Vec<Line>) -> Result<(), String> {
    let kernel = pe.kernel(Kernels::PointToPoint, "fetch_add_latency")?;
    zero_word(pe, CTR);
    pe.sync()?;
    if pe.me == 0 {
        let args = |iters: u32| {
            [
                KernelArg::Heap(CTR),
                KernelArg::U32(iters),
                KernelArg::I32(peer(pe)),
                KernelArg::Heap(OUT),
            ]
        };
        pe.timed(&kernel, 1, 1, &args(100))?;
        let iters = 10_000;
        let ms = pe.median_of(REPEATS, || pe.timed(&kernel, 1, 1, &args(iters)))?;
        lines.push(Line::new(
            "fetch_add_latency_us",
            None,
            us_per_op(ms, iters),
        ));
    }
    pe.sync()
}

fn zero_word(pe: &BenchPe<'_>, offset: u64) {
    pe.dev.write_local(
        LocalRange {
            kind: MemKind::Device,
            offset,
            len: 8,
        },
        &[0; 8],
    );
}
