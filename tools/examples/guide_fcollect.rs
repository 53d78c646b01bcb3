//! The NVSHMEM guide's `fcollect` example on the simulator: `cargo run -p tools --example guide_fcollect [PES] [TOPOLOGY]`.
//! The program is `tools/src/workloads/fcollect.rs`.

mod common;

fn main() -> anyhow::Result<std::process::ExitCode> {
    common::run_guide_example("fcollect")
}
