//! The NVSHMEM guide's `matmul` example on the simulator: `cargo run -p tools --example guide_matmul [PES] [TOPOLOGY]`.
//! The program is `tools/src/workloads/matmul.rs`.

mod common;

fn main() -> anyhow::Result<std::process::ExitCode> {
    common::run_guide_example("matmul")
}
