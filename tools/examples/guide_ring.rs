//! The NVSHMEM guide's `ring` example on the simulator: `cargo run -p tools --example guide_ring [PES] [TOPOLOGY]`.
//! The program is `tools/src/workloads/ring.rs`.

mod common;

fn main() -> anyhow::Result<std::process::ExitCode> {
    common::run_guide_example("ring")
}
