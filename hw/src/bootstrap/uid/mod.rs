//! The unique-id bootstrap, NVSHMEM's `NVSHMEMX_INIT_WITH_UNIQUEID`: the program's rank 0
//! calls [`get_unique_id`], which opens a TCP listener and writes into the 124 bytes of
//! `nvshmemx_uniqueid_t`'s payload where it listens and a random job key; the program hands
//! the id to every rank by its own means (`MPI_Bcast`, a framework's store), and each rank
//! calls [`open`] with it, its rank and the number of ranks. Rank 0's process serves the
//! launcher's relay (`server.rs`) on that listener in a thread; every rank, rank 0 included,
//! is its client over TCP. No launcher takes part, so ranks learn their node by host name,
//! and a global exit reaches every rank through a connection of its own to rank 0 (`watch.rs`).
//!
//! With NVSHMEM's [`SESSION_ID_VAR`] set, the id names that address instead and opens
//! nothing: whichever process is rank 0 listens there when it joins, so the id's maker need
//! not be rank 0. An IPv6 address keeps its scope (the interface's index), so a link-local
//! address works between ranks of one host, and of hosts whose interface has that index.

mod iface;
mod watch;

pub use iface::{SESSION_ID_VAR, SOCK_FAMILY_VAR, SOCK_IFNAME_VAR};

use std::ffi::OsString;
use std::net::{
    Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, TcpListener, TcpStream,
};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::client::BootstrapClient;
use super::job::{Bootstrap, NodeIdentity};
use super::{BootstrapError, ServeEnd, hosts, server};

/// The bytes of an id: `nvshmemx_uniqueid_t` less its `int version`.
pub const UNIQUE_ID_BYTES: usize = 124;

/// What every id starts with, so that zeroes or another library's id are refused by name.
const MAGIC: &[u8; 8] = b"rshmUID1";
/// The id's kinds (byte 8): a listener that `get_unique_id` opened, a simulated run, an
/// address of [`SESSION_ID_VAR`] that rank 0 listens on when it joins.
const KIND_TCP: u8 = 1;
const KIND_SIMULATED: u8 = 2;
const KIND_SESSION: u8 = 3;
/// The job key's length: 128 random bits.
const KEY_BYTES: usize = 16;
/// Offsets of the TCP id's fields: family (4 or 6), port (LE), address (16 bytes, IPv4 in
/// the first 4), key, IPv6 scope (LE).
const FAMILY_AT: usize = 9;
const PORT_AT: usize = 10;
const ADDRESS_AT: usize = 12;
const KEY_AT: usize = 28;
const SCOPE_AT: usize = KEY_AT + KEY_BYTES;

/// How long before the ranks' own deadline the relay gives up on ranks that never connected,
/// so that the others hear from it which ranks those are.
const CONNECT_MARGIN: Duration = Duration::from_secs(5);
/// The relay's deadline once every rank connected: the job's life, for which the ranks' own
/// calls carry their deadlines.
const JOB_LIFE: Duration = Duration::from_secs(365 * 24 * 3600);
/// How long to wait between attempts to reach a relay that is not listening yet.
const CONNECT_RETRY: Duration = Duration::from_millis(20);

const NAME: &str = "uid";

/// The listener [`get_unique_id`] opened in this process, with its job key, until this
/// process's [`open`] as rank 0 takes it.
static LISTENING: Mutex<Option<([u8; KEY_BYTES], TcpListener)>> = Mutex::new(None);

/// What an id holds.
enum Decoded {
    /// A run's relay: where rank 0 listens, the job key, and whether rank 0 opens the listener
    /// when it joins ([`SESSION_ID_VAR`]) rather than having opened it in `get_unique_id`.
    Tcp {
        address: SocketAddr,
        key: [u8; KEY_BYTES],
        session: bool,
    },
    /// An id of a simulated run, which the simulator serves.
    Simulated,
}

fn random_key() -> Result<[u8; KEY_BYTES], BootstrapError> {
    let mut key = [0u8; KEY_BYTES];
    // SAFETY: the buffer is writable for its length.
    let got = unsafe { libc::getrandom(key.as_mut_ptr().cast(), KEY_BYTES, 0) };
    if got != KEY_BYTES as isize {
        return Err(BootstrapError::io(
            "cannot draw the unique id's job key (getrandom)",
            std::io::Error::last_os_error(),
        ));
    }
    Ok(key)
}

/// Returns the id that leads every rank to rank 0 (`nvshmemx_get_uniqueid`): with
/// [`SESSION_ID_VAR`] set, that address, which rank 0 will listen on; otherwise this process,
/// which must then be rank 0, opens its listener now. A second call replaces the first's
/// listener and key.
///
/// # Errors
/// [`BootstrapError::Env`] when [`SESSION_ID_VAR`] is malformed, or [`SOCK_FAMILY_VAR`] or
/// [`SOCK_IFNAME_VAR`] name no usable interface; [`BootstrapError::Io`] when the listener
/// cannot be opened.
pub fn get_unique_id() -> Result<[u8; UNIQUE_ID_BYTES], BootstrapError> {
    get_unique_id_from(|name| std::env::var_os(name))
}

/// [`get_unique_id`] with the variables of `lookup` rather than the environment's.
///
/// # Errors
/// As [`get_unique_id`].
pub fn get_unique_id_from(
    mut lookup: impl FnMut(&str) -> Option<OsString>,
) -> Result<[u8; UNIQUE_ID_BYTES], BootstrapError> {
    let key = random_key()?;
    if let Some(address) = iface::session_address(&mut lookup)? {
        tracing::debug!(%address, "unique id of a session: rank 0 listens there when it joins");
        return Ok(encode(KIND_SESSION, address, key));
    }
    let at = iface::listen_address(&mut lookup)?;
    let listener = TcpListener::bind(at).map_err(|e| {
        BootstrapError::io(
            format!(
                "cannot listen on {at} for the unique-id bootstrap; choose another interface \
                 with {SOCK_IFNAME_VAR}"
            ),
            e,
        )
    })?;
    let address = listener
        .local_addr()
        .map_err(|e| BootstrapError::io("cannot read the unique-id listener's port", e))?;
    *LISTENING.lock().unwrap_or_else(|e| e.into_inner()) = Some((key, listener));
    tracing::debug!(%address, "unique-id bootstrap listening");
    Ok(encode(KIND_TCP, address, key))
}

/// The id of `kind` that leads to `address` with `key`.
fn encode(kind: u8, address: SocketAddr, key: [u8; KEY_BYTES]) -> [u8; UNIQUE_ID_BYTES] {
    let mut id = [0u8; UNIQUE_ID_BYTES];
    id[..MAGIC.len()].copy_from_slice(MAGIC);
    id[MAGIC.len()] = kind;
    id[PORT_AT..PORT_AT + 2].copy_from_slice(&address.port().to_le_bytes());
    match address {
        SocketAddr::V4(v4) => {
            id[FAMILY_AT] = 4;
            id[ADDRESS_AT..ADDRESS_AT + 4].copy_from_slice(&v4.ip().octets());
        }
        SocketAddr::V6(v6) => {
            id[FAMILY_AT] = 6;
            id[ADDRESS_AT..ADDRESS_AT + 16].copy_from_slice(&v6.ip().octets());
            id[SCOPE_AT..SCOPE_AT + 4].copy_from_slice(&v6.scope_id().to_le_bytes());
        }
    }
    id[KEY_AT..KEY_AT + KEY_BYTES].copy_from_slice(&key);
    id
}

/// The id of a simulated run: marked as such, it opens nothing (the simulator is the
/// bootstrap there).
pub fn simulated_unique_id() -> [u8; UNIQUE_ID_BYTES] {
    let mut id = [0u8; UNIQUE_ID_BYTES];
    id[..MAGIC.len()].copy_from_slice(MAGIC);
    id[MAGIC.len()] = KIND_SIMULATED;
    id
}

/// Whether `id` is one of [`simulated_unique_id`].
pub fn is_simulated(id: &[u8]) -> bool {
    matches!(decode(id), Ok(Decoded::Simulated))
}

fn decode(id: &[u8]) -> Result<Decoded, BootstrapError> {
    let refuse = |what: &str| {
        BootstrapError::InvalidArgument(format!(
            "the unique id {what}: give every rank the bytes rank 0's nvshmemx_get_uniqueid \
             wrote (broadcast them before nvshmemx_set_attr_uniqueid_args)"
        ))
    };
    if id.len() != UNIQUE_ID_BYTES || !id.starts_with(MAGIC) {
        return Err(refuse(
            "was not made by nvshmemx_get_uniqueid (all zeroes, or another library's)",
        ));
    }
    let port = u16::from_le_bytes([id[PORT_AT], id[PORT_AT + 1]]);
    let mut ip = [0u8; 16];
    ip.copy_from_slice(&id[ADDRESS_AT..ADDRESS_AT + 16]);
    let scope = u32::from_le_bytes(id[SCOPE_AT..SCOPE_AT + 4].try_into().expect("4 bytes"));
    let kind = id[MAGIC.len()];
    if kind == KIND_SIMULATED {
        return Ok(Decoded::Simulated);
    }
    let address = match (kind, id[FAMILY_AT]) {
        (KIND_TCP | KIND_SESSION, 4) => SocketAddr::V4(SocketAddrV4::new(
            Ipv4Addr::new(ip[0], ip[1], ip[2], ip[3]),
            port,
        )),
        (KIND_TCP | KIND_SESSION, 6) => {
            SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::from(ip), port, 0, scope))
        }
        _ => return Err(refuse("is damaged (unknown kind or address family)")),
    };
    let mut key = [0u8; KEY_BYTES];
    key.copy_from_slice(&id[KEY_AT..KEY_AT + KEY_BYTES]);
    Ok(Decoded::Tcp {
        address,
        key,
        session: kind == KIND_SESSION,
    })
}

/// The listener rank 0 serves the relay on: the one its [`get_unique_id`] opened, or, for a
/// session's id, one it opens now at `address`.
fn relay_listener(
    address: SocketAddr,
    key: [u8; KEY_BYTES],
    session: bool,
) -> Result<TcpListener, BootstrapError> {
    if session {
        return TcpListener::bind(address).map_err(|e| {
            BootstrapError::io(
                format!(
                    "rank 0 cannot listen on {address}, which the unique id names \
                     ({SESSION_ID_VAR} where it was made): choose an address of rank 0's host \
                     and a free port"
                ),
                e,
            )
        });
    }
    match LISTENING.lock().unwrap_or_else(|e| e.into_inner()).take() {
        Some((mine, listener)) if mine == key => Ok(listener),
        _ => Err(BootstrapError::InvalidArgument(
            "rank 0 must be the process whose nvshmemx_get_uniqueid made the id, and this \
             process made none (or a newer one): call nvshmemx_get_uniqueid on rank 0 and give \
             its id to every rank (or set NVSHMEM_BOOTSTRAP_UID_SESSION_ID where it is made)"
                .to_string(),
        )),
    }
}

/// Rank 0 starts the relay on `listener`.
fn start_relay(
    listener: TcpListener,
    key: [u8; KEY_BYTES],
    n_ranks: u32,
    deadline: Instant,
) -> Result<(), BootstrapError> {
    let connect_by = deadline
        .checked_sub(CONNECT_MARGIN)
        .unwrap_or(deadline)
        .max(Instant::now());
    std::thread::Builder::new()
        .name("rshmem-uid-relay".to_string())
        .spawn(move || {
            let life = Instant::now() + JOB_LIFE;
            match server::serve_listener(listener, n_ranks, key.to_vec(), connect_by, life) {
                Ok(ServeEnd::AllLeft) => tracing::debug!("unique-id relay: every rank left"),
                // The relay's process is a rank of the job, and the job ends: every rank
                // hears it from its watcher first.
                Ok(ServeEnd::GlobalExit { rank, status }) => {
                    tracing::error!(rank, status, "shmem_global_exit ends the job");
                    watch::broadcast(key, status);
                    std::process::exit(status);
                }
                Err(e) => tracing::error!("unique-id relay: {e}"),
            }
        })
        .map(drop)
        .map_err(|e| BootstrapError::io("cannot start the unique-id relay's thread", e))
}

/// Connects to the relay at `address`, retrying while it is not listening yet.
fn reach(address: SocketAddr, rank: u32, deadline: Instant) -> Result<UnixStream, BootstrapError> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match TcpStream::connect_timeout(&address, left.max(Duration::from_millis(1))) {
            Ok(stream) => {
                stream
                    .set_nodelay(true)
                    .map_err(|e| BootstrapError::io("cannot set TCP_NODELAY", e))?;
                // The relay's client speaks through `UnixStream`'s calls, the same system
                // calls on a TCP socket.
                return Ok(UnixStream::from(OwnedFd::from(stream)));
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused && !left.is_zero() => {
                std::thread::sleep(CONNECT_RETRY);
            }
            Err(e) => {
                return Err(BootstrapError::io(
                    format!(
                        "rank {rank} cannot reach rank 0's unique-id listener at {address} by \
                         the deadline; is rank 0 running, and is {address} reachable from \
                         here (see {SOCK_IFNAME_VAR})?"
                    ),
                    e,
                ));
            }
        }
    }
}

/// This rank's unique-id bootstrap.
#[derive(Debug)]
pub struct Uid {
    client: BootstrapClient,
    node: NodeIdentity,
    /// The job key, which names this job's watchers in rank 0's process.
    key: [u8; KEY_BYTES],
}

/// Joins the job of `id` as `rank` of `n_ranks` (`nvshmemx_init_attr` with
/// `NVSHMEMX_INIT_WITH_UNIQUEID`): rank 0 starts the relay, every rank connects to it and
/// learns its node, and every rank but 0 registers for the job's global exit with rank 0.
/// Collective over the job's ranks.
///
/// # Errors
/// [`BootstrapError::InvalidArgument`] for an id not made by [`get_unique_id`], a simulated
/// id, zero ranks or a rank out of range, or a rank 0 that did not make the id;
/// [`BootstrapError::Rejected`] when the relay refuses this rank (another job's key, a
/// duplicate rank, another count of ranks); [`BootstrapError::Deadline`] naming the ranks
/// that never connected; the connection's errors.
pub fn open(
    id: &[u8],
    rank: u32,
    n_ranks: u32,
    deadline: Instant,
) -> Result<Box<dyn Bootstrap>, BootstrapError> {
    let (address, key, session) = match decode(id)? {
        Decoded::Tcp {
            address,
            key,
            session,
        } => (address, key, session),
        Decoded::Simulated => {
            return Err(BootstrapError::InvalidArgument(
                "the unique id is a simulated run's, and this process runs outside the \
                 simulator: make the id with nvshmemx_get_uniqueid in this run"
                    .to_string(),
            ));
        }
    };
    if n_ranks == 0 || rank >= n_ranks {
        return Err(BootstrapError::InvalidArgument(format!(
            "rank {rank} of {n_ranks}: pass nvshmemx_set_attr_uniqueid_args a rank from 0 to \
             nranks - 1 and nranks of at least 1 (MPI_Comm_rank and MPI_Comm_size, for \
             example)"
        )));
    }
    let watch_port = if rank == 0 {
        start_relay(
            relay_listener(address, key, session)?,
            key,
            n_ranks,
            deadline,
        )?;
        Some(watch::serve(address, key, n_ranks, deadline)?)
    } else {
        None
    };
    let stream = reach(address, rank, deadline)?;
    let mut client = BootstrapClient::present(stream, rank, n_ranks, &key, deadline)?;
    let node = hosts::learn_node(
        rank,
        n_ranks,
        |mine, by| client.allgather(mine, by),
        deadline,
    )?;
    // Rank 0 tells the others where its exit watchers connect.
    let mine = watch_port.map(u16::to_le_bytes);
    let ports = client.allgather(mine.as_ref().map_or(&[][..], |p| &p[..]), deadline)?;
    if rank != 0 {
        let port = ports
            .first()
            .and_then(|p| <[u8; 2]>::try_from(p.as_slice()).ok())
            .ok_or_else(|| {
                BootstrapError::Protocol("rank 0 sent no port for the exit watchers".to_string())
            })?;
        let mut at = address;
        at.set_port(u16::from_le_bytes(port));
        watch::watch(at, key, rank, deadline)?;
    }
    Ok(Box::new(Uid { client, node, key }))
}

impl Bootstrap for Uid {
    fn name(&self) -> &'static str {
        NAME
    }

    fn rank(&self) -> u32 {
        self.client.rank()
    }

    fn size(&self) -> u32 {
        self.client.n_ranks()
    }

    fn node(&self) -> NodeIdentity {
        self.node
    }

    fn allgather(
        &mut self,
        mine: &[u8],
        deadline: Instant,
    ) -> Result<Vec<Vec<u8>>, BootstrapError> {
        self.client.allgather(mine, deadline)
    }

    /// Tells the relay, which tells every rank (those in a bootstrap call on their relay
    /// connection, all of them through their watchers) and ends rank 0's process with
    /// `status`. Rank 0 tells its watchers itself before it returns, as its own exit may come
    /// before the relay's thread runs.
    fn global_exit(&self, status: i32) -> Result<(), BootstrapError> {
        let told = self.client.global_exit(status);
        if self.client.rank() == 0 {
            watch::broadcast(self.key, status);
        }
        told
    }
}
