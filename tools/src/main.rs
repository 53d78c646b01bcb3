//! `rshmem`: run SHMEM workloads on simulated GPU clusters and inspect topologies
//! (`tools::cli`).

fn main() -> std::process::ExitCode {
    tools::cli::main()
}
