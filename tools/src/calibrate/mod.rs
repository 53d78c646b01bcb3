//! `rshmem calibrate`: fits a topology (the `h200x2` preset by default) to a run of
//! `rshmem bench` on the GPUs it stands for, so that the simulator predicts the bench's
//! metrics; writes the fitted topology as a topology file and prints the comparison.
//! docs/calibration.md says what is fitted, how, and what is not modelled.

mod bench_on_sim;
mod catalogue;
mod fit;
mod lsq;
mod measured;
mod params;
mod plot;
mod table;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use fit::Fit;
use params::{Mover, Param, Subject};

/// Arguments of `rshmem calibrate`.
#[derive(Args, Debug)]
pub(crate) struct CalibrateArgs {
    /// The measured bench lines: the file `rshmem bench --raw FILE` wrote on the GPU machine
    #[arg(long, value_name = "RAW_FILE")]
    measured: PathBuf,
    /// The topology to fit: a preset or a TOML topology file whose first two GPUs are linked
    /// directly
    #[arg(long, value_name = "PRESET|FILE", default_value = "h200x2")]
    pub(crate) preset: String,
    /// Write the fitted topology to this TOML topology file
    #[arg(long, value_name = "FILE.toml")]
    out: Option<PathBuf>,
    /// Print only the comparison, as markdown to paste into BENCHMARKS.md
    #[arg(long)]
    table: bool,
    /// Draw the measured and simulated bandwidths, GB/s against bytes for each mover, as an
    /// SVG picture in this file
    #[arg(long, value_name = "FILE.svg")]
    svg: Option<PathBuf>,
}

pub(crate) const AFTER_HELP: &str = "\
Fits, on the link between PE 0 and PE 1: its latency (its bandwidth is raised to the fastest \
put measured if it is slower); and in the timing: poll_ns, fence_ns and release_ns (with the \
latency, by Gauss-Newton on the p and put_signal ping-pongs, fetch_add and the barrier), the copy curve of each mover (one \
point per size the bench measures it at: the GPU's own puts from put_bw of 1 MiB up, one \
block's from put_bw below 1 MiB and small_put, one warp's from small_put, one thread's from \
put_signal of 512 B and 32 KiB, the copy engine's from host_put_on_stream), launch_ns (from \
sum_reduce_on_stream), local_access_ns (from sum_reduce_in_kernel), startup_ns (init_ms) and \
map_gbps (malloc_1GiB_ms), each by secant steps on the metrics it owns. issue_ns and the rest \
keep the topology's values; transfer_ns becomes 0, the curves holding every start-up.

Every metric of the bench is modelled. Targets: 5 % for bandwidths, 10 % for times.

On the GPU machine, then here:
  rshmem bench --raw bench.raw
  rshmem calibrate --measured bench.raw --out sim/topologies/h200x2.toml --table";

pub(crate) fn main(args: CalibrateArgs) -> anyhow::Result<ExitCode> {
    let measured = measured::read(&args.measured)?;
    let base = sim::topology::load(&args.preset)?;
    let machine = Subject::new(base)?;
    let spinner = ProgressBar::new_spinner()
        .with_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("a valid template"),
        )
        .with_message(format!(
            "fitting {} to {}",
            args.preset,
            args.measured.display()
        ));
    spinner.enable_steady_tick(Duration::from_millis(200));
    let fit = fit::fit(&machine, &measured, &mut |runs| {
        spinner.set_message(format!(
            "fitting {} to {}: {runs} simulations",
            args.preset,
            args.measured.display()
        ));
    })?;
    spinner.finish_and_clear();
    if let Some(path) = &args.out {
        let text = toml_file(&fit, &args.measured, &args.preset);
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &args.svg {
        let title = format!("{} fitted to {}", args.preset, args.measured.display());
        std::fs::write(path, plot::svg(&measured, &fit.simulated, &title))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let rows = table::rows(&measured, &fit.simulated);
    if args.table {
        print!("{}", table::markdown(&rows, &measured));
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "fitted {} to {} in {} simulations",
        args.preset,
        args.measured.display(),
        fit.runs
    );
    print!("{}", changes(&machine, &fit));
    for path in [&args.out, &args.svg].into_iter().flatten() {
        println!("wrote {}", path.display());
    }
    println!();
    print!("{}", table::text(&rows, &measured));
    let within = rows.iter().filter(|r| r.within_target()).count();
    println!(
        "\n{within} of {} modelled metrics within target",
        rows.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// Each fitted scalar, before and after; then each mover's curve as fitted.
fn changes(machine: &Subject, fit: &Fit) -> String {
    let (a, b) = fit.machine.topology.link_ends(machine.link());
    let (start, fitted) = (&fit.start, &fit.fitted);
    let ns = |param| {
        (
            format!("{:.0} ns", start[param]),
            format!("{:.0} ns", fitted[param]),
        )
    };
    let gbps = |rate: Option<f64>| rate.map_or("free".to_string(), |r| format!("{r:.2} GB/s"));
    let rows = [
        (format!("link {a} - {b} latency"), ns(Param::LatencyNs)),
        (
            format!("link {a} - {b} bandwidth"),
            (gbps(Some(start.gbps())), gbps(Some(fitted.gbps()))),
        ),
        ("timing poll_ns".to_string(), ns(Param::PollNs)),
        ("timing fence_ns".to_string(), ns(Param::FenceNs)),
        ("timing release_ns".to_string(), ns(Param::ReleaseNs)),
        ("timing launch_ns".to_string(), ns(Param::LaunchNs)),
        (
            "timing local_access_ns".to_string(),
            ns(Param::LocalAccessNs),
        ),
        ("timing startup_ns".to_string(), ns(Param::StartupNs)),
        (
            "timing map_gbps".to_string(),
            (gbps(start.map_gbps()), gbps(fitted.map_gbps())),
        ),
    ];
    let mut out: String = rows
        .iter()
        .map(|(name, (before, after))| format!("  {name}: {before} -> {after}\n"))
        .collect();
    let copy = fit.machine.timing.copy;
    for mover in Mover::ALL {
        let points: Vec<String> = mover
            .sizes()
            .iter()
            .map(|&bytes| format!("{bytes} B {} ns", mover.curve(&copy).ns(bytes)))
            .collect();
        out.push_str(&format!(
            "  timing.copy.{}: {}\n",
            mover.key(),
            points.join(", ")
        ));
    }
    out
}

/// The fitted topology as a topology file, headed by where it came from.
fn toml_file(fit: &Fit, measured: &Path, preset: &str) -> String {
    format!(
        "# Fitted by `rshmem calibrate --measured {} --preset {preset}` to a run of \
         `rshmem bench`:\n\
         # the link between PE 0 and PE 1, poll_ns, fence_ns, release_ns, the movers' copy curves, \
         launch_ns,\n\
         # local_access_ns, startup_ns and map_gbps. Everything else is {preset}'s. See \
         docs/calibration.md.\n\n{}",
        measured.display(),
        sim::topology::write::to_toml(&fit.machine)
    )
}
