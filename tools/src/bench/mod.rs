//! `rshmem bench`: the metrics of NVSHMEM's benchmark, measured on the CUDA backend of this
//! machine the same way (same sizes, iterations and stream-event timing), printed as
//! NVSHMEM prints them and, given NVSHMEM's output from the same machine, as a table beside
//! it with the speedups and the targets of docs/targets.md.

pub(crate) mod collectives;
mod collectives_pe;
pub(crate) mod lines;
mod measure;
mod pe;
mod speedups;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use hw::Launcher;
use hw::cuda::{Cuda, probe};
use indicatif::{ProgressBar, ProgressStyle};

/// Arguments of `rshmem bench`.
#[derive(Args, Debug)]
pub(crate) struct BenchArgs {
    /// Measure the collectives over every PE (barrier_all, broadcast, fcollect, alltoall, sum
    /// reduction) at several PE counts, instead of the two-PE metrics
    #[arg(long)]
    collectives: bool,
    /// With --collectives: a PE count to measure, 2 or more (repeat it or separate counts
    /// with commas; default 4 and 8)
    #[arg(
        long = "pes",
        value_name = "N",
        value_delimiter = ',',
        requires = "collectives",
        value_parser = collectives::parse_pes
    )]
    pes: Vec<u32>,
    /// Let PEs share GPUs on a machine with fewer GPUs than PEs (the numbers then measure one
    /// GPU's memory, not NVLink: for checking the command, not for comparing)
    #[arg(long)]
    share_gpus: bool,
    /// NVSHMEM's benchmark output from the same machine (the log of its run.sh, or of its
    /// collective benchmark with --collectives), to print a table of both with the speedups
    #[arg(long, value_name = "LOG")]
    nvshmem: Option<PathBuf>,
    /// Also write rshmem's results, in NVSHMEM's line format, to this file
    #[arg(long, value_name = "FILE")]
    raw: Option<PathBuf>,
    /// Read rshmem's results from this file (what --raw wrote on the GPU machine) instead of
    /// measuring, and print the tables again, beside NVSHMEM's with --nvshmem; needs no GPU
    #[arg(long, value_name = "RAW_FILE", conflicts_with_all = ["raw", "share_gpus", "pes"])]
    from: Option<PathBuf>,
}

pub(crate) const AFTER_HELP: &str = "\
Measures, on 2 PEs (GPU 0 and GPU 1): init and 1 GiB heap time; device put bandwidth (block \
scope, 4 KiB to 256 MiB); host put on the stream (copy engine); one-warp and one-block puts; \
put_signal and p ping-pong; device barrier_all; sum reduction of 8 KiB (device-side, one block \
per PE); fetch_add latency. Each measurement after a warm-up, 5 times: the median is \
reported (NVSHMEM's benchmark reports one run). Needs CUDA and, without --share-gpus, 2 GPUs \
with peer access.

Side by side with NVSHMEM (run both in one session on the same machine):
  bench/nvshmem/run.sh > nvshmem.log
  rshmem bench --nvshmem nvshmem.log

--collectives measures instead, at each PE count of --pes (default 4 and 8, PE i on GPU \
i % GPUs), barrier_all, broadcast from PE 0, fcollect, alltoall and the sum reduction of \
floats, each at 8 B to 64 MiB per PE (the barrier has no size), in two forms: on_stream, one \
launch per collective on the PE's stream of a one-block kernel (1024 threads) calling the \
device API's block-scoped collective; in_kernel, one launch of that block looping over it. \
Each line times 1000 collectives (up to 32 KiB), 100 (up to 2 MiB) or 20 with CUDA events on \
the stream, after a warm-up, as the median of 3; us is per collective and algbw_GBps the \
bytes one PE's dest receives per second (n_pes x the size for fcollect and alltoall). Every \
PE's dest is checked after the timed runs; a wrong result stops the run. Needs as many GPUs \
as PEs, or --share-gpus (for checking the command: PEs on one GPU do not use NVLink). \
Prints the lines, then a table per collective, beside NVSHMEM's lines with --nvshmem, and a \
matrix of the speedups (NVSHMEM's time over rshmem's) by collective, PE count and size:
  rshmem bench --collectives --pes 4,8 --nvshmem nvshmem-collectives.log --raw rshmem.txt
--from reads the lines of such a run back instead of measuring, to print the tables again on \
a machine without GPUs:
  rshmem bench --collectives --from rshmem.txt --nvshmem nvshmem-collectives.log";

pub(crate) fn main(args: BenchArgs) -> anyhow::Result<ExitCode> {
    if args.collectives {
        return collectives::main(
            &args.pes,
            args.share_gpus,
            args.nvshmem.as_deref(),
            args.raw.as_deref(),
            args.from.as_deref(),
        );
    }
    let nvshmem = match &args.nvshmem {
        Some(path) => {
            let lines = read_log(path)?;
            if lines.is_empty() {
                bail!(
                    "{} holds no NVSHMEM result (lines like `put_bw bytes=4096 GBps=12.3`); \
                     give the output of NVSHMEM's benchmark",
                    path.display()
                );
            }
            Some(lines)
        }
        None => None,
    };
    if let Some(path) = &args.from {
        let ours = read_log(path)?;
        println!("{}", lines::table(&ours, nvshmem.as_deref(), false));
        return Ok(ExitCode::SUCCESS);
    }
    let inventory = probe().context("rshmem bench measures the CUDA backend")?;
    if inventory.gpus.len() < 2 && !args.share_gpus {
        bail!(
            "rshmem bench runs 2 PEs, one per GPU, and this machine has {} GPU(s); pass \
             --share-gpus to run both on one GPU (the numbers then say nothing about NVLink)",
            inventory.gpus.len()
        );
    }
    let spinner = ProgressBar::new_spinner()
        .with_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("a valid template"),
        )
        .with_message("measuring on 2 PEs");
    spinner.enable_steady_tick(Duration::from_millis(200));
    let started = Instant::now();
    let cuda = Cuda::builder().pes(2).share_gpus(args.share_gpus).build()?;
    let (results, report) = cuda.launch(|dev| measure::run(&dev, started))?;
    spinner.finish_and_clear();
    let mut ours = Vec::new();
    for (pe, result) in results.into_iter().enumerate() {
        match result {
            Ok(Ok(lines)) => ours.extend(lines),
            Ok(Err(e)) => bail!("PE {pe}: {e}"),
            Err(failure) => bail!("PE {pe} panicked: {}", failure.message),
        }
    }
    let raw: Vec<String> = ours.iter().map(ToString::to_string).collect();
    println!("## rshmem on {}", report.gpus.join(", "));
    println!("{}", raw.join("\n"));
    if let Some(path) = &args.raw {
        write_raw(path, &raw)?;
    }
    println!();
    println!(
        "{}",
        lines::table(&ours, nvshmem.as_deref(), args.share_gpus)
    );
    Ok(ExitCode::SUCCESS)
}

/// Every value of a benchmark's log at `path`.
fn read_log(path: &Path) -> anyhow::Result<Vec<lines::Line>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading NVSHMEM's output {}", path.display()))?;
    lines::parse(&text).with_context(|| format!("in {}", path.display()))
}

/// Writes benchmark lines to `path`, one a line.
fn write_raw(path: &Path, raw: &[String]) -> anyhow::Result<()> {
    std::fs::write(path, raw.join("\n") + "\n")
        .with_context(|| format!("writing {}", path.display()))
}
