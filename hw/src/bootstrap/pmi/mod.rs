//! The PMI-1 and PMI-2 wire protocols in Rust, what `srun --mpi=pmi2` and MPICH's Hydra
//! serve: plain text on a socket the launcher hands over (`PMI_FD`) or names (`PMI_PORT`).
//!
//! Both offer a key-value space with put, fence and get; the allgather is built on that once
//! ([`Pmi`]), each protocol providing only its messages ([`Kvs`]). Values are short
//! (`vallen_max`, 1024 bytes at most), cannot hold spaces or semicolons and must be text, so
//! bytes go as hexadecimal in chunks, with their length under a key of its own.

mod finalize;
mod node;
mod pmi1;
mod pmi2;
mod wire;

use std::ffi::OsString;
use std::fmt::Write as _;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::Instant;

use super::job::{Bootstrap, NodeIdentity};
use super::{BootstrapError, MAX_MESSAGE_BYTES};

pub(crate) use wire::Line;

/// The variable MPICH's Hydra sets for every process it starts (with `MPI_LOCALRANKID`), and
/// other PMI launchers do not: how a process knows Hydra started it.
pub(crate) const HYDRA_VAR: &str = "MPI_LOCALNRANKS";

/// Whether MPICH's Hydra started this process ([`HYDRA_VAR`] is set). Hydra serves no `abort`
/// in PMI-2's format, only in PMI-1's.
pub(crate) fn started_by_hydra(lookup: &mut impl FnMut(&str) -> Option<OsString>) -> bool {
    lookup(HYDRA_VAR).is_some_and(|v| !v.is_empty())
}

/// Which protocol to speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PmiVersion {
    /// PMI-1 only.
    One,
    /// PMI-2; `or_one`: fall back to PMI-1 when the launcher offers only that (`auto`).
    Two { or_one: bool },
}

/// Where the launcher's PMI server is.
#[derive(Debug)]
pub(crate) enum PmiEnv {
    /// A connected socket this process inherited (`PMI_FD`).
    Fd(i32),
    /// A TCP address to connect to (`PMI_PORT`, `host:port`).
    Port(String),
}

impl PmiEnv {
    /// Reads `PMI_FD` (preferred: the socket is already connected) or `PMI_PORT`.
    pub(crate) fn from_vars(
        lookup: &mut impl FnMut(&str) -> Option<OsString>,
    ) -> Result<PmiEnv, BootstrapError> {
        if let Some(fd) = lookup("PMI_FD") {
            let text = fd.to_string_lossy();
            return text.trim().parse::<i32>().map(PmiEnv::Fd).map_err(|_| {
                BootstrapError::Env(format!(
                    "PMI_FD={text} is not a descriptor number: the PMI launcher sets it; start \
                     the program with `srun --mpi=pmi2` or MPICH's `mpiexec`"
                ))
            });
        }
        match lookup("PMI_PORT") {
            Some(port) => Ok(PmiEnv::Port(port.to_string_lossy().into_owned())),
            None => Err(BootstrapError::Env(
                "neither PMI_FD nor PMI_PORT is set: start the program with `srun --mpi=pmi2` \
                 or MPICH's `mpiexec`"
                    .to_string(),
            )),
        }
    }

    /// The socket to the launcher. Both kinds are sockets, whose reads, writes and timeouts
    /// are the same calls, so both become a `UnixStream`.
    fn connect(&self) -> Result<UnixStream, BootstrapError> {
        match self {
            PmiEnv::Fd(fd) => {
                // SAFETY: F_GETFD only reads the descriptor's flags; it fails for a closed one.
                if *fd < 0 || unsafe { libc::fcntl(*fd, libc::F_GETFD) } == -1 {
                    return Err(BootstrapError::Env(format!(
                        "PMI_FD={fd} is not an open descriptor of this process: a program \
                         between the launcher and this one closed it, or PMI_FD is stale; \
                         start the program directly under `srun --mpi=pmi2`"
                    )));
                }
                // SAFETY: the launcher gave this process the open descriptor for its PMI
                // client, and only this client takes it (the bootstrap opens once).
                Ok(UnixStream::from(unsafe { OwnedFd::from_raw_fd(*fd) }))
            }
            PmiEnv::Port(address) => std::net::TcpStream::connect(address.as_str())
                .map(|tcp| UnixStream::from(OwnedFd::from(tcp)))
                .map_err(|e| {
                    BootstrapError::io(
                        format!("cannot reach the PMI server at PMI_PORT={address}"),
                        e,
                    )
                }),
        }
    }
}

/// What a PMI protocol provides: a job-wide key-value space.
trait Kvs: Send + std::fmt::Debug {
    /// Says `finalize` on a connection in this protocol.
    const SAY_FINALIZE: finalize::SayFn;
    /// `pmi1` or `pmi2`.
    fn name(&self) -> &'static str;
    /// The connection to the launcher.
    fn line(&self) -> &Line;
    /// The longest value the server keeps, in bytes.
    fn value_max_bytes(&self) -> usize;
    /// Stores `value` under `key` for every rank, visible after the next fence.
    fn put(&mut self, key: &str, value: &str, deadline: Instant) -> Result<(), BootstrapError>;
    /// Returns when every rank has fenced; puts before it are visible to gets after it.
    fn fence(&mut self, deadline: Instant) -> Result<(), BootstrapError>;
    /// The value under `key`, `None` when no rank put it.
    fn get(&mut self, key: &str, deadline: Instant) -> Result<Option<String>, BootstrapError>;
    /// Asks the launcher to end the job with `status`.
    fn abort(&self, status: i32) -> Result<(), BootstrapError>;
}

/// A job's bootstrap over PMI-1 or PMI-2.
#[derive(Debug)]
struct Pmi<K> {
    kvs: K,
    rank: u32,
    size: u32,
    node: NodeIdentity,
    /// Allgathers so far: each uses keys of its own.
    round: u64,
}

/// Connects to the launcher named by `env` in `version` and learns this rank's place.
pub(crate) fn open(
    env: &PmiEnv,
    version: PmiVersion,
    deadline: Instant,
) -> Result<Box<dyn Bootstrap>, BootstrapError> {
    let line = Line::new(env.connect()?);
    match version {
        PmiVersion::One => {
            let (kvs, rank, size) = pmi1::Pmi1::init(line, deadline)?;
            finish(kvs, rank, size, deadline)
        }
        PmiVersion::Two { or_one } => match pmi2::Pmi2::init(line, or_one, deadline)? {
            pmi2::Spoken::Two(kvs, rank, size) => finish(kvs, rank, size, deadline),
            pmi2::Spoken::One(line, place) => {
                let (kvs, rank, size) = pmi1::Pmi1::init_after_two(line, place, deadline)?;
                finish(kvs, rank, size, deadline)
            }
        },
    }
}

fn finish<K: Kvs + 'static>(
    kvs: K,
    rank: u32,
    size: u32,
    deadline: Instant,
) -> Result<Box<dyn Bootstrap>, BootstrapError> {
    finalize::arm(kvs.line().try_clone()?, K::SAY_FINALIZE);
    let mut pmi = Pmi::new(kvs, rank, size);
    pmi.find_node(deadline)?;
    Ok(Box::new(pmi))
}

impl<K: Kvs> Pmi<K> {
    fn new(kvs: K, rank: u32, size: u32) -> Self {
        Pmi {
            kvs,
            rank,
            size,
            node: NodeIdentity {
                node_id: 0,
                local_rank: rank,
                local_size: size,
            },
            round: 0,
        }
    }

    /// Where this rank runs: from the launcher's `PMI_process_mapping` where it offers one,
    /// else from every rank's host name (a collective either way, so every rank takes the
    /// same path).
    fn find_node(&mut self, deadline: Instant) -> Result<(), BootstrapError> {
        let mapping = self.kvs.get("PMI_process_mapping", deadline)?;
        let nodes = match mapping
            .as_deref()
            .and_then(|m| node::of_mapping(m, self.size))
        {
            Some(nodes) => nodes,
            None => {
                let host = node::host_name();
                let hosts = self.allgather(host.as_bytes(), deadline)?;
                node::of_hosts(&hosts)
            }
        };
        self.node = node::identity(&nodes, self.rank);
        Ok(())
    }

    /// Bytes per chunk: two hexadecimal digits a byte, a little room below the limit.
    fn chunk_bytes(&self) -> usize {
        (self.kvs.value_max_bytes().saturating_sub(2) / 2).max(1)
    }
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    let digits = text.as_bytes();
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect()
}

impl<K: Kvs> Bootstrap for Pmi<K> {
    fn name(&self) -> &'static str {
        self.kvs.name()
    }

    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.size
    }

    fn node(&self) -> NodeIdentity {
        self.node
    }

    fn allgather(
        &mut self,
        mine: &[u8],
        deadline: Instant,
    ) -> Result<Vec<Vec<u8>>, BootstrapError> {
        BootstrapError::check_len(mine)?;
        self.round += 1;
        let (round, chunk) = (self.round, self.chunk_bytes());
        let key = |rank: u32, part: &str| format!("rshmem-{round}-{rank}-{part}");
        self.kvs
            .put(&key(self.rank, "len"), &mine.len().to_string(), deadline)?;
        for (i, part) in mine.chunks(chunk).enumerate() {
            self.kvs
                .put(&key(self.rank, &i.to_string()), &hex(part), deadline)?;
        }
        self.kvs.fence(deadline)?;
        let mut all = Vec::with_capacity(self.size as usize);
        let protocol_name = self.kvs.name();
        for rank in 0..self.size {
            let missing = |what: &str| {
                BootstrapError::Protocol(format!(
                    "{what} of rank {rank} in allgather {round} of the {protocol_name} \
                     launcher's key-value space"
                ))
            };
            let len = self
                .kvs
                .get(&key(rank, "len"), deadline)?
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|&len| len as u64 <= MAX_MESSAGE_BYTES)
                .ok_or_else(|| missing("no length"))?;
            let mut bytes = Vec::with_capacity(len);
            for i in 0..len.div_ceil(chunk) {
                let part = self.kvs.get(&key(rank, &i.to_string()), deadline)?;
                let part = part
                    .as_deref()
                    .and_then(unhex)
                    .ok_or_else(|| missing(&format!("no readable chunk {i}")))?;
                bytes.extend_from_slice(&part);
            }
            if bytes.len() != len {
                return Err(missing(&format!("{} bytes, not {len},", bytes.len())));
            }
            all.push(bytes);
        }
        Ok(all)
    }

    fn barrier(&mut self, deadline: Instant) -> Result<(), BootstrapError> {
        self.kvs.fence(deadline)
    }

    fn global_exit(&self, status: i32) -> Result<(), BootstrapError> {
        finalize::disarm();
        self.kvs.abort(status)
    }
}

impl<K> Drop for Pmi<K> {
    fn drop(&mut self) {
        finalize::now();
    }
}

#[cfg(test)]
mod tests {
    use super::{hex, unhex};

    #[test]
    fn hex_round_trips_and_refuses_odd_text() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(unhex(&hex(&bytes)).unwrap(), bytes);
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("zz"), None);
    }
}
