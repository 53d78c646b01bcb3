//! The NVSHMEM guide's `alltoall` example on the simulator: `cargo run -p tools --example guide_alltoall [PES] [TOPOLOGY]`.
//! The program is `tools/src/workloads/alltoall.rs`.

mod common;

fn main() -> anyhow::Result<std::process::ExitCode> {
    common::run_guide_example("alltoall")
}
