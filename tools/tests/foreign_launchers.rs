//! C programs built with `oshcc`, started by other launchers than rshmem's: Open MPI's
//! `mpirun` (PMIx) and a one-host Slurm's `srun` (`--mpi=pmix`, `--mpi=pmi2`, and PMI-1 over
//! the same plugin). Each test skips, saying why, where its launcher or the C library is
//! absent (`cargo build --release -p rshmem-capi`; Debian's `openmpi-bin`, and `slurmctld
//! slurmd slurm-client munge` run as root by `tools/launch/slurm-one-host.sh`).
//!
//! MPI programs that initialise NVSHMEM themselves (`runtime/capi/tests/mpi/`): with their MPI
//! communicator, with a unique id sent by `MPI_Bcast`, and OpenSHMEM with MPI in either order,
//! built with `oshcc` or `oshc++` and Open MPI's flags (`mpicc --showme`).

mod launchers;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use launchers::{build_mpi_programs, check_shmem_and_mpi, found, launch, programs, text, words_of};

fn mpirun(n: &str, program: &Path) -> (Output, Duration) {
    mpirun_with(n, program, &[], &[])
}

/// `mpirun -np n program args` with `env`.
fn mpirun_with(n: &str, program: &Path, args: &[&str], env: &[(&str, &str)]) -> (Output, Duration) {
    let launcher = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", n];
    launch(&launcher, program, args, env)
}

/// The programs, when `mpirun` is there too.
fn for_mpirun() -> Option<&'static Path> {
    if !found("mpirun") {
        eprintln!("skipped: mpirun is missing (apt-get install -y openmpi-bin)");
        return None;
    }
    programs()
}

#[test]
fn c_programs_run_under_mpirun_at_2_and_4_ranks() {
    let Some(dir) = for_mpirun() else { return };
    for n in ["2", "4"] {
        for program in ["rma", "hello"] {
            let (out, _) = mpirun(n, &dir.join(program));
            assert!(
                out.status.success(),
                "mpirun -np {n} {program}: {}",
                text(&out)
            );
            assert!(
                text(&out).contains(&format!("ok at {n} PEs")),
                "{}",
                text(&out)
            );
        }
    }
}

/// With every peer forced onto libfabric (`RSHMEM_TRANSPORT=ofi`, `tcp;ofi_rxm`), as a job
/// across nodes would reach its remote peers.
#[test]
fn c_programs_run_under_mpirun_over_libfabric() {
    let Some(dir) = for_mpirun() else { return };
    if let Err(e) = hw::ofi::probe() {
        eprintln!("skipped: {e}");
        return;
    }
    let env = [("RSHMEM_TRANSPORT", "ofi"), ("FI_PROVIDER", "tcp;ofi_rxm")];
    for program in ["rma", "hello"] {
        let (out, _) = mpirun_with("4", &dir.join(program), &[], &env);
        assert!(
            out.status.success() && text(&out).contains("ok at 4 PEs"),
            "mpirun -np 4 {program} over libfabric: {}",
            text(&out)
        );
    }
    let (out, _) = mpirun_with(
        "2",
        &dir.join("rma"),
        &[],
        &[("FI_PROVIDER", "nosuch"), env[0]],
    );
    assert!(
        !out.status.success() && text(&out).contains("FI_PROVIDER=nosuch"),
        "the network path was not taken: {}",
        text(&out)
    );
}

#[test]
fn a_global_exit_under_mpirun_ends_the_job_with_its_status() {
    let Some(dir) = for_mpirun() else { return };
    let (out, took) = mpirun("4", &dir.join("global_exit"));
    assert_eq!(out.status.code(), Some(7), "{}", text(&out));
    assert!(took < Duration::from_secs(15), "took {took:?}");
}

#[test]
fn a_rank_killed_under_mpirun_ends_the_job_within_seconds_naming_it() {
    let Some(dir) = for_mpirun() else { return };
    let (out, took) = mpirun("4", &dir.join("killed"));
    assert!(!out.status.success(), "{}", text(&out));
    assert!(took < Duration::from_secs(15), "took {took:?}");
    let said = text(&out);
    assert!(
        said.contains("rank 3") && said.contains("signal 9"),
        "{said}"
    );
    assert!(!said.contains("left a barrier"), "{said}");
}

/// The MPI programs, built once with Open MPI's compile and link flags (`mpicxx
/// --showme:compile`, ...). `None` (said) when mpirun, Open MPI's compilers or the C library
/// are absent.
fn mpi_programs() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = for_mpirun()?.join("mpi");
            if let Some(missing) = ["mpicc", "mpicxx"].iter().find(|tool| !found(tool)) {
                eprintln!("skipped: {missing} is missing (apt-get install -y libopenmpi-dev)");
                return None;
            }
            build_mpi_programs(&dir, ("mpicc", "mpicxx"), |wrapper| {
                (
                    words_of(wrapper, &["--showme:compile"], 0),
                    words_of(wrapper, &["--showme:link"], 0),
                )
            });
            Some(dir)
        })
        .as_deref()
}

#[test]
fn nvshmem_programs_initialise_with_their_mpi_communicator_or_a_unique_id() {
    let Some(dir) = mpi_programs() else { return };
    for n in ["2", "4"] {
        for mode in ["world", "dup", "reversed", "uid"] {
            let (out, _) = mpirun_with(n, &dir.join("init_attr"), &[mode], &[]);
            let said = text(&out);
            assert!(out.status.success(), "-np {n} init_attr {mode}: {said}");
            assert!(
                said.contains(&format!("init_attr {mode}: ok at {n} PEs")),
                "{said}"
            );
        }
    }
    // The unique id over IPv6 loopback, and a session id on which rank 0 listens when it
    // joins.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let session = format!("127.0.0.1:{port}");
    let cases: [&[(&str, &str)]; 2] = [
        &[
            ("NVSHMEM_BOOTSTRAP_UID_SOCK_FAMILY", "AF_INET6"),
            ("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", "=lo"),
        ],
        &[("NVSHMEM_BOOTSTRAP_UID_SESSION_ID", &session)],
    ];
    for env in cases {
        let (out, _) = mpirun_with("4", &dir.join("init_attr"), &["uid"], env);
        let said = text(&out);
        assert!(out.status.success(), "uid with {env:?}: {said}");
        assert!(said.contains("init_attr uid: ok at 4 PEs"), "{said}");
    }
}

#[test]
fn a_unique_id_with_another_key_or_another_count_of_ranks_is_refused_by_name() {
    let Some(dir) = mpi_programs() else { return };
    let cases = [
        ("uid-wrong-key", "rank 3: it presented another job's key"),
        (
            "uid-wrong-size",
            "rank 3: it was told of 5 ranks, the job has 4",
        ),
    ];
    for (mode, expected) in cases {
        let (out, took) = mpirun_with("4", &dir.join("init_attr"), &[mode], &[]);
        let said = text(&out);
        assert!(!out.status.success(), "{mode}: {said}");
        assert!(said.contains(expected), "{mode}: {said}");
        assert!(took < Duration::from_secs(30), "{mode} took {took:?}");
    }
}

#[test]
fn shmem_init_works_before_or_after_mpi_init_and_over_mpi_comm_world() {
    let Some(dir) = mpi_programs() else { return };
    check_shmem_and_mpi(&dir.join("shmem_and_mpi"), &["4"], &mpirun_with);
}

#[test]
fn rshmem_info_under_mpirun_names_pmix_and_why() {
    if !found("mpirun") {
        eprintln!("skipped: mpirun is missing (apt-get install -y openmpi-bin)");
        return;
    }
    let start = Instant::now();
    let out = Command::new("timeout")
        .args(["-k", "5", "60", "mpirun", "--allow-run-as-root", "-np", "1"])
        .arg(env!("CARGO_BIN_EXE_rshmem"))
        .arg("info")
        .env_remove("RSHMEM_BOOTSTRAP_SOCKET")
        .output()
        .unwrap();
    assert!(start.elapsed() < Duration::from_secs(30));
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("pmix") && said.contains("PMIX_NAMESPACE"),
        "{said}"
    );
}

/// The one-host Slurm that `tools/launch/slurm-one-host.sh` starts, shared with the
/// conformance suite's launcher tests.
#[path = "../launch/slurm_one_host.rs"]
mod slurm_one_host;

use slurm_one_host::Slurm;

/// `srun -N 1 -n 4 --mpi=MPI program` on `slurm`, with `env`.
fn srun(slurm: &Slurm, mpi: &str, program: &Path, env: &[(&str, &str)]) -> (Output, Duration) {
    srun_on(slurm, "1", mpi, program, env)
}

/// `srun -N nodes -n 4 --mpi=MPI program` on `slurm`, with `env`.
fn srun_on(
    slurm: &Slurm,
    nodes: &str,
    mpi: &str,
    program: &Path,
    env: &[(&str, &str)],
) -> (Output, Duration) {
    let conf = slurm.conf().to_string_lossy().into_owned();
    let mpi = format!("--mpi={mpi}");
    let all: Vec<(&str, &str)> = [("SLURM_CONF", conf.as_str())]
        .into_iter()
        .chain(env.iter().copied())
        .collect();
    launch(&["srun", "-N", nodes, "-n", "4", &mpi], program, &[], &all)
}

/// Every srun case in one test: they share one Slurm, whose daemons listen on fixed ports.
#[test]
fn c_programs_run_under_srun_with_pmix_pmi2_and_pmi1() {
    static ONE_SLURM: Mutex<()> = Mutex::new(());
    let _one = ONE_SLURM.lock().unwrap_or_else(|e| e.into_inner());
    let Some(dir) = programs() else { return };
    let Some(slurm) = Slurm::get() else { return };
    let rma = dir.join("rma");
    for (mpi, env) in [
        ("pmix", vec![]),
        ("pmi2", vec![]),
        ("pmi2", vec![("RSHMEM_BOOTSTRAP", "pmi1")]),
        ("pmi2", vec![("NVSHMEM_BOOTSTRAP", "PMI-2")]),
    ] {
        let (out, _) = srun(&slurm, mpi, &rma, &env);
        assert!(
            out.status.success(),
            "srun --mpi={mpi} {env:?}: {}",
            text(&out)
        );
        assert!(text(&out).contains("ok at 4 PEs"), "{}", text(&out));
    }
    if hw::ofi::probe().is_ok() {
        across_two_nodes(&slurm, dir);
    }
    for mpi in ["pmix", "pmi2"] {
        let (out, took) = srun(&slurm, mpi, &dir.join("killed"), &[]);
        let said = text(&out);
        assert!(!out.status.success(), "{said}");
        assert!(took < Duration::from_secs(20), "--mpi={mpi} took {took:?}");
        assert!(said.contains("task 3"), "--mpi={mpi}: {said}");
        let (out, took) = srun(&slurm, mpi, &dir.join("global_exit"), &[]);
        assert!(took < Duration::from_secs(20), "--mpi={mpi} took {took:?}");
        assert!(
            text(&out).contains("exit code 7"),
            "--mpi={mpi}: {}",
            text(&out)
        );
    }
}

/// Two ranks on each of the Slurm's two nodes: the programs pass over both providers and
/// both PMIs, `rshmem info` says which ranks each reaches through libfabric, and a rank
/// killed on the second node ends the job within seconds, named with its node.
fn across_two_nodes(slurm: &Slurm, dir: &Path) {
    // Why only `hello` over `sockets`: its remote operations take a millisecond or two here,
    // so `rma` takes 20 to 40 s (BENCHMARKS.md); the conformance bodies cover it.
    let runs = [
        ("pmix", "tcp;ofi_rxm", "rma"),
        ("pmi2", "tcp;ofi_rxm", "rma"),
        ("pmix", "tcp;ofi_rxm", "hello"),
        ("pmi2", "sockets", "hello"),
    ];
    for (mpi, provider, program) in runs {
        let env = [("FI_PROVIDER", provider)];
        let (out, _) = srun_on(slurm, "2", mpi, &dir.join(program), &env);
        assert!(
            out.status.success(),
            "srun -N 2 --mpi={mpi} {program} over {provider}: {}",
            text(&out)
        );
    }
    for (mpi, provider) in [("pmix", "tcp;ofi_rxm"), ("pmi2", "sockets")] {
        let env = [("FI_PROVIDER", provider)];
        let (out, took) = srun_on(slurm, "2", mpi, &dir.join("killed"), &env);
        let said = text(&out);
        assert!(!out.status.success(), "{said}");
        assert!(took < Duration::from_secs(20), "--mpi={mpi} took {took:?}");
        assert!(said.contains("n2: task 3"), "--mpi={mpi}: {said}");
    }
    let conf = slurm.conf().to_string_lossy().into_owned();
    let (out, _) = launch(
        &["srun", "-N", "2", "-n", "4", "--mpi=pmix"],
        Path::new(env!("CARGO_BIN_EXE_rshmem")),
        &["info"],
        &[("SLURM_CONF", &conf), ("FI_PROVIDER", "sockets")],
    );
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("paths: rank 0 on node 0: shared memory to ranks 0-1; libfabric (sockets on")
            && said.contains("to ranks 2-3"),
        "{said}"
    );
}
