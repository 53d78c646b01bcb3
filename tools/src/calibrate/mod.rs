//! `rshmem calibrate`: fits a topology (the `h200x2` preset by default) to a run of
//! `rshmem bench` on the GPUs it stands for, or an NVSwitch topology (`hgx8`) to a run of the
//! collective benchmark, so that the simulator predicts the run's metrics; writes the fitted
//! topology as a topology file and prints the comparison. docs/calibration.md says what is
//! fitted, how, and what is not modelled.

mod bench;
mod bench_on_sim;
mod catalogue;
mod collectives;
mod collectives_on_sim;
mod fit;
mod lsq;
mod measured;
mod params;
mod plot;
mod table;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_collectives;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use bench::Bench;
use catalogue::TwoPe;
use collectives::Collectives;
use fit::Fit;
use measured::Measured;
use params::{Param, Params, Shape, Subject};
use plot::Series;

/// Arguments of `rshmem calibrate`.
#[derive(Args, Debug)]
pub(crate) struct CalibrateArgs {
    /// The measured lines: the file `rshmem bench --raw FILE` wrote on the GPU machine, or
    /// the lines of the collective benchmark (`broadcast_in_kernel pes=8 bytes=4096 us=...`)
    #[arg(long, value_name = "RAW_FILE")]
    measured: PathBuf,
    /// The topology to fit: a preset or a TOML topology file, either whose first two GPUs are
    /// linked directly (fitted to the two-PE bench) or whose GPUs each hang off one NVSwitch
    /// (such as hgx8; fitted to the collectives)
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
  rshmem calibrate --measured bench.raw --out sim/topologies/h200x2.toml --table

An NVSwitch topology (--preset hgx8) is fitted to the collective benchmark's lines instead \
(`pes=N`; lines without a PE count are left out): the GPU-to-switch links' latency and \
bandwidth (by Gauss-Newton on the barriers in a kernel and the largest broadcast at the \
most PEs), the block's copy curve at the sizes measured (from broadcast, fcollect and alltoall, \
pulled or pushed, in a kernel), launch_ns (from every line on a stream) and \
local_access_ns (from the pushed reduction in a kernel):
  rshmem calibrate --measured coll.raw --preset hgx8 --out hgx8.fitted.toml --table";

/// What a calibration fits: the topology, the benchmark and its measurement, and the
/// picture's series.
struct Calibration {
    machine: Subject,
    bench: Box<dyn Bench>,
    measured: Measured,
    series: Vec<Series>,
}

/// The calibration of `base` to the lines of `text`, read from `path`: the collectives for
/// an NVSwitch topology, the two-PE bench otherwise.
fn calibration(base: sim::Machine, text: &str, path: &Path) -> anyhow::Result<Calibration> {
    if Subject::is_switch(&base) {
        let topology = &base.topology;
        let measured = measured::parse_collectives(text, path, topology.name(), topology.n_gpus())?;
        let bench = Collectives::new(&measured);
        let series = plot::collective_series(bench.pe_counts());
        let machine = Subject::switch(base, bench.block_sizes())?;
        return Ok(Calibration {
            machine,
            bench: Box::new(bench),
            measured,
            series,
        });
    }
    let measured = measured::parse(text, path)?;
    Ok(Calibration {
        machine: Subject::new(base)?,
        bench: Box::new(TwoPe::new()),
        measured,
        series: plot::two_pe_series(),
    })
}

pub(crate) fn main(args: CalibrateArgs) -> anyhow::Result<ExitCode> {
    let text = measured::read_text(&args.measured)?;
    let base = sim::topology::load(&args.preset)?;
    let Calibration {
        machine,
        bench,
        measured,
        series,
    } = calibration(base, &text, &args.measured)?;
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
    let fit = fit::fit(&machine, bench.as_ref(), &measured, &mut |runs| {
        spinner.set_message(format!(
            "fitting {} to {}: {runs} simulations",
            args.preset,
            args.measured.display()
        ));
    })?;
    spinner.finish_and_clear();
    if let Some(path) = &args.out {
        let text = toml_file(&machine, &fit, &args.measured, &args.preset);
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &args.svg {
        let title = format!("{} fitted to {}", args.preset, args.measured.display());
        let picture = plot::svg(&measured, &fit.simulated, &series, &title);
        std::fs::write(path, picture).with_context(|| format!("writing {}", path.display()))?;
    }
    let rows = table::rows(bench.metrics(), &measured, &fit.simulated);
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

/// Each fitted scalar, before and after; then each fitted mover's curve.
fn changes(machine: &Subject, fit: &Fit) -> String {
    let link = match machine.shape() {
        Shape::Pair(link) => {
            let (a, b) = fit.machine.topology.link_ends(*link);
            format!("link {a} - {b}")
        }
        Shape::Switch(links) => format!("the {} GPU-to-NVSwitch links'", links.len()),
    };
    let (start, fitted) = (&fit.start, &fit.fitted);
    let gbps = |rate: Option<f64>| rate.map_or("free".to_string(), |r| format!("{r:.2} GB/s"));
    // Each value as the topology file gives it: times in ns, rates in GB/s.
    let shown = |param: Param, params: &Params| match param {
        Param::LinkNsPerByte => gbps(Some(params.gbps())),
        Param::MapNsPerByte => gbps(params.map_gbps()),
        _ => format!("{:.0} ns", params[param]),
    };
    let rows = [
        (format!("{link} latency"), Param::LatencyNs),
        (format!("{link} bandwidth"), Param::LinkNsPerByte),
        ("timing poll_ns".to_string(), Param::PollNs),
        ("timing fence_ns".to_string(), Param::FenceNs),
        ("timing release_ns".to_string(), Param::ReleaseNs),
        ("timing launch_ns".to_string(), Param::LaunchNs),
        ("timing local_access_ns".to_string(), Param::LocalAccessNs),
        ("timing startup_ns".to_string(), Param::StartupNs),
        ("timing map_gbps".to_string(), Param::MapNsPerByte),
    ];
    let params = machine.params();
    let mut out: String = rows
        .iter()
        .filter(|(_, param)| params.contains(param))
        .map(|(name, param)| {
            let (before, after) = (shown(*param, start), shown(*param, fitted));
            format!("  {name}: {before} -> {after}\n")
        })
        .collect();
    let copy = fit.machine.timing.copy;
    for (mover, sizes) in machine.curves() {
        let points: Vec<String> = sizes
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
fn toml_file(machine: &Subject, fit: &Fit, measured: &Path, preset: &str) -> String {
    if let Shape::Switch(_) = machine.shape() {
        return format!(
            "# Fitted by `rshmem calibrate --measured {} --preset {preset}` to a run of the \
             collective benchmark:\n\
             # the GPU-to-NVSwitch links' latency and bandwidth, the block's copy curve, \
             launch_ns and local_access_ns.\n\
             # Everything else is {preset}'s. See docs/calibration.md.\n\n{}",
            measured.display(),
            sim::topology::write::to_toml(&fit.machine)
        );
    }
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
