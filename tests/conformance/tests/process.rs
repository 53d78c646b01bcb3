//! Every conformance body on the process backend (one OS process per PE, `hw::process`) with
//! 2 and 4 PEs: the test binary runs itself as the ranks of each run (`conformance::process`).
//! Every body of the suite makes sense here (streams are the runtime's, atomics CPU atomics,
//! the heap a sparse memfd), so none is skipped.
//!
//! The same binary runs every body again as the ranks of jobs that other launchers start:
//! Open MPI's `mpirun` (PMIx) and a one-host Slurm's `srun` (`--mpi=pmix`, `--mpi=pmi2`). Those
//! tests skip, saying why, where the launcher is absent.

use std::process::Command;

use conformance::process::{LauncherRunError, is_rank, run_under_launcher};

/// The bodies' tests, named `bodies::NAME`, so that the launchers' tests find them by
/// `--list`.
mod bodies {
    conformance::conformance_tests!(conformance::process::process_conformance);
}

/// The one-host Slurm that `tools/launch/slurm-one-host.sh` starts, shared with the C API's
/// launcher tests.
#[path = "../../../tools/launch/slurm_one_host.rs"]
mod slurm_one_host;

/// The harness can fail: a body whose promise does not hold on one PE fails that rank, and
/// the test reports the rank's output.
#[test]
fn a_broken_promise_is_reported() {
    if is_rank() {
        conformance::process::process_conformance(broken);
        return;
    }
    let payload =
        std::panic::catch_unwind(|| conformance::process::process_conformance(broken)).unwrap_err();
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.contains("rank 1 ended with") && message.contains("violated: on purpose"),
        "{message}"
    );
    assert!(!message.contains("rank 0 ended with"), "{message}");
}

/// A body whose promise fails on PE 1.
fn broken(sh: &rshmem::Shmem<hw::process::ProcessBackend>) -> Result<(), conformance::BodyError> {
    if sh.my_pe() == 1 {
        return Err(conformance::BodyError::Violated("on purpose".into()));
    }
    Ok(())
}

/// The names of the bodies' tests in this binary (`bodies::ring`, ...), from its own `--list`.
fn body_tests() -> Vec<String> {
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = Command::new(exe)
        .args(["--list", "--format", "terse", "bodies::"])
        .output()
        .expect("the test binary lists its tests");
    let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_owned)
        .collect();
    assert!(names.len() >= 9, "too few bodies listed: {names:?}");
    names
}

/// Runs every body under `launcher` with `n` ranks (the launcher's words say `n`), and
/// panics with every job that failed.
fn every_body_under(launcher: &[&str], envs: &[(&str, &str)], n: u32) {
    let failures: Vec<String> = body_tests()
        .iter()
        .filter_map(|test| run_under_launcher(launcher, envs, n, test).err())
        .map(|e| e.to_string())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

const MPIRUN: [&str; 3] = ["mpirun", "--allow-run-as-root", "--oversubscribe"];

/// `mpirun` with `n` ranks, or `None` (said) where it is missing.
fn mpirun(n: &str) -> Option<Vec<&str>> {
    if !slurm_one_host::found("mpirun") {
        eprintln!("skipped: mpirun is missing (apt-get install -y openmpi-bin)");
        return None;
    }
    Some(MPIRUN.iter().copied().chain(["-np", n]).collect())
}

#[test]
fn every_body_passes_under_mpirun_at_2_and_4_ranks() {
    for n in [2, 4] {
        let count = n.to_string();
        let Some(launcher) = mpirun(&count) else {
            return;
        };
        every_body_under(&launcher, &[], n);
    }
}

/// A rank that fails its body under `mpirun` fails the job, whose output names the failure.
#[test]
fn a_broken_promise_under_mpirun_fails_the_job() {
    let Some(launcher) = mpirun("2") else { return };
    match run_under_launcher(&launcher, &[], 2, "a_broken_promise_is_reported") {
        Err(LauncherRunError::Failed { output, .. }) => {
            assert!(output.contains("violated: on purpose"), "{output}");
        }
        other => panic!("the broken body passed or hung under mpirun: {other:?}"),
    }
}

/// Every body under `mpirun` with every peer on libfabric's `tcp;ofi_rxm`
/// (`RSHMEM_TRANSPORT=ofi`), at 4 ranks. Skips, saying why, without libfabric.
#[test]
fn every_body_passes_under_mpirun_over_libfabric() {
    if let Err(e) = hw::ofi::probe() {
        eprintln!("skipped: {e}");
        return;
    }
    let Some(launcher) = mpirun("4") else { return };
    let envs = [("RSHMEM_TRANSPORT", "ofi"), ("FI_PROVIDER", "tcp;ofi_rxm")];
    let mut launcher = launcher;
    // Why `-x`: mpirun passes a rank only the variables it is told to.
    launcher.extend(["-x", "RSHMEM_TRANSPORT", "-x", "FI_PROVIDER"]);
    every_body_under(&launcher, &envs, 4);
}

/// Every body under `srun` on one node of the one-host Slurm, and across its two nodes (two
/// ranks a node: shared memory within one, libfabric between them; `tcp;ofi_rxm` under PMIx,
/// `sockets` under PMI-2).
#[test]
fn every_body_passes_under_srun_with_pmix_and_pmi2_on_one_and_two_nodes() {
    let Some(slurm) = slurm_one_host::Slurm::get() else {
        return;
    };
    let conf = slurm.conf().to_string_lossy().into_owned();
    for mpi in ["--mpi=pmix", "--mpi=pmi2"] {
        every_body_under(
            &["srun", "-N", "1", "-n", "4", mpi],
            &[("SLURM_CONF", &conf)],
            4,
        );
    }
    if let Err(e) = hw::ofi::probe() {
        eprintln!("not run across two nodes: {e}");
        return;
    }
    for (mpi, provider) in [("--mpi=pmix", "tcp;ofi_rxm"), ("--mpi=pmi2", "sockets")] {
        let envs = [("SLURM_CONF", conf.as_str()), ("FI_PROVIDER", provider)];
        every_body_under(&["srun", "-N", "2", "-n", "4", mpi], &envs, 4);
    }
}

/// Every body again with every peer on the network path (`RSHMEM_TRANSPORT=ofi`,
/// docs/multi-node.md), over `tcp;ofi_rxm` and over `sockets`: this binary runs its own
/// `bodies::` tests with those variables, which their ranks inherit. Skips, saying why,
/// without libfabric.
#[test]
fn every_body_passes_over_libfabric() {
    if is_rank() {
        return;
    }
    if let Err(e) = hw::ofi::probe() {
        eprintln!("skipped: {e}");
        return;
    }
    let exe = std::env::current_exe().expect("the test binary");
    for provider in ["tcp;ofi_rxm", "sockets"] {
        let output = Command::new(&exe)
            .args(["bodies::", "--test-threads", "1"])
            .env("RSHMEM_TRANSPORT", "ofi")
            .env("FI_PROVIDER", provider)
            .output()
            .expect("the test binary runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success()
                && stdout.contains(" 0 failed")
                && !stdout.contains(" 0 passed"),
            "the bodies over {provider}: {}\n--- stdout\n{stdout}\n--- stderr\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
