//! The NVSHMEM guide's `broadcast` example on the simulator: `cargo run -p tools --example guide_broadcast [PES] [TOPOLOGY]`.
//! The program is `tools/src/workloads/broadcast.rs`.

mod common;

fn main() -> anyhow::Result<std::process::ExitCode> {
    common::run_guide_example("broadcast")
}
