//! PMI-1: `cmd=init`, `get_maxes`, `get_my_kvsname`, then `put`, `barrier_in` and `get` in
//! the job's key-value space. The rank and size come from `PMI_RANK` and `PMI_SIZE`, or, in
//! MPICH Hydra's `-pmi-port` mode (`PMI_PORT` and `PMI_ID`, no `PMI_RANK`), from the server:
//! the client sends `cmd=initack pmiid=ID`, and Hydra answers `cmd=initack`, then
//! `cmd=set size=N`, `cmd=set rank=R` and `cmd=set debug=D` (as MPICH 4.0.2's Hydra answered a
//! client written here, docs/launching.md); a PMI-2 client does the same before its `init`.

use std::time::Instant;

use super::Kvs;
use super::finalize::SayFn;
use super::wire::{Line, check_rc, expect_cmd};
use crate::bootstrap::BootstrapError;

const NAME: &str = "pmi1";

/// The longest value PMI-1 servers keep when they do not say (MPICH's `PMI_VALLEN_MAX`).
const DEFAULT_VALUE_MAX_BYTES: usize = 256;

/// A PMI-1 connection after `init`.
#[derive(Debug)]
pub(super) struct Pmi1 {
    line: Line,
    kvsname: String,
    value_max_bytes: usize,
}

impl Pmi1 {
    /// Says `init` in PMI-1 and learns the job's key-value space; returns it with this
    /// process's rank and the job's size.
    pub(super) fn init(
        mut line: Line,
        deadline: Instant,
    ) -> Result<(Pmi1, u32, u32), BootstrapError> {
        let place = match port_mode_id() {
            Some(id) => initack(&mut line, &id, deadline)?,
            None => rank_and_size()?,
        };
        let answer = line.ask_v1("cmd=init pmi_version=1 pmi_subversion=1", deadline)?;
        expect_cmd(&answer, "response_to_init")?;
        check_rc(&answer, NAME, "init")?;
        Self::init_in_place(line, place, deadline)
    }

    /// The rest of [`init`](Self::init), for a server that already answered a PMI-2 `init`
    /// with PMI-1; `place` is the rank and size its `initack` gave, in `-pmi-port` mode.
    pub(super) fn init_after_two(
        line: Line,
        place: Option<(u32, u32)>,
        deadline: Instant,
    ) -> Result<(Pmi1, u32, u32), BootstrapError> {
        let place = match place {
            Some(place) => place,
            None => rank_and_size()?,
        };
        Self::init_in_place(line, place, deadline)
    }

    /// The queries after `init`, for the rank and size `place` this process already knows.
    fn init_in_place(
        mut line: Line,
        (rank, size): (u32, u32),
        deadline: Instant,
    ) -> Result<(Pmi1, u32, u32), BootstrapError> {
        let maxes = line.ask_v1("cmd=get_maxes", deadline)?;
        expect_cmd(&maxes, "maxes")?;
        let value_max_bytes = maxes
            .get("vallen_max")
            .and_then(|v| v.parse().ok())
            .unwrap_or(DEFAULT_VALUE_MAX_BYTES);
        let name = line.ask_v1("cmd=get_my_kvsname", deadline)?;
        expect_cmd(&name, "my_kvsname")?;
        // Hydra's answer has no rc: a refusal is an rc other than 0, or no name.
        if name.contains_key("rc") {
            check_rc(&name, NAME, "get_my_kvsname")?;
        }
        let kvsname = name.get("kvsname").cloned().ok_or_else(|| {
            BootstrapError::Protocol(format!(
                "the PMI-1 server named no key-value space: {name:?}"
            ))
        })?;
        let kvs = Pmi1 {
            line,
            kvsname,
            value_max_bytes,
        };
        Ok((kvs, rank, size))
    }
}

/// `PMI_ID` in Hydra's `-pmi-port` mode: set, with no `PMI_RANK`.
pub(super) fn port_mode_id() -> Option<String> {
    let id = std::env::var("PMI_ID").ok()?;
    std::env::var_os("PMI_RANK").is_none().then_some(id)
}

/// Hydra's `-pmi-port` handshake: this process's `PMI_ID`, answered with its rank and the
/// job's size. PMI-2 clients say it first too: Hydra's PMI-2 `fullinit` wants the rank.
pub(super) fn initack(
    line: &mut Line,
    id: &str,
    deadline: Instant,
) -> Result<(u32, u32), BootstrapError> {
    let ack = line.ask_v1(&format!("cmd=initack pmiid={}", id.trim()), deadline)?;
    expect_cmd(&ack, "initack")?;
    let (mut rank, mut size) = (None, None);
    for _ in 0..3 {
        let set = line.read_v1(deadline)?;
        expect_cmd(&set, "set")?;
        let number = |key: &str| set.get(key).and_then(|v| v.parse::<u32>().ok());
        rank = rank.or(number("rank"));
        size = size.or(number("size"));
    }
    match (rank, size) {
        (Some(rank), Some(size)) if rank < size => Ok((rank, size)),
        _ => Err(BootstrapError::Protocol(format!(
            "the PMI server's answer to initack for PMI_ID={id} gave no rank below its size \
             (rank {rank:?}, size {size:?})"
        ))),
    }
}

/// `PMI_RANK` and `PMI_SIZE`, which PMI-1 launchers set.
fn rank_and_size() -> Result<(u32, u32), BootstrapError> {
    let number = |var: &str| {
        std::env::var(var)
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .ok_or_else(|| {
                BootstrapError::Env(format!(
                    "{var} is not set to a number, and the PMI-1 protocol learns this rank's \
                     place from it: start the program with `srun --mpi=pmi2` or MPICH's \
                     `mpiexec`, or set RSHMEM_BOOTSTRAP=pmi2"
                ))
            })
    };
    let (rank, size) = (number("PMI_RANK")?, number("PMI_SIZE")?);
    if rank >= size {
        return Err(BootstrapError::Env(format!(
            "PMI_RANK={rank} is not below PMI_SIZE={size}: the launcher's variables disagree"
        )));
    }
    Ok((rank, size))
}

impl Kvs for Pmi1 {
    const SAY_FINALIZE: SayFn = say_finalize;

    fn name(&self) -> &'static str {
        NAME
    }

    fn line(&self) -> &Line {
        &self.line
    }

    fn value_max_bytes(&self) -> usize {
        self.value_max_bytes
    }

    fn put(&mut self, key: &str, value: &str, deadline: Instant) -> Result<(), BootstrapError> {
        let text = format!("cmd=put kvsname={} key={key} value={value}", self.kvsname);
        let answer = self.line.ask_v1(&text, deadline)?;
        expect_cmd(&answer, "put_result")?;
        check_rc(&answer, NAME, &format!("put of {key}"))
    }

    fn fence(&mut self, deadline: Instant) -> Result<(), BootstrapError> {
        let answer = self.line.ask_v1("cmd=barrier_in", deadline)?;
        expect_cmd(&answer, "barrier_out")
    }

    fn get(&mut self, key: &str, deadline: Instant) -> Result<Option<String>, BootstrapError> {
        let text = format!("cmd=get kvsname={} key={key}", self.kvsname);
        let answer = self.line.ask_v1(&text, deadline)?;
        expect_cmd(&answer, "get_result")?;
        Ok(match answer.get("rc").map(String::as_str) {
            Some("0") => answer.get("value").cloned(),
            _ => None,
        })
    }

    fn abort(&self, status: i32) -> Result<(), BootstrapError> {
        self.line.tell(&abort_line(status))
    }
}

/// `cmd=abort`, which ends the job with `status`.
pub(super) fn abort_line(status: i32) -> Vec<u8> {
    format!("cmd=abort exitcode={status}\n").into_bytes()
}

/// `cmd=finalize`, answered by `finalize_ack`.
fn say_finalize(line: &mut Line, deadline: Instant) -> Result<(), BootstrapError> {
    expect_cmd(&line.ask_v1("cmd=finalize", deadline)?, "finalize_ack")
}
