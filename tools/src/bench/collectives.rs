//! `rshmem bench --collectives`: barrier_all, broadcast, fcollect, alltoall and the sum
//! reduction over every PE, at each PE count asked for, measured on the CUDA backend the way
//! NVSHMEM's collective benchmark measures its own (the same sizes, iterations, timing and
//! lines), so that the two compare line by line.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use hw::Launcher;
use hw::cuda::{Cuda, probe};
use indicatif::{ProgressBar, ProgressStyle};

use super::collectives_pe::{self, Stop};
use super::lines::{self, Line};
use super::speedups;

/// The sizes of every collective but the barrier, 8 B to 64 MiB.
pub(super) const SIZES: [u64; 9] = [
    8, 64, 512, 4096, 32768, 262_144, 2_097_152, 16_777_216, 67_108_864,
];
/// The largest size.
pub(super) const MAX_BYTES: u64 = SIZES[SIZES.len() - 1];
/// How often each measurement is made; the median is reported.
pub(super) const REPEATS: usize = 3;
/// The PE counts measured when none is given.
const DEFAULT_PES: [u32; 2] = [4, 8];

/// A collective over every PE (the world team).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Collective {
    BarrierAll,
    /// From PE 0.
    Broadcast,
    Fcollect,
    Alltoall,
    /// Of floats.
    SumReduce,
}

impl Collective {
    /// In the order they are measured and shown.
    pub(crate) const ALL: [Collective; 5] = [
        Collective::BarrierAll,
        Collective::Broadcast,
        Collective::Fcollect,
        Collective::Alltoall,
        Collective::SumReduce,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Collective::BarrierAll => "barrier_all",
            Collective::Broadcast => "broadcast",
            Collective::Fcollect => "fcollect",
            Collective::Alltoall => "alltoall",
            Collective::SumReduce => "sum_reduce",
        }
    }

    /// Whether it moves data, measured at every size of [`SIZES`].
    pub(crate) fn is_sized(self) -> bool {
        self != Collective::BarrierAll
    }

    /// The name of its lines in `form` (`broadcast_on_stream`).
    pub(crate) fn line_name(self, form: Form) -> String {
        format!("{}_{}", self.name(), form.name())
    }

    /// The keys of its lines: a time, and a bandwidth for those that move data.
    pub(crate) fn keys(self) -> &'static [&'static str] {
        if self.is_sized() {
            &["us", "algbw_GBps"]
        } else {
            &["us"]
        }
    }

    /// The collective and form whose lines are named `line_name`, if any.
    pub(crate) fn parse_line_name(line_name: &str) -> Option<(Collective, Form)> {
        Collective::ALL.iter().find_map(|&collective| {
            Form::ALL
                .iter()
                .find(|&&form| collective.line_name(form) == line_name)
                .map(|&form| (collective, form))
        })
    }

    /// The bytes one PE's dest holds after it, each PE contributing `bytes`.
    pub(super) fn dest_bytes(self, n_pes: u32, bytes: u64) -> u64 {
        match self {
            Collective::BarrierAll => 0,
            Collective::Broadcast | Collective::SumReduce => bytes,
            Collective::Fcollect | Collective::Alltoall => u64::from(n_pes) * bytes,
        }
    }

    /// The bytes of its algorithmic bandwidth: what one PE's dest receives.
    pub(crate) fn received_bytes(self, n_pes: u32, bytes: u64) -> u64 {
        self.dest_bytes(n_pes, bytes)
    }
}

/// How a collective is issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Form {
    /// One launch per collective on the PE's stream.
    OnStream,
    /// One launch that makes every collective of a measurement.
    InKernel,
}

impl Form {
    pub(crate) const ALL: [Form; 2] = [Form::OnStream, Form::InKernel];

    fn name(self) -> &'static str {
        match self {
            Form::OnStream => "on_stream",
            Form::InKernel => "in_kernel",
        }
    }
}

/// Collectives per measurement: 1000 up to 32 KiB (and the barrier), 100 up to 2 MiB, 20
/// above.
pub(super) fn iters(collective: Collective, bytes: u64) -> u32 {
    match bytes {
        _ if !collective.is_sized() => 1000,
        b if b <= 32 << 10 => 1000,
        b if b <= 2 << 20 => 100,
        _ => 20,
    }
}

/// Collectives of the warm-up before the measurements.
pub(super) fn warmup_ops(iters: u32) -> u32 {
    iters.min(10)
}

/// One `--pes` value: a PE count of 2 or more.
///
/// # Errors
/// What is wrong with it, for clap to show.
pub(crate) fn parse_pes(text: &str) -> Result<u32, String> {
    let n_pes: u32 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a PE count; give a number such as 4"))?;
    if n_pes < 2 {
        return Err(format!(
            "a collective needs 2 PEs or more (with {n_pes} there is nothing to exchange); \
             ask for 2 to 128"
        ));
    }
    if n_pes > 128 {
        return Err(format!(
            "the device API's collectives take at most 128 PEs (RSHMEM_MAX_PES); {n_pes} is \
             too many"
        ));
    }
    Ok(n_pes)
}

/// The PE counts to measure: `asked`, each once, in order, or [`DEFAULT_PES`].
fn pe_counts(asked: &[u32]) -> Vec<u32> {
    if asked.is_empty() {
        return DEFAULT_PES.to_vec();
    }
    let mut counts = Vec::new();
    for &n in asked {
        if !counts.contains(&n) {
            counts.push(n);
        }
    }
    counts
}

/// Whether `n_gpus` GPUs can run every count of `counts`: one PE per GPU, or shared.
///
/// # Errors
/// Too few GPUs without `share_gpus`, naming the fixes.
fn check_gpus(counts: &[u32], n_gpus: usize, share_gpus: bool) -> anyhow::Result<()> {
    let most = counts.iter().copied().max().unwrap_or(0);
    if most as usize > n_gpus && !share_gpus {
        bail!(
            "rshmem bench --collectives runs up to {most} PEs, one per GPU, and this machine \
             has {n_gpus} GPU(s); pass --share-gpus to let PEs share GPUs (the numbers then \
             measure one GPU's memory, not NVLink), or ask for at most {n_gpus} with --pes"
        );
    }
    Ok(())
}

/// Steps of the progress bar: one per collective, size and PE count.
fn steps(n_counts: usize) -> u64 {
    let per_count: usize = Collective::ALL
        .iter()
        .map(|c| if c.is_sized() { SIZES.len() } else { 1 })
        .sum();
    (per_count * n_counts) as u64
}

/// The collective and form a line belongs to, by its name, with their places in
/// [`Collective::ALL`] and [`Form::ALL`].
fn line_kind(line: &Line) -> Option<(usize, usize)> {
    let (collective, form) = Collective::parse_line_name(line.metric().group()?)?;
    Some((collective as usize, form as usize))
}

/// Puts lines in reading order: by collective, form and PE count; the order of sizes and
/// fields within each is kept.
fn sort_for_reading(lines: &mut [Line]) {
    lines.sort_by_key(|line| (line_kind(line), line.metric().n_pes()));
}

/// One markdown table per collective, rshmem's lines beside NVSHMEM's, under a heading.
fn tables(ours: &[Line], nvshmem: Option<&[Line]>, shared_gpus: bool) -> String {
    let mut out = Vec::new();
    for (c, collective) in Collective::ALL.iter().enumerate() {
        let of_it = |lines: &[Line]| -> Vec<Line> {
            lines
                .iter()
                .filter(|l| line_kind(l).is_some_and(|(k, _)| k == c))
                .cloned()
                .collect()
        };
        let ours = of_it(ours);
        let theirs = nvshmem.map(of_it);
        if ours.is_empty() && theirs.as_ref().is_none_or(Vec::is_empty) {
            continue;
        }
        out.push(format!("### {}", collective.name()));
        out.push(lines::table(&ours, theirs.as_deref(), shared_gpus));
    }
    out.join("\n\n")
}

/// `rshmem bench --collectives`: measures, or with `from` reads an earlier run's lines, and
/// prints the tables.
pub(super) fn main(
    asked_pes: &[u32],
    share_gpus: bool,
    nvshmem: Option<&Path>,
    raw: Option<&Path>,
    from: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let nvshmem = match nvshmem {
        Some(path) => {
            let mut theirs = super::read_log(path)?;
            theirs.retain(|l| line_kind(l).is_some());
            if theirs.is_empty() {
                bail!(
                    "{} holds no collective result (lines like `broadcast_on_stream pes=8 \
                     bytes=4096 us=9.5 algbw_GBps=0.4`); give the output of NVSHMEM's \
                     collective benchmark",
                    path.display()
                );
            }
            Some(theirs)
        }
        None => None,
    };
    let ours = match from {
        Some(path) => {
            let mut ours = super::read_log(path)?;
            ours.retain(|l| line_kind(l).is_some());
            if ours.is_empty() {
                bail!(
                    "{} holds no collective result; give a file that `rshmem bench \
                     --collectives --raw FILE` wrote",
                    path.display()
                );
            }
            ours
        }
        None => measure(&pe_counts(asked_pes), share_gpus, raw)?,
    };
    println!();
    println!("{}", tables(&ours, nvshmem.as_deref(), share_gpus));
    if let Some(theirs) = &nvshmem {
        println!();
        println!("### Speedups (NVSHMEM's time / rshmem's; below 1, in bold, rshmem is slower)");
        println!();
        println!("{}", speedups::matrix(&ours, theirs));
    }
    Ok(ExitCode::SUCCESS)
}

/// Measures every collective at each of `counts` PEs, prints the lines and writes them to
/// `raw`.
fn measure(counts: &[u32], share_gpus: bool, raw: Option<&Path>) -> anyhow::Result<Vec<Line>> {
    let inventory = probe().context("rshmem bench --collectives measures the CUDA backend")?;
    check_gpus(counts, inventory.gpus.len(), share_gpus)?;
    let progress = ProgressBar::new(steps(counts.len())).with_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} {elapsed}")
            .expect("a valid template"),
    );
    let mut ours = Vec::new();
    let mut placements = Vec::new();
    for &n_pes in counts {
        progress.set_message(format!("starting {n_pes} PEs"));
        let cuda = Cuda::builder()
            .pes(n_pes)
            .share_gpus(share_gpus)
            .build()
            .with_context(|| format!("starting {n_pes} PEs"))?;
        let (results, report) = cuda.launch(|dev| collectives_pe::run(&dev, &progress))?;
        let mut peer_failed = false;
        for (pe, result) in results.into_iter().enumerate() {
            match result {
                Ok(Ok(lines)) => ours.extend(lines),
                Ok(Err(Stop::Failed(reason))) => {
                    progress.abandon();
                    bail!("{n_pes} PEs, PE {pe}: {reason}");
                }
                Ok(Err(Stop::PeerFailed)) => peer_failed = true,
                Err(failure) => {
                    progress.abandon();
                    bail!("{n_pes} PEs, PE {pe} panicked: {}", failure.message);
                }
            }
        }
        if peer_failed {
            bail!("{n_pes} PEs: a PE stopped because another failed, which gave no reason");
        }
        let mut gpus = report.gpus.clone();
        gpus.sort();
        gpus.dedup();
        let shared = if gpus.len() < n_pes as usize {
            " (PEs share GPUs: one GPU's memory, not NVLink)"
        } else {
            ""
        };
        placements.push(format!("# {n_pes} PEs on {}{shared}", gpus.join(", ")));
    }
    progress.finish_and_clear();
    sort_for_reading(&mut ours);
    let mut raw_lines = placements;
    raw_lines.extend(lines::joined(&ours));
    println!("## rshmem collectives");
    println!("{}", raw_lines.join("\n"));
    if let Some(path) = raw {
        super::write_raw(path, &raw_lines)?;
    }
    Ok(ours)
}

#[cfg(test)]
#[path = "collectives_tests.rs"]
mod tests;
