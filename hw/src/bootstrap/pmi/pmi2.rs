//! PMI-2: a PMI-1 style `cmd=init pmi_version=2`, then length-prefixed commands: `fullinit`
//! (which gives the rank and size), `job-getid`, `kvs-put`, `kvs-fence`, `kvs-get`,
//! `info-getjobattr`.

use std::time::Instant;

use super::finalize::SayFn;
use super::wire::{Line, check_rc, expect_cmd, v2_message};
use super::{Kvs, pmi1};
use crate::bootstrap::BootstrapError;

const NAME: &str = "pmi2";

/// The longest value PMI-2 keeps (`PMI2_MAX_VALLEN`).
const VALUE_MAX_BYTES: usize = 1024;

/// A key no rank puts, got after each fence (see [`Pmi2::fence`]).
const FENCE_KEY: &str = "rshmem-fenced";

/// A PMI-2 connection after `fullinit`.
#[derive(Debug)]
pub(super) struct Pmi2 {
    line: Line,
    jobid: String,
    /// Whether MPICH's Hydra is the launcher: its PMI-2 has no `abort` (it ends the job with
    /// status 255 on the unknown command), but it reads PMI-1's on the same connection.
    hydra: bool,
}

/// What the server speaks.
pub(super) enum Spoken {
    /// PMI-2: the connection, this process's rank and the job's size.
    Two(Pmi2, u32, u32),
    /// Only PMI-1 (it answered the PMI-2 `init` with version 1), and the caller accepts that;
    /// with the rank and size from Hydra's `-pmi-port` handshake, when it took place.
    One(Line, Option<(u32, u32)>),
}

impl Pmi2 {
    /// Says `init` for PMI-2 and, when the server agrees, `fullinit`. With `or_one`, a server
    /// that offers only PMI-1 is handed back to speak PMI-1.
    pub(super) fn init(
        mut line: Line,
        or_one: bool,
        deadline: Instant,
    ) -> Result<Spoken, BootstrapError> {
        let place = match super::pmi1::port_mode_id() {
            Some(id) => Some(super::pmi1::initack(&mut line, &id, deadline)?),
            None => None,
        };
        let answer = line.ask_v1("cmd=init pmi_version=2 pmi_subversion=0", deadline)?;
        expect_cmd(&answer, "response_to_init")?;
        let version = answer.get("pmi_version").map(String::as_str);
        if answer.get("rc").map(String::as_str) != Some("0") || version != Some("2") {
            if or_one && version == Some("1") {
                return Ok(Spoken::One(line, place));
            }
            return Err(BootstrapError::Launcher {
                bootstrap: NAME,
                what: format!(
                    "the launcher does not speak PMI-2 (it answered pmi_version={} rc={}): \
                     start the program with `srun --mpi=pmi2`, or set RSHMEM_BOOTSTRAP=pmi1",
                    version.unwrap_or("missing"),
                    answer.get("rc").map_or("missing", String::as_str)
                ),
            });
        }
        let rank = match place {
            Some((rank, _)) => rank.to_string(),
            None => std::env::var("PMI_RANK").unwrap_or_default(),
        };
        let jobid = std::env::var("PMI_JOBID").unwrap_or_default();
        let mut fields = vec![("cmd", "fullinit"), ("pmirank", rank.as_str())];
        if !jobid.is_empty() {
            fields.push(("pmijobid", jobid.as_str()));
        }
        fields.push(("threaded", "FALSE"));
        let answer = line.ask_v2(&fields, deadline)?;
        expect_cmd(&answer, "fullinit-response")?;
        check_rc(&answer, NAME, "fullinit")?;
        let number = |key: &str| {
            answer
                .get(key)
                .and_then(|v| v.parse::<u32>().ok())
                .ok_or_else(|| {
                    BootstrapError::Protocol(format!(
                        "the PMI-2 fullinit answer gave no {key}: {answer:?}"
                    ))
                })
        };
        let (rank, size) = (number("rank")?, number("size")?);
        if rank >= size {
            return Err(BootstrapError::Protocol(format!(
                "the PMI-2 server gave rank {rank} of a job of {size}"
            )));
        }
        let id = line.ask_v2(&[("cmd", "job-getid")], deadline)?;
        expect_cmd(&id, "job-getid-response")?;
        check_rc(&id, NAME, "job-getid")?;
        let jobid = id.get("jobid").cloned().unwrap_or(jobid);
        let hydra = super::started_by_hydra(&mut |var| std::env::var_os(var));
        let kvs = Pmi2 { line, jobid, hydra };
        Ok(Spoken::Two(kvs, rank, size))
    }
}

impl Kvs for Pmi2 {
    const SAY_FINALIZE: SayFn = say_finalize;

    fn name(&self) -> &'static str {
        NAME
    }

    fn line(&self) -> &Line {
        &self.line
    }

    fn value_max_bytes(&self) -> usize {
        VALUE_MAX_BYTES
    }

    fn put(&mut self, key: &str, value: &str, deadline: Instant) -> Result<(), BootstrapError> {
        let fields = [("cmd", "kvs-put"), ("key", key), ("value", value)];
        let answer = self.line.ask_v2(&fields, deadline)?;
        expect_cmd(&answer, "kvs-put-response")?;
        check_rc(&answer, NAME, &format!("kvs-put of {key}"))
    }

    /// `kvs-fence`, then a `kvs-get` of a key no rank puts. Slurm answers the fence when every
    /// rank has fenced; Hydra answers it at once and holds back a get of a missing key until
    /// every rank has fenced as often as this one, so the get is what waits there.
    fn fence(&mut self, deadline: Instant) -> Result<(), BootstrapError> {
        let answer = self.line.ask_v2(&[("cmd", "kvs-fence")], deadline)?;
        expect_cmd(&answer, "kvs-fence-response")?;
        check_rc(&answer, NAME, "kvs-fence")?;
        self.get(FENCE_KEY, deadline).map(drop)
    }

    /// A key of the job's space, or one of the job's attributes (`PMI_process_mapping`),
    /// which PMI-2 keeps apart.
    fn get(&mut self, key: &str, deadline: Instant) -> Result<Option<String>, BootstrapError> {
        let answer = if key.starts_with("PMI_") {
            let fields = [("cmd", "info-getjobattr"), ("key", key)];
            let answer = self.line.ask_v2(&fields, deadline)?;
            expect_cmd(&answer, "info-getjobattr-response")?;
            answer
        } else {
            let fields = [
                ("cmd", "kvs-get"),
                ("jobid", self.jobid.as_str()),
                ("srcid", "-1"),
                ("key", key),
            ];
            let answer = self.line.ask_v2(&fields, deadline)?;
            expect_cmd(&answer, "kvs-get-response")?;
            answer
        };
        let found = answer.get("found").is_some_and(|f| f == "TRUE");
        Ok(
            if answer.get("rc").map(String::as_str) == Some("0") && found {
                answer.get("value").cloned()
            } else {
                None
            },
        )
    }

    fn abort(&self, status: i32) -> Result<(), BootstrapError> {
        if self.hydra {
            return self.line.tell(&pmi1::abort_line(status));
        }
        let message = format!("rshmem global exit with status {status}");
        self.line.tell(&v2_message(&[
            ("cmd", "abort"),
            ("isworld", "TRUE"),
            ("msg", &message),
        ]))
    }
}

/// `cmd=finalize`, answered by `finalize-response`.
fn say_finalize(line: &mut Line, deadline: Instant) -> Result<(), BootstrapError> {
    expect_cmd(
        &line.ask_v2(&[("cmd", "finalize")], deadline)?,
        "finalize-response",
    )
}
