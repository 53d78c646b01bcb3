//! Which bootstrap a process takes, chosen at run time from its environment
//! (`RSHMEM_BOOTSTRAP`, or NVSHMEM's `NVSHMEM_BOOTSTRAP` and `NVSHMEM_BOOTSTRAP_PMI`), and its
//! opening.

use std::ffi::OsString;
use std::time::Instant;

use super::job::Bootstrap;
use super::pmi::{HYDRA_VAR, PmiEnv, PmiVersion, started_by_hydra};
use super::{BootstrapClient, BootstrapEnv, BootstrapError, SOCKET_VAR};

/// The environment variable that picks the bootstrap: `auto` (the default), `rshmem`, `pmix`,
/// `pmi2`, `pmi1`, `mpi` or `uid`.
pub const BOOTSTRAP_VAR: &str = "RSHMEM_BOOTSTRAP";
/// NVSHMEM's variable for the same choice, read when [`BOOTSTRAP_VAR`] is not set: `PMI`
/// (then [`NVSHMEM_PMI_VAR`] says which), `PMIX`, `PMI-2`, `PMI2`, `MPI` or `UID`.
pub const NVSHMEM_BOOTSTRAP_VAR: &str = "NVSHMEM_BOOTSTRAP";
/// NVSHMEM's variable for which PMI `NVSHMEM_BOOTSTRAP=PMI` means: `PMI` (PMI-1, NVSHMEM's
/// default), `PMIX`, `PMI-2` or `PMI2`.
pub const NVSHMEM_PMI_VAR: &str = "NVSHMEM_BOOTSTRAP_PMI";
/// The variables by which a PMIx launcher (`mpirun`, `srun --mpi=pmix`) names the job and
/// this process's rank in it.
pub const PMIX_VARS: [&str; 2] = ["PMIX_NAMESPACE", "PMIX_RANK"];

/// A bootstrap, as [`BOOTSTRAP_VAR`] names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootstrapKind {
    /// The socket of `rshmem run` and `oshrun` ([`SOCKET_VAR`]).
    Rshmem,
    /// PMIx through `libpmix.so.2` (`mpirun`, `prterun`, `srun --mpi=pmix`).
    Pmix,
    /// The PMI-2 wire protocol (`srun --mpi=pmi2`, MPICH's Hydra).
    Pmi2,
    /// The PMI-1 wire protocol (MPICH's Hydra, `srun --mpi=pmi2`).
    Pmi1,
    /// The program's own MPI communicator (`MPI_COMM_WORLD` here; `nvshmemx_init_attr` names
    /// another).
    Mpi,
    /// A unique id that rank 0 made, which only `nvshmemx_init_attr` can hand over.
    Uid,
}

impl BootstrapKind {
    /// The name [`BOOTSTRAP_VAR`] gives it.
    pub fn name(self) -> &'static str {
        match self {
            BootstrapKind::Rshmem => "rshmem",
            BootstrapKind::Pmix => "pmix",
            BootstrapKind::Pmi2 => "pmi2",
            BootstrapKind::Pmi1 => "pmi1",
            BootstrapKind::Mpi => "mpi",
            BootstrapKind::Uid => "uid",
        }
    }
}

/// The bootstrap a process takes, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The bootstrap.
    pub kind: BootstrapKind,
    /// Whether `auto` chose it, so that a PMI-2 server that speaks only PMI-1 is answered in
    /// PMI-1.
    pub auto: bool,
    /// Why it was taken, for `rshmem info` and error messages.
    pub why: String,
}

const ACCEPTED: &str = "auto, rshmem, pmix, pmi2, pmi1, mpi or uid (or NVSHMEM_BOOTSTRAP=PMI, \
     PMIX, PMI-2, PMI2, MPI or UID)";

/// What the variables ask for: `None` for `auto`, and the variable that said so.
fn requested(
    lookup: &mut impl FnMut(&str) -> Option<OsString>,
) -> Result<(Option<BootstrapKind>, String), BootstrapError> {
    let text = |v: OsString| v.to_string_lossy().trim().to_ascii_lowercase();
    if let Some(value) = lookup(BOOTSTRAP_VAR).map(text) {
        let kind = match value.as_str() {
            "" | "auto" => None,
            "rshmem" => Some(BootstrapKind::Rshmem),
            "pmix" => Some(BootstrapKind::Pmix),
            "pmi2" | "pmi-2" => Some(BootstrapKind::Pmi2),
            "pmi1" | "pmi" => Some(BootstrapKind::Pmi1),
            "mpi" => Some(BootstrapKind::Mpi),
            "uid" => Some(BootstrapKind::Uid),
            other => {
                return Err(BootstrapError::Env(format!(
                    "{BOOTSTRAP_VAR}={other} names no bootstrap: set it to {ACCEPTED} (it no \
                     longer holds the launcher's socket, which is {SOCKET_VAR})"
                )));
            }
        };
        return Ok((kind, format!("{BOOTSTRAP_VAR}={value}")));
    }
    let Some(value) = lookup(NVSHMEM_BOOTSTRAP_VAR).map(text) else {
        return Ok((None, String::new()));
    };
    let pmi = |value: &str| match value {
        "pmix" => Some(BootstrapKind::Pmix),
        "pmi-2" | "pmi2" => Some(BootstrapKind::Pmi2),
        "pmi" => Some(BootstrapKind::Pmi1),
        _ => None,
    };
    if value == "pmi" {
        let sub = lookup(NVSHMEM_PMI_VAR).map_or_else(|| "pmi".to_string(), text);
        return match pmi(&sub) {
            Some(kind) => Ok((
                Some(kind),
                format!("{NVSHMEM_BOOTSTRAP_VAR}=PMI with {NVSHMEM_PMI_VAR}={sub}"),
            )),
            None => Err(BootstrapError::Env(format!(
                "{NVSHMEM_PMI_VAR}={sub} names no PMI: set it to PMI, PMIX, PMI-2 or PMI2"
            ))),
        };
    }
    let kind = match value.as_str() {
        "mpi" => Some(BootstrapKind::Mpi),
        "uid" => Some(BootstrapKind::Uid),
        other => pmi(other),
    };
    match kind {
        Some(kind) => Ok((Some(kind), format!("{NVSHMEM_BOOTSTRAP_VAR}={value}"))),
        None => Err(BootstrapError::Env(format!(
            "{NVSHMEM_BOOTSTRAP_VAR}={value} is not a bootstrap rshmem serves (the SHMEM and \
             plugin bootstraps are not here): set {BOOTSTRAP_VAR} to {ACCEPTED}"
        ))),
    }
}

/// The variables by which other launchers say how many ranks they started, looked at only to
/// refuse a process that one of them started with none of the bootstrap variables.
const FOREIGN_SIZE_VARS: [(&str, &str); 3] = [
    ("OMPI_COMM_WORLD_SIZE", "mpirun"),
    ("PMI_SIZE", "a PMI launcher"),
    ("SLURM_STEP_NUM_TASKS", "srun"),
];

/// What `auto` looks for, in order, for messages.
const LOOKED_FOR: &str = "RSHMEM_BOOTSTRAP_SOCKET (rshmem run, oshrun), PMIX_NAMESPACE and PMIX_RANK (mpirun, srun \
     --mpi=pmix), PMI_FD or PMI_PORT (srun --mpi=pmi2, Hydra)";

/// Chooses this process's bootstrap from its environment (`lookup`); `Ok(None)` when no
/// launcher started it, so that it runs as a single process.
///
/// # Errors
/// [`BootstrapError::Env`] when the variables name no bootstrap, when the one asked for lacks
/// its variables (naming them and the launcher that sets them), when `rshmem run`'s variables
/// are partly set, or when another launcher started this process as one of several ranks but
/// set none of the variables looked for.
pub fn choose(
    mut lookup: impl FnMut(&str) -> Option<OsString>,
) -> Result<Option<Choice>, BootstrapError> {
    let (asked, said) = requested(&mut lookup)?;
    let has = |lookup: &mut dyn FnMut(&str) -> Option<OsString>, var: &str| {
        lookup(var).is_some_and(|v| !v.is_empty())
    };
    let pmix_set = PMIX_VARS.iter().all(|var| has(&mut lookup, var));
    let pmi_set = has(&mut lookup, "PMI_FD") || has(&mut lookup, "PMI_PORT");
    let chosen = |kind, auto, why: String| Ok(Some(Choice { kind, auto, why }));
    match asked {
        Some(BootstrapKind::Rshmem) => {
            if BootstrapEnv::from_vars(&mut lookup)?.is_none() {
                return Err(BootstrapError::Env(format!(
                    "{said}, but {SOCKET_VAR} is not set: start the program with `rshmem run \
                     -n N PROGRAM` or `oshrun -np N PROGRAM`"
                )));
            }
            chosen(BootstrapKind::Rshmem, false, said)
        }
        Some(BootstrapKind::Pmix) if !pmix_set => Err(BootstrapError::Env(format!(
            "{said}, but {} are not set: start the program with a PMIx launcher (`mpirun`, \
             `srun --mpi=pmix`), or set {BOOTSTRAP_VAR}=auto",
            PMIX_VARS.join(" and ")
        ))),
        Some(kind @ (BootstrapKind::Pmi2 | BootstrapKind::Pmi1)) if !pmi_set => {
            Err(BootstrapError::Env(format!(
                "{said}, but neither PMI_FD nor PMI_PORT is set: start the program with a PMI \
                 launcher (`srun --mpi=pmi2`, MPICH's `mpiexec`), or set {BOOTSTRAP_VAR}=auto \
                 (asked for {})",
                kind.name()
            )))
        }
        Some(kind) => chosen(kind, false, said),
        None => {
            if BootstrapEnv::from_vars(&mut lookup)?.is_some() {
                chosen(
                    BootstrapKind::Rshmem,
                    true,
                    format!("auto: {SOCKET_VAR} is set (rshmem run, oshrun)"),
                )
            } else if pmix_set {
                chosen(
                    BootstrapKind::Pmix,
                    true,
                    "auto: PMIX_NAMESPACE and PMIX_RANK are set (a PMIx launcher)".to_string(),
                )
            } else if pmi_set && started_by_hydra(&mut lookup) {
                chosen(
                    BootstrapKind::Pmi1,
                    true,
                    format!(
                        "auto: PMI_FD or PMI_PORT and {HYDRA_VAR} are set (MPICH's Hydra, \
                         whose own protocol is PMI-1)"
                    ),
                )
            } else if pmi_set {
                chosen(
                    BootstrapKind::Pmi2,
                    true,
                    "auto: PMI_FD or PMI_PORT is set (a PMI launcher; PMI-2, or PMI-1 where \
                     the launcher offers only that)"
                        .to_string(),
                )
            } else {
                refuse_foreign(&mut lookup).map(|()| None)
            }
        }
    }
}

/// Refuses a process that another launcher started as one of several ranks without any
/// variable `auto` looks for: alone it would run as PE 0 of 1, silently computing something
/// else.
fn refuse_foreign(lookup: &mut impl FnMut(&str) -> Option<OsString>) -> Result<(), BootstrapError> {
    for (var, launcher) in FOREIGN_SIZE_VARS {
        let ranks = lookup(var).and_then(|v| v.to_str()?.trim().parse::<u64>().ok());
        if let Some(ranks) = ranks.filter(|&n| n > 1) {
            return Err(BootstrapError::Env(format!(
                "this process is one of {ranks} ranks that {launcher} started ({var}={ranks}), \
                 but none of the bootstrap variables is set (looked for {LOOKED_FOR}): start it \
                 with `mpirun`, `srun --mpi=pmix` or `--mpi=pmi2`, or `oshrun -np {ranks} \
                 PROGRAM`"
            )));
        }
    }
    Ok(())
}

/// Opens the bootstrap `choice` names: connects to the launcher and learns this rank's place,
/// waiting at most until `deadline` (`PMIx_Init` takes none: it returns or fails as the
/// launcher's server answers).
///
/// # Errors
/// The chosen bootstrap's errors: [`BootstrapError::Env`] for malformed variables,
/// [`BootstrapError::Launcher`] when `libpmix.so.2` cannot be loaded or the launcher refuses,
/// [`BootstrapError::Io`] when it cannot be reached.
pub fn open(
    choice: &Choice,
    mut lookup: impl FnMut(&str) -> Option<OsString>,
    deadline: Instant,
) -> Result<Box<dyn Bootstrap>, BootstrapError> {
    match choice.kind {
        BootstrapKind::Rshmem => {
            let env = BootstrapEnv::from_vars(&mut lookup)?
                .ok_or_else(|| BootstrapError::Env(format!("{SOCKET_VAR} is not set any more")))?;
            Ok(Box::new(BootstrapClient::connect(&env, deadline)?))
        }
        BootstrapKind::Pmix => Ok(Box::new(super::pmix::Pmix::init()?)),
        // SAFETY: MPI_COMM_WORLD lives while MPI runs, which `open` checks.
        BootstrapKind::Mpi => unsafe {
            super::mpi::open(super::mpi::Communicator::World, deadline)
        },
        BootstrapKind::Uid => Err(BootstrapError::Env(format!(
            "{}: the unique-id bootstrap needs the id, which only nvshmemx_init_attr with \
             NVSHMEMX_INIT_WITH_UNIQUEID hands over; call that instead of nvshmem_init or \
             shmem_init, or choose another bootstrap",
            choice.why
        ))),
        BootstrapKind::Pmi2 | BootstrapKind::Pmi1 => {
            let env = PmiEnv::from_vars(&mut lookup)?;
            let version = if choice.kind == BootstrapKind::Pmi1 {
                PmiVersion::One
            } else {
                PmiVersion::Two {
                    or_one: choice.auto,
                }
            };
            super::pmi::open(&env, version, deadline)
        }
    }
}

/// Chooses ([`choose`]) and opens ([`open`]) this process's bootstrap from its environment;
/// `Ok(None)` for a process no launcher started.
///
/// # Errors
/// As [`choose`] and [`open`].
pub fn from_env(deadline: Instant) -> Result<Option<Box<dyn Bootstrap>>, BootstrapError> {
    let lookup = |name: &str| std::env::var_os(name);
    let Some(choice) = choose(lookup)? else {
        return Ok(None);
    };
    tracing::debug!(bootstrap = choice.kind.name(), why = %choice.why, "bootstrap chosen");
    open(&choice, lookup, deadline).map(Some)
}
