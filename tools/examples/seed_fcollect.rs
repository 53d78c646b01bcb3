//! The seed's `fcollect` example on the simulator: `cargo run -p tools --example seed_fcollect [PES] [TOPOLOGY]`.
//! The program is `tools/src/workloads/fcollect.rs`.

mod common;

fn main() -> anyhow::Result<std::process::ExitCode> {
    common::run_seed_example("fcollect")
}
