//! Which bootstrap a process takes (`hw::bootstrap::choose`): `RSHMEM_BOOTSTRAP`, NVSHMEM's
//! names for the same choice, `auto`'s order, and the errors that name what is missing; and
//! the nodes of a run (`hw::process::nodes_of`).

#![cfg(any(feature = "process", feature = "cuda"))]

use std::collections::HashMap;
use std::ffi::OsString;

use hw::bootstrap::{BootstrapError, BootstrapKind, Choice, N_RANKS_VAR, RANK_VAR, SOCKET_VAR};

fn choose(vars: &[(&str, &str)]) -> Result<Option<Choice>, BootstrapError> {
    let map: HashMap<String, OsString> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), OsString::from(v)))
        .collect();
    hw::bootstrap::choose(|name| map.get(name).cloned())
}

fn kind(vars: &[(&str, &str)]) -> BootstrapKind {
    match choose(vars) {
        Ok(Some(choice)) => choice.kind,
        other => panic!("expected a bootstrap for {vars:?}, got {other:?}"),
    }
}

fn error(vars: &[(&str, &str)]) -> String {
    match choose(vars) {
        Err(e @ BootstrapError::Env(_)) => e.to_string(),
        other => panic!("expected an Env error for {vars:?}, got {other:?}"),
    }
}

const OURS: [(&str, &str); 3] = [(RANK_VAR, "1"), (N_RANKS_VAR, "2"), (SOCKET_VAR, "/s")];
const PMIX: [(&str, &str); 2] = [("PMIX_NAMESPACE", "job"), ("PMIX_RANK", "0")];

#[test]
fn auto_takes_our_socket_then_pmix_then_pmi() {
    assert_eq!(choose(&[]).unwrap(), None, "no launcher: a single process");
    let all = [OURS.as_slice(), &PMIX, &[("PMI_FD", "3")]].concat();
    assert_eq!(kind(&all), BootstrapKind::Rshmem);
    assert_eq!(kind(&all[3..]), BootstrapKind::Pmix);
    assert_eq!(kind(&all[5..]), BootstrapKind::Pmi2);
    assert_eq!(kind(&[("PMI_PORT", "host:1")]), BootstrapKind::Pmi2);
    // MPICH's Hydra: PMI-1, its own protocol.
    let hydra = [("PMI_FD", "6"), ("PMI_RANK", "0"), ("MPI_LOCALNRANKS", "2")];
    let choice = choose(&hydra).unwrap().unwrap();
    assert_eq!(choice.kind, BootstrapKind::Pmi1);
    assert!(choice.why.contains("Hydra"), "{}", choice.why);
    assert_eq!(
        kind(&[hydra.as_slice(), &[("RSHMEM_BOOTSTRAP", "pmi2")]].concat()),
        BootstrapKind::Pmi2
    );
    let why = choose(&PMIX).unwrap().unwrap().why;
    assert!(
        why.contains("auto") && why.contains("PMIX_NAMESPACE"),
        "{why}"
    );
}

#[test]
fn a_named_bootstrap_is_taken_or_its_missing_variables_are_named() {
    assert_eq!(
        kind(&[("RSHMEM_BOOTSTRAP", "PMI1"), ("PMI_FD", "3")]),
        BootstrapKind::Pmi1
    );
    let with_pmix = [PMIX.as_slice(), &OURS, &[("RSHMEM_BOOTSTRAP", "pmix")]].concat();
    assert_eq!(
        kind(&with_pmix),
        BootstrapKind::Pmix,
        "the name beats auto's order"
    );
    let e = error(&[("RSHMEM_BOOTSTRAP", "pmix")]);
    assert!(e.contains("PMIX_NAMESPACE") && e.contains("mpirun"), "{e}");
    let e = error(&[("RSHMEM_BOOTSTRAP", "pmi2")]);
    assert!(e.contains("PMI_FD") && e.contains("srun --mpi=pmi2"), "{e}");
    let e = error(&[("RSHMEM_BOOTSTRAP", "rshmem")]);
    assert!(e.contains(SOCKET_VAR) && e.contains("oshrun"), "{e}");
    let e = error(&[("RSHMEM_BOOTSTRAP", "/tmp/old.sock")]);
    assert!(e.contains("pmix") && e.contains(SOCKET_VAR), "{e}");
}

#[test]
fn nvshmem_names_are_accepted() {
    let pmi = [("PMI_FD", "3")];
    let with = |extra: &[(&'static str, &'static str)]| [pmi.as_slice(), extra].concat();
    assert_eq!(
        kind(&with(&[("NVSHMEM_BOOTSTRAP", "PMI")])),
        BootstrapKind::Pmi1
    );
    assert_eq!(
        kind(&with(&[
            ("NVSHMEM_BOOTSTRAP", "PMI"),
            ("NVSHMEM_BOOTSTRAP_PMI", "PMI-2")
        ])),
        BootstrapKind::Pmi2
    );
    assert_eq!(
        kind(&[PMIX.as_slice(), &[("NVSHMEM_BOOTSTRAP", "PMIX")]].concat()),
        BootstrapKind::Pmix
    );
    assert_eq!(
        kind(&with(&[("NVSHMEM_BOOTSTRAP", "PMI2")])),
        BootstrapKind::Pmi2
    );
    assert_eq!(kind(&[("NVSHMEM_BOOTSTRAP", "MPI")]), BootstrapKind::Mpi);
    assert_eq!(kind(&[("NVSHMEM_BOOTSTRAP", "UID")]), BootstrapKind::Uid);
    assert_eq!(kind(&[("RSHMEM_BOOTSTRAP", "mpi")]), BootstrapKind::Mpi);
    let e = error(&[("NVSHMEM_BOOTSTRAP", "SHMEM")]);
    assert!(
        e.contains("NVSHMEM_BOOTSTRAP=shmem") && e.contains("RSHMEM_BOOTSTRAP"),
        "{e}"
    );
    let e = error(&[("NVSHMEM_BOOTSTRAP", "PMI"), ("NVSHMEM_BOOTSTRAP_PMI", "x")]);
    assert!(e.contains("NVSHMEM_BOOTSTRAP_PMI=x"), "{e}");
}

#[test]
fn ranks_of_a_launcher_without_bootstrap_variables_are_refused_and_a_single_one_runs_alone() {
    let e = error(&[("OMPI_COMM_WORLD_SIZE", "4")]);
    assert!(
        e.contains("mpirun") && e.contains("PMIX_NAMESPACE") && e.contains("oshrun -np 4"),
        "{e}"
    );
    let e = error(&[("SLURM_STEP_NUM_TASKS", "8")]);
    assert!(e.contains("srun") && e.contains("PMI_FD"), "{e}");
    assert_eq!(choose(&[("OMPI_COMM_WORLD_SIZE", "1")]).unwrap(), None);
    assert_eq!(choose(&[("PMI_SIZE", "garbage")]).unwrap(), None);
}

/// The nodes of a run (`hw::process::nodes_of`), from a launcher that places ranks on nodes.
#[cfg(all(feature = "process", target_os = "linux"))]
mod nodes {
    use std::time::{Duration, Instant};

    use hw::bootstrap::{Bootstrap, BootstrapError, NodeIdentity};

    /// A rank of a job placed by a launcher on nodes `nodes` (by rank): what a PMI or PMIx
    /// launcher of several nodes reports, without the nodes.
    #[derive(Debug)]
    struct Placed {
        rank: u32,
        nodes: Vec<u32>,
    }

    impl Bootstrap for Placed {
        fn name(&self) -> &'static str {
            "pmix"
        }
        fn rank(&self) -> u32 {
            self.rank
        }
        fn size(&self) -> u32 {
            self.nodes.len() as u32
        }
        fn node(&self) -> NodeIdentity {
            let mine = self.nodes[self.rank as usize];
            NodeIdentity {
                node_id: mine,
                local_rank: 0,
                local_size: self.nodes.iter().filter(|&&n| n == mine).count() as u32,
            }
        }
        fn allgather(&mut self, _: &[u8], _: Instant) -> Result<Vec<Vec<u8>>, BootstrapError> {
            Ok(self
                .nodes
                .iter()
                .map(|n| n.to_le_bytes().to_vec())
                .collect())
        }
        fn global_exit(&self, _: i32) -> Result<(), BootstrapError> {
            Ok(())
        }
    }

    /// A run's nodes are the launcher's: every rank's node id where the job spans nodes, and all
    /// zero on one node.
    #[test]
    fn the_nodes_of_a_run_are_the_launchers() {
        let soon = Instant::now() + Duration::from_secs(5);
        let mut one_node = Placed {
            rank: 2,
            nodes: vec![0, 0, 0],
        };
        assert_eq!(
            hw::process::nodes_of(&mut one_node, soon).unwrap(),
            vec![0, 0, 0]
        );
        let mut two_nodes = Placed {
            rank: 3,
            nodes: vec![0, 1, 0, 1],
        };
        assert_eq!(
            hw::process::nodes_of(&mut two_nodes, soon).unwrap(),
            vec![0, 1, 0, 1]
        );
    }
}
