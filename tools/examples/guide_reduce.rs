//! The NVSHMEM guide's `reduce` example on the simulator: `cargo run -p tools --example guide_reduce [PES] [TOPOLOGY]`.
//! The program is `tools/src/workloads/reduce.rs`.

mod common;

fn main() -> anyhow::Result<std::process::ExitCode> {
    common::run_guide_example("reduce")
}
