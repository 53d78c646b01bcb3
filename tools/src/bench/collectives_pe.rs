//! One PE's part of `rshmem bench --collectives`: the heap, the data, each collective at each
//! size in both forms, and the check of every result. PE 0 reports.
//!
//! A measurement is as coll-spec's: the PEs meet at a host barrier, then CUDA events on the
//! queue's stream time `iters` collectives (on_stream: `iters` one-collective launches back
//! to back; in_kernel: one launch that loops `iters` times), after a warm-up of the same work;
//! the median of [`REPEATS`] is reported.

use hw::cuda::{CudaDevice, DeviceKernel, KernelArg};
use hw::{Device, LocalRange, MemKind};
use indicatif::ProgressBar;

use super::collectives::{Collective, Form, MAX_BYTES, REPEATS, SIZES, iters, warmup_ops};
use super::lines::{Line, gbps, us_per_op};
use super::pe::{BenchPe, Kernels};

/// The block of every collective kernel: one per PE.
const THREADS: u32 = 1024;
/// The grid of the fills, which are local and take any.
const FILL_GRID: (u32, u32) = (512, 256);
/// What a collective must overwrite in its dest before the check (a NaN as a float).
const POISON: u32 = 0xFFFF_FFFF;

/// Why a PE stopped.
#[derive(Debug)]
pub(super) enum Stop {
    /// This PE failed, for this reason.
    Failed(String),
    /// Another PE failed a check, and this one stopped with it rather than wait for it.
    PeerFailed,
}

impl From<String> for Stop {
    fn from(reason: String) -> Stop {
        Stop::Failed(reason)
    }
}

/// The word `i` of PE `pe`'s source (collectives.cu's fill, FILL_PATTERN).
pub(super) fn pattern_word(pe: u32, i: u64) -> u32 {
    (pe + 1).wrapping_mul(0x9E37_79B1) ^ (i as u32).wrapping_mul(0x85EB_CA77)
}

/// Float `i` of PE `pe`'s reduction source (collectives.cu's fill, FILL_REDUCED): a small integer.
pub(super) fn reduced_value(pe: u32, i: u64) -> f32 {
    ((i * 7 + u64::from(pe) * 13) % 1024) as f32
}

/// What collectives.cu's fill writes (its FILL_ constants).
#[derive(Clone, Copy)]
enum Fill {
    /// [`pattern_word`]s of the PE given.
    Pattern = 0,
    /// [`reduced_value`]s of the PE given.
    Reduced = 1,
    /// The word given.
    Poison = 2,
}

/// Where things are in each PE's heap.
#[derive(Clone, Copy)]
struct Layout {
    n_pes: u64,
}

impl Layout {
    /// Pattern words, the source of broadcast, fcollect and alltoall: n_pes × the largest size.
    const SOURCE: u64 = 0;

    /// Every collective's dest: n_pes × the largest size.
    fn dest(self) -> u64 {
        self.n_pes * MAX_BYTES
    }

    /// The floats the reduction sums: the largest size.
    fn floats(self) -> u64 {
        2 * self.n_pes * MAX_BYTES
    }

    fn heap_bytes(self) -> u64 {
        self.floats() + MAX_BYTES
    }
}

/// The kernels of one run.
struct CollectiveKernels {
    barrier: DeviceKernel,
    broadcast: DeviceKernel,
    fcollect: DeviceKernel,
    alltoall: DeviceKernel,
    sum_reduce: DeviceKernel,
    fill: DeviceKernel,
}

impl CollectiveKernels {
    fn compile(pe: &BenchPe<'_>) -> Result<CollectiveKernels, String> {
        let kernel = |name| pe.kernel(Kernels::Collectives, name);
        Ok(CollectiveKernels {
            barrier: kernel("barrier")?,
            broadcast: kernel("broadcast")?,
            fcollect: kernel("fcollect")?,
            alltoall: kernel("alltoall")?,
            sum_reduce: kernel("sum_reduce")?,
            fill: kernel("fill")?,
        })
    }

    fn of(&self, collective: Collective) -> &DeviceKernel {
        match collective {
            Collective::BarrierAll => &self.barrier,
            Collective::Broadcast => &self.broadcast,
            Collective::Fcollect => &self.fcollect,
            Collective::Alltoall => &self.alltoall,
            Collective::SumReduce => &self.sum_reduce,
        }
    }
}

/// One PE of the run.
struct CollectivePe<'a> {
    pe: BenchPe<'a>,
    n_pes: u32,
    layout: Layout,
    kernels: CollectiveKernels,
}

/// Measures every collective at every size on this PE; PE 0 returns the lines and moves
/// `progress` on, one step per collective and size.
pub(super) fn run(dev: &CudaDevice, progress: &ProgressBar) -> Result<Vec<Line>, Stop> {
    let n_pes = dev.n_pes();
    let layout = Layout {
        n_pes: u64::from(n_pes),
    };
    let pe = BenchPe::new(dev)?;
    hw::cuda::share_device_heap(dev, layout.heap_bytes(), pe.deadline())
        .map_err(|e| format!("sharing a heap of {} MiB: {e}", layout.heap_bytes() >> 20))?;
    let kernels = CollectiveKernels::compile(&pe)?;
    let me = pe.me;
    let run = CollectivePe {
        pe,
        n_pes,
        layout,
        kernels,
    };
    run.fill(Fill::Pattern, Layout::SOURCE, layout.dest(), me)?;
    run.fill(Fill::Reduced, layout.floats(), MAX_BYTES, me)?;
    let mut lines = Vec::new();
    for collective in Collective::ALL {
        let sizes: &[u64] = if collective.is_sized() { &SIZES } else { &[0] };
        for &bytes in sizes {
            if me == 0 {
                progress.set_message(format!(
                    "{} on {n_pes} PEs{}",
                    collective.name(),
                    if collective.is_sized() {
                        format!(", {bytes} bytes")
                    } else {
                        String::new()
                    }
                ));
            }
            for form in Form::ALL {
                lines.extend(run.measure(collective, form, bytes)?);
            }
            if me == 0 {
                progress.inc(1);
            }
        }
    }
    run.pe.sync()?;
    Ok(if me == 0 { lines } else { Vec::new() })
}

impl CollectivePe<'_> {
    /// Fills `bytes` of the heap at `offset` as `what` says (collectives.cu's fill) and waits.
    fn fill(&self, what: Fill, offset: u64, bytes: u64, value: u32) -> Result<(), String> {
        let args = [
            KernelArg::Heap(offset),
            KernelArg::U64(bytes / 4),
            KernelArg::U32(what as u32),
            KernelArg::U32(value),
        ];
        self.pe
            .timed(&self.kernels.fill, FILL_GRID.0, FILL_GRID.1, &args)
            .map(|_| ())
    }

    /// The kernel arguments of `collective` at `bytes`, looping `iters` times.
    fn args(&self, collective: Collective, bytes: u64, iters: u32) -> Vec<KernelArg> {
        let dest = KernelArg::Heap(self.layout.dest());
        match collective {
            Collective::BarrierAll => vec![KernelArg::U32(iters)],
            Collective::SumReduce => vec![
                dest,
                KernelArg::Heap(self.layout.floats()),
                KernelArg::U64(bytes / 4),
                KernelArg::U32(iters),
            ],
            Collective::Broadcast | Collective::Fcollect | Collective::Alltoall => vec![
                dest,
                KernelArg::Heap(Layout::SOURCE),
                KernelArg::U64(bytes),
                KernelArg::U32(iters),
            ],
        }
    }

    /// GPU milliseconds of `ops` collectives in `form`.
    fn timed(
        &self,
        collective: Collective,
        form: Form,
        bytes: u64,
        ops: u32,
    ) -> Result<f64, String> {
        let kernel = self.kernels.of(collective);
        match form {
            Form::OnStream => {
                self.pe
                    .timed_launches(kernel, 1, THREADS, &self.args(collective, bytes, 1), ops)
            }
            Form::InKernel => self
                .pe
                .timed(kernel, 1, THREADS, &self.args(collective, bytes, ops)),
        }
    }

    /// One line of the spec: poisons the dest, warms up, takes the median of the timed runs
    /// and checks the dest. `bytes` is 0 for the barrier.
    fn measure(&self, collective: Collective, form: Form, bytes: u64) -> Result<Vec<Line>, Stop> {
        let dest_bytes = collective.dest_bytes(self.n_pes, bytes);
        if dest_bytes > 0 {
            self.fill(Fill::Poison, self.layout.dest(), dest_bytes, POISON)?;
        }
        let iters = iters(collective, bytes);
        self.pe.sync()?;
        self.timed(collective, form, bytes, warmup_ops(iters))?;
        let ms = self.pe.median_of(REPEATS, || {
            self.pe.sync()?;
            self.timed(collective, form, bytes, iters)
        })?;
        if dest_bytes > 0 {
            let checked = self.check(collective, bytes);
            let failed = checked.as_ref().err();
            // Every PE learns whether every other's dest was right, so that none waits for a
            // PE that stopped.
            let verdicts = self
                .pe
                .dev
                .exchange(&[u8::from(failed.is_some())], self.pe.deadline())
                .map_err(|e| e.to_string())?;
            if let Some(reason) = failed {
                return Err(Stop::Failed(format!(
                    "{} with {} PEs, {bytes} bytes: {reason}",
                    collective.line_name(form),
                    self.n_pes
                )));
            }
            if verdicts.iter().any(|v| v.first() == Some(&1)) {
                return Err(Stop::PeerFailed);
            }
        }
        let name = collective.line_name(form);
        let us = Line::new(
            &name,
            collective.is_sized().then_some(bytes),
            us_per_op(ms, iters),
        )
        .field("us")
        .pes(self.n_pes);
        if !collective.is_sized() {
            return Ok(vec![us]);
        }
        let received = collective.received_bytes(self.n_pes, bytes);
        let algbw = Line::new(&name, Some(bytes), gbps(received, iters, ms))
            .field("algbw_GBps")
            .pes(self.n_pes);
        Ok(vec![us, algbw])
    }

    /// Checks this PE's dest after `collective` of `bytes`: the first wrong word, if any.
    fn check(&self, collective: Collective, bytes: u64) -> Result<(), String> {
        let len = collective.dest_bytes(self.n_pes, bytes);
        let mut dest = vec![0u8; len as usize];
        self.pe.dev.read_local(
            LocalRange {
                kind: MemKind::Device,
                offset: self.layout.dest(),
                len,
            },
            &mut dest,
        );
        first_wrong_word(collective, self.n_pes, self.pe.me, bytes, &dest)
    }
}

/// The first word of PE `me`'s `dest` that is not what `collective` of `bytes` on `n_pes` PEs
/// leaves there, described (`Ok` if every word is right).
pub(super) fn first_wrong_word(
    collective: Collective,
    n_pes: u32,
    me: u32,
    bytes: u64,
    dest: &[u8],
) -> Result<(), String> {
    let words_per_pe = bytes / 4;
    // The word a right result holds at `i`, and where it comes from.
    let source_of = |i: u64| -> (u32, u64) {
        match collective {
            Collective::Fcollect => ((i / words_per_pe) as u32, i % words_per_pe),
            Collective::Alltoall => (
                (i / words_per_pe) as u32,
                u64::from(me) * words_per_pe + i % words_per_pe,
            ),
            _ => (0, i),
        }
    };
    let want = |i: u64| -> u32 {
        if collective == Collective::SumReduce {
            let sum: f32 = (0..n_pes).map(|pe| reduced_value(pe, i)).sum();
            return sum.to_bits();
        }
        let (pe, at) = source_of(i);
        pattern_word(pe, at)
    };
    let describe = |i: u64| -> String {
        if collective == Collective::SumReduce {
            return format!(
                "{}, the sum of float {i} over the PEs",
                f32::from_bits(want(i))
            );
        }
        let (pe, at) = source_of(i);
        format!("PE {pe}'s source word {at}")
    };
    let words = dest
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes(w.try_into().expect("4 bytes")));
    // The description is made only for a wrong word: a check reads up to 128 Mi words.
    let wrong = (0u64..).zip(words).find(|&(i, got)| got != want(i));
    match wrong {
        None => Ok(()),
        Some((i, got)) => Err(format!(
            "PE {me}'s dest word {i} is {got:#010x}, not {:#010x} ({}){}",
            want(i),
            describe(i),
            if got == POISON {
                ": the collective did not write it"
            } else {
                ""
            }
        )),
    }
}
