//! The `rshmem` command line and the built-in workloads of `rshmem run`, as a library: the
//! `rshmem` binary runs [`cli::main`], the examples in `tools/examples` run the NVSHMEM
//! guide's examples one by one, `cargo xtask fuzz` drives the parser ([`cli::parse`]), and
//! `cargo xtask sim-scaling` draws with [`svg`].

pub mod cli;
pub mod workloads;

mod bench;
mod calibrate;
mod check;
mod check_program;
mod in_order;
mod info;
mod launch;
mod litmus;
mod nvcc;
mod oshrun;
mod rank_activity;
mod run;
mod run_workload;
mod sim_program;
pub mod svg;
mod swarm;
mod topo;
