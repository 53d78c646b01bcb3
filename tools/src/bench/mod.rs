//! `rshmem bench`: the metrics of NVSHMEM's benchmark, measured on the CUDA backend of this
//! machine the same way (same sizes, iterations and stream-event timing), printed as
//! NVSHMEM prints them and, given NVSHMEM's output from the same machine, as a table beside
//! it with the speedups and the targets of docs/targets.md.

pub(crate) mod lines;
mod measure;

use std::path::PathBuf;
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
    /// Let the two PEs share a GPU on a machine with one (the numbers then measure one GPU's
    /// memory, not NVLink: for checking the command, not for comparing)
    #[arg(long)]
    share_gpus: bool,
    /// NVSHMEM's benchmark output from the same machine (the log of its run.sh), to print a
    /// table of both with the speedups and the targets
    #[arg(long, value_name = "LOG")]
    nvshmem: Option<PathBuf>,
    /// Also write rshmem's results, in NVSHMEM's line format, to this file
    #[arg(long, value_name = "FILE")]
    raw: Option<PathBuf>,
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
  rshmem bench --nvshmem nvshmem.log";

pub(crate) fn main(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let nvshmem = match &args.nvshmem {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading NVSHMEM's output {}", path.display()))?;
            let lines = lines::parse(&text).with_context(|| format!("in {}", path.display()))?;
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
        std::fs::write(path, raw.join("\n") + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    println!();
    println!(
        "{}",
        lines::table(&ours, nvshmem.as_deref(), args.share_gpus)
    );
    Ok(ExitCode::SUCCESS)
}
