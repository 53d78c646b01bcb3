//! `cargo xtask`: the workspace's developer tasks, kept out of the `rshmem` product (the
//! alias is in .cargo/config.toml).
//!
//! - `cargo xtask tidy`: the architecture's invariants checked by machine (`tidy`); the same
//!   checks run as a test of this crate.
//! - `cargo xtask mutate-orderings ...`: weakens the host backend's memory orderings one at a
//!   time and reports which mutants the tests kill (`mutate`, docs/mutation.md).
//! - `cargo xtask fuzz [--target T] [--inputs N] [--seed S]`: generated and mutated inputs for
//!   the topology, litmus, configuration and command-line readers (`fuzz`, docs/fuzzing.md).
//! - `cargo xtask install --prefix DIR`: builds and installs the C tools and library
//!   (`install`, docs/c-tools.md).
//! - `cargo xtask sim-bench [--against REV] [--rows ...]`: the simulator's speed and memory at
//!   scale beside another revision built in a temporary worktree (`sim_bench`, BENCHMARKS.md).
//! - `cargo xtask sim-scaling [--workloads ...] [--pes ...] [--svg FILE]`: the simulator's wall
//!   time and peak memory against PEs, as a table and a picture (`sim_scaling`, BENCHMARKS.md).

mod fuzz;
mod install;
mod lex;
mod mutate;
mod sim_bench;
mod sim_scaling;
mod tidy;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Developer tasks of the rshmem workspace.
#[derive(Parser, Debug)]
#[command(name = "cargo xtask", version)]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand, Debug)]
enum Task {
    /// Check the architecture's invariants: the sync facade, the simulator's determinism, a
    /// runtime that names no backend, backends that do not import each other, and the
    /// configuration table against docs/config.md.
    Tidy,
    /// Weaken each memory ordering of some files, one at a time, and see whether tests notice.
    MutateOrderings(mutate::Args),
    /// Fuzz the readers of untrusted text: topology files, litmus files, the configuration's
    /// environment and the rshmem command line.
    Fuzz(fuzz::Args),
    /// Build (release) and install rshmem, oshrun, oshcc, oshc++, oshCC, libshmem and the
    /// headers under --prefix DIR.
    Install(install::Args),
    /// Measure the simulator at scale (the rows of BENCHMARKS.md's table of targets), this
    /// tree beside --against REV built in a temporary worktree, and print a table with the
    /// speed-ups and the targets met or missed.
    SimBench(sim_bench::Args),
    /// Run workloads at growing PE counts (8 to 16384 by default) and print and draw how the
    /// simulator's wall time and peak memory grow; a run past --timeout-s or --max-rss-gib is
    /// stopped and the workload's larger counts skipped.
    SimScaling(sim_scaling::Args),
}

fn main() -> ExitCode {
    let result = match Cli::parse().task {
        Task::Tidy => tidy::run(),
        Task::MutateOrderings(args) => mutate::run(args),
        Task::Fuzz(args) => fuzz::run(&args),
        Task::Install(args) => install::run(&args),
        Task::SimBench(args) => sim_bench::run(&args),
        Task::SimScaling(args) => sim_scaling::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
