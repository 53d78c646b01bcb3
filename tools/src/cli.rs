//! The `rshmem` command line: its parser, the checks of its arguments that need no work, and
//! the dispatch to one module per command. `main.rs` only calls [`main`]; the parser and the
//! checks are public so that `cargo xtask fuzz` drives the real ones.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Parser, Subcommand};
use sim::Fault;

use crate::{bench, calibrate, check, info, launch, litmus, nvcc, oshrun, run, swarm, topo};

/// rshmem: an OpenSHMEM/NVSHMEM-style PGAS runtime with a deterministic GPU-cluster simulator.
#[derive(Parser, Debug)]
#[command(name = "rshmem", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Run a built-in workload on simulated GPUs and check its result, or, with -n N, start N
    /// processes of a program on this machine.
    ///
    /// Workloads: hello, ring, reduce, alltoall, broadcast, fcollect, matmul, moe-dispatch,
    /// deepep-ll, deepep-normal, put-bw, msg-rate, flag-nofence, flag-fence (ring to
    /// deepep-normal are kernels, docs/kernels.md). The run is deterministic: the same seed
    /// gives the same events, simulated time and trace hash.
    /// `rshmem run -n N PROGRAM [ARGS...]` is the launcher (docs/launcher.md).
    #[command(after_help = run::AFTER_HELP)]
    Run(run::RunArgs),
    /// Run a built-in workload under many seeds with the race detector and report every data
    /// race on symmetric memory: two accesses that no ordering rule orders.
    #[command(after_help = check::AFTER_HELP)]
    Check(check::CheckArgs),
    /// Run the built-in workloads over many seeds, topologies and fault plans (slow PEs, slow
    /// or stalled links, crashes) and print every failing run with the command that replays it.
    #[command(after_help = swarm::AFTER_HELP)]
    Swarm(swarm::SwarmArgs),
    /// Check litmus tests: the outcomes the ordering model allows against every execution of
    /// the simulator, and both against the verdict each file expects.
    #[command(after_help = litmus::AFTER_HELP)]
    Litmus(litmus::LitmusArgs),
    /// Measure the CUDA backend on this machine's GPUs the way NVSHMEM's benchmark does, and
    /// compare with NVSHMEM's results from the same machine.
    #[command(after_help = bench::AFTER_HELP)]
    Bench(bench::BenchArgs),
    /// Fit a topology's link, per-operation costs and copy curves to a run of `rshmem bench`,
    /// so that the simulator predicts every metric of the bench; write the fitted topology
    /// and compare both.
    #[command(after_help = calibrate::AFTER_HELP)]
    Calibrate(calibrate::CalibrateArgs),
    /// List every environment variable the runtime reads: type, default, value in this
    /// environment and meaning.
    #[command(after_help = info::AFTER_HELP)]
    Info(info::InfoArgs),
    /// Describe a topology (a preset name or a TOML file) and optionally draw it.
    ///
    /// Presets: h200x2 (2 GPUs on NV18), hgx8 (8 GPUs on NVSwitch), ib-N (N hosts x 8 GPUs,
    /// one 400 Gb/s NIC per GPU, rail-optimised fat tree). Files: see docs/topology-format.md.
    Topo(topo::TopoArgs),
    /// Open MPI's `oshrun -np N PROGRAM [ARGS...]`, as `rshmem run -n N PROGRAM [ARGS...]`
    /// (what tools/osh/bin/oshrun runs; `rshmem oshrun --help`, docs/c-tools.md).
    Oshrun(oshrun::OshrunArgs),
    /// nvcc's command line for the simulator: build a CUDA program (`.cu`, host code and
    /// `__global__` kernels) with clang 14 and libshmem's CUDA emulation (what
    /// tools/osh/bin/rshmem-nvcc runs; `rshmem nvcc --help`, docs/cuda-sim.md).
    Nvcc(nvcc::NvccArgs),
}

/// Parses a command line (the program's name first) as `rshmem` does, program arguments after
/// `rshmem run -n N PROGRAM` included.
///
/// # Errors
/// clap's error for a command line it refuses (which also carries `--help` and `--version`).
pub fn parse(argv: Vec<OsString>) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(launch::program_args_verbatim(argv))
}

/// The checks of a parsed command line that need no work: every topology it names loads (a
/// preset, or a TOML file that parses), with the commands' own loader.
///
/// # Errors
/// The loader's error for the first topology that does not load.
pub fn preflight(cli: &Cli) -> anyhow::Result<()> {
    let topologies: Vec<&str> = match &cli.command {
        Command::Run(args) => args.topologies(),
        Command::Check(args) => vec![args.machine.topology.as_str()],
        Command::Calibrate(args) => vec![args.preset.as_str()],
        Command::Topo(args) => vec![args.topology.as_str()],
        _ => Vec::new(),
    };
    for name in topologies {
        sim::topology::load(name)?;
    }
    Ok(())
}

/// Runs `rshmem` on this process's command line.
pub fn main() -> ExitCode {
    let cli = match parse(std::env::args_os().collect()) {
        Ok(cli) => cli,
        Err(err) => err.exit(),
    };
    let result = match cli.command {
        Command::Run(args) => run::main(args),
        Command::Check(args) => check::main(args),
        Command::Swarm(args) => swarm::main(args),
        Command::Litmus(args) => litmus::main(args),
        Command::Bench(args) => bench::main(args),
        Command::Calibrate(args) => calibrate::main(args),
        Command::Info(args) => info::main(args),
        Command::Topo(args) => topo::main(args),
        Command::Oshrun(args) => oshrun::main(args),
        Command::Nvcc(args) => nvcc::main(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// `--break RULE`, shared by the commands that can run a deliberately broken simulator
/// (`run`, `swarm`, `litmus`): test-only, to see which checks catch a broken rule.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub(crate) struct BreakRule {
    /// Test-only: break one ordering rule of the simulator on purpose, to see which checks
    /// catch it.
    #[arg(
        long = "break",
        value_name = "RULE",
        value_parser = PossibleValuesParser::new(Fault::ALL.map(Fault::name))
            .try_map(|name| name.parse::<Fault>())
    )]
    pub(crate) rule: Option<Fault>,
}
