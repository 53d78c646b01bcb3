//! The NVSHMEM guide's `moe-dispatch` example on the simulator: `cargo run -p tools --example guide_moe_dispatch [PES] [TOPOLOGY]`.
//! The program is `tools/src/workloads/moe_dispatch.rs`.

mod common;

fn main() -> anyhow::Result<std::process::ExitCode> {
    common::run_guide_example("moe-dispatch")
}
