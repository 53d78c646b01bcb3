//! MPICH beside Open MPI: C programs built with `oshcc` started by MPICH's launcher, Hydra
//! (`mpiexec.hydra`), over PMI-1 and PMI-2; and the MPI programs of `runtime/capi/tests/mpi/`
//! built with MPICH's compiler wrappers (`mpicc.mpich`, `mpicxx.mpich`), whose `MPI_Comm` and
//! `MPI_Datatype` are `int`s, initialising NVSHMEM with their communicator. Each test skips,
//! saying why, where Hydra, MPICH's compilers or the C library are absent (Debian's `mpich`
//! and `libmpich-dev`, installed beside Open MPI, which stays the default `mpirun`).

mod launchers;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use launchers::{build_mpi_programs, check_shmem_and_mpi, found, launch, programs, text, words_of};

const HYDRA: &str = "mpiexec.hydra";

/// `mpiexec.hydra -n n program args` with `env`.
fn hydra(n: &str, program: &Path, args: &[&str], env: &[(&str, &str)]) -> (Output, Duration) {
    launch(&[HYDRA, "-n", n], program, args, env)
}

/// The programs, when Hydra is there too.
fn for_hydra() -> Option<&'static Path> {
    if !found(HYDRA) {
        eprintln!("skipped: {HYDRA} is missing (apt-get install -y mpich)");
        return None;
    }
    programs()
}

/// The bootstraps a Hydra job can take: `auto` (PMI-1 under Hydra), each PMI forced by
/// rshmem's name, and NVSHMEM's name for PMI-1.
const BOOTSTRAPS: [(&str, &str); 4] = [
    ("RSHMEM_BOOTSTRAP", "auto"),
    ("RSHMEM_BOOTSTRAP", "pmi1"),
    ("RSHMEM_BOOTSTRAP", "pmi2"),
    ("NVSHMEM_BOOTSTRAP", "PMI"),
];

#[test]
fn c_programs_run_under_hydra_at_2_and_4_ranks_over_pmi1_and_pmi2() {
    let Some(dir) = for_hydra() else { return };
    for n in ["2", "4"] {
        for program in ["rma", "hello"] {
            for env in BOOTSTRAPS {
                let (out, _) = hydra(n, &dir.join(program), &[], &[env]);
                let said = text(&out);
                assert!(
                    out.status.success(),
                    "{HYDRA} -n {n} {program} {env:?}: {said}"
                );
                assert!(said.contains(&format!("ok at {n} PEs")), "{env:?}: {said}");
            }
        }
    }
}

/// Hydra's `-pmi-port` mode hands each rank `PMI_PORT` and `PMI_ID` but no rank: every
/// bootstrap learns it in the `initack` handshake, PMI-2's before its `fullinit` too.
#[test]
fn c_programs_run_under_hydra_s_pmi_port_mode() {
    let Some(dir) = for_hydra() else { return };
    for n in ["2", "4"] {
        for env in BOOTSTRAPS {
            let hydra = [HYDRA, "-pmi-port", "-n", n];
            let (out, _) = launch(&hydra, &dir.join("rma"), &[], &[env]);
            let said = text(&out);
            assert!(out.status.success(), "-pmi-port -n {n} {env:?}: {said}");
            assert!(said.contains(&format!("ok at {n} PEs")), "{env:?}: {said}");
        }
    }
}

#[test]
fn a_global_exit_under_hydra_ends_the_job_with_its_status() {
    let Some(dir) = for_hydra() else { return };
    for env in BOOTSTRAPS {
        let (out, took) = hydra("4", &dir.join("global_exit"), &[], &[env]);
        assert_eq!(out.status.code(), Some(7), "{env:?}: {}", text(&out));
        assert!(took < Duration::from_secs(15), "{env:?} took {took:?}");
    }
}

/// Hydra 4.0 ends the other ranks at once (SIGKILL) and names one process of the job by its
/// id and status: the killed one's, or one it ended, whichever it reaped first.
#[test]
fn a_rank_killed_under_hydra_ends_the_job_within_seconds() {
    let Some(dir) = for_hydra() else { return };
    for env in BOOTSTRAPS {
        let (out, took) = hydra("4", &dir.join("killed"), &[], &[env]);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(9), "{env:?}: {said}");
        assert!(took < Duration::from_secs(15), "{env:?} took {took:?}");
        assert!(
            said.contains("BAD TERMINATION") && said.contains("Killed (signal 9)"),
            "{env:?}: {said}"
        );
        assert!(!said.contains("left a barrier"), "{env:?}: {said}");
    }
}

#[test]
fn rshmem_info_under_hydra_names_pmi1_and_why() {
    if !found(HYDRA) {
        eprintln!("skipped: {HYDRA} is missing (apt-get install -y mpich)");
        return;
    }
    let (out, _) = hydra("1", Path::new(env!("CARGO_BIN_EXE_rshmem")), &["info"], &[]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("bootstrap: pmi1") && said.contains("Hydra"),
        "{said}"
    );
}

/// The MPI programs, built once with MPICH's compiler wrappers' flags (`mpicxx.mpich
/// -compile_info`, `-link_info`, whose first word is the compiler). `None` (said) when Hydra,
/// MPICH's wrappers or the C library are absent.
fn mpich_programs() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = for_hydra()?.join("mpich");
            let wrappers = ("mpicc.mpich", "mpicxx.mpich");
            if let Some(missing) = [wrappers.0, wrappers.1].iter().find(|tool| !found(tool)) {
                eprintln!("skipped: {missing} is missing (apt-get install -y libmpich-dev)");
                return None;
            }
            build_mpi_programs(&dir, wrappers, |wrapper| {
                (
                    words_of(wrapper, &["-compile_info"], 1),
                    words_of(wrapper, &["-link_info"], 1),
                )
            });
            Some(dir)
        })
        .as_deref()
}

/// Whether `program` is linked with MPICH's library and not Open MPI's.
fn links_mpich(program: &Path) -> bool {
    let out = Command::new("ldd").arg(program).output().unwrap();
    let libraries = String::from_utf8_lossy(&out.stdout);
    libraries.contains("libmpich") && !libraries.contains("libmpi.so")
}

#[test]
fn nvshmem_programs_of_mpich_initialise_with_their_communicator_or_a_unique_id() {
    let Some(dir) = mpich_programs() else { return };
    let program = dir.join("init_attr");
    assert!(links_mpich(&program), "init_attr is not linked with MPICH");
    for n in ["2", "4"] {
        for mode in ["world", "dup", "reversed", "uid"] {
            let (out, _) = hydra(n, &program, &[mode], &[]);
            let said = text(&out);
            assert!(out.status.success(), "-n {n} init_attr {mode}: {said}");
            assert!(
                said.contains(&format!("init_attr {mode}: ok at {n} PEs")),
                "{said}"
            );
        }
    }
    let (out, took) = hydra("4", &program, &["uid-wrong-key"], &[]);
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("rank 3: it presented another job's key"),
        "{said}"
    );
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

#[test]
fn shmem_init_of_an_mpich_program_works_over_mpi_comm_world_and_beside_mpi() {
    let Some(dir) = mpich_programs() else { return };
    let program = dir.join("shmem_and_mpi");
    assert!(
        links_mpich(&program),
        "shmem_and_mpi is not linked with MPICH"
    );
    check_shmem_and_mpi(&program, &["2", "4"], &hydra);
}
