//! The seed's `moe-dispatch` example on the simulator: `cargo run -p tools --example seed_moe_dispatch [PES] [TOPOLOGY]`.
//! The program is `tools/src/workloads/moe_dispatch.rs`.

mod common;

fn main() -> anyhow::Result<std::process::ExitCode> {
    common::run_seed_example("moe-dispatch")
}
