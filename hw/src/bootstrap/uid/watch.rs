//! A global exit that reaches every rank of a unique-id job, not only those inside a bootstrap
//! call: no launcher stands behind these ranks to end the others (a framework may have started
//! them), so rank 0's process keeps one more connection to each other rank, on which it sends
//! the exit status. Each rank watches its connection on a thread of its own and exits with the
//! status it reads; a connection that closes without one (rank 0 ended) ends only the watch.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::KEY_BYTES;
use crate::bootstrap::BootstrapError;

/// The connections rank 0's process holds, with their job's key: a process may host the rank
/// 0 of several jobs (tests do), and a global exit ends only its own job's ranks.
static WATCHERS: Mutex<Vec<([u8; KEY_BYTES], TcpStream)>> = Mutex::new(Vec::new());

/// How often rank 0's acceptor looks for a watcher while none is waiting.
const ACCEPT_POLL: Duration = Duration::from_millis(2);

/// What a watcher sends on connecting: the job key and its rank.
const HELLO_BYTES: usize = KEY_BYTES + 4;

/// Rank 0: listens next to the relay (`relay`'s address, another port) for the watchers of
/// the job's `n_ranks - 1` other ranks, accepted on a thread until every one came or
/// `deadline` passed. Returns the port.
///
/// # Errors
/// [`BootstrapError::Io`] when the listener or its thread cannot be made.
pub(super) fn serve(
    relay: SocketAddr,
    key: [u8; KEY_BYTES],
    n_ranks: u32,
    deadline: Instant,
) -> Result<u16, BootstrapError> {
    let mut at = relay;
    at.set_port(0);
    let listener = TcpListener::bind(at)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|e| BootstrapError::io(format!("cannot listen on {at} for exit watchers"), e))?;
    let port = listener
        .local_addr()
        .map_err(|e| BootstrapError::io("cannot read the exit watchers' port", e))?
        .port();
    std::thread::Builder::new()
        .name("rshmem-uid-exit-accept".to_string())
        .spawn(move || accept(&listener, key, n_ranks.saturating_sub(1), deadline))
        .map_err(|e| BootstrapError::io("cannot start the exit watchers' acceptor", e))?;
    Ok(port)
}

/// Accepts `expected` watchers of the job of `key`, acknowledging each once it is recorded.
fn accept(listener: &TcpListener, key: [u8; KEY_BYTES], expected: u32, deadline: Instant) {
    let mut accepted = 0;
    while accepted < expected && Instant::now() < deadline {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(ACCEPT_POLL);
                continue;
            }
            Err(e) => {
                tracing::warn!("unique-id exit watchers: accept failed: {e}");
                continue;
            }
        };
        match admit(stream, key, deadline) {
            Ok(rank) => {
                accepted += 1;
                tracing::trace!(rank, "exit watcher recorded");
            }
            Err(e) => tracing::warn!("unique-id exit watchers: refused a connection: {e}"),
        }
    }
    if accepted < expected {
        tracing::warn!(
            accepted,
            expected,
            "unique-id exit watchers: not every rank connected by the deadline; a global exit \
             reaches the others only through their next bootstrap call"
        );
    }
}

/// Reads a watcher's hello, records its connection if the key is the job's, and acknowledges.
fn admit(mut stream: TcpStream, key: [u8; KEY_BYTES], deadline: Instant) -> std::io::Result<u32> {
    stream.set_nonblocking(false)?;
    let left = deadline.saturating_duration_since(Instant::now());
    stream.set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
    let mut hello = [0u8; HELLO_BYTES];
    stream.read_exact(&mut hello)?;
    if hello[..KEY_BYTES] != key {
        return Err(std::io::Error::other("another job's key"));
    }
    let rank = u32::from_le_bytes(hello[KEY_BYTES..].try_into().expect("4 bytes"));
    stream.set_read_timeout(None)?;
    WATCHERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((key, stream.try_clone()?));
    stream.write_all(&[1])?;
    Ok(rank)
}

/// Rank 0's process: sends `status` to every watcher of the job of `key`, once (the
/// connections are dropped after). Best effort: a rank whose connection broke is gone already.
pub(super) fn broadcast(key: [u8; KEY_BYTES], status: i32) {
    let mut watchers = WATCHERS.lock().unwrap_or_else(|e| e.into_inner());
    let (ours, others): (Vec<_>, Vec<_>) = watchers.drain(..).partition(|(k, _)| *k == key);
    *watchers = others;
    for (_, mut stream) in ours {
        if let Err(e) = stream.write_all(&status.to_le_bytes()) {
            tracing::debug!("unique-id global exit: a watcher is gone: {e}");
        }
    }
}

/// Every rank but 0: connects to rank 0's watcher port at `at`, waits for the acknowledgement
/// by `deadline`, then watches the connection on a thread that exits this process with the
/// status rank 0 sends.
///
/// # Errors
/// [`BootstrapError::Io`] when rank 0 cannot be reached or does not acknowledge in time.
pub(super) fn watch(
    at: SocketAddr,
    key: [u8; KEY_BYTES],
    rank: u32,
    deadline: Instant,
) -> Result<(), BootstrapError> {
    let fail = |e| {
        BootstrapError::io(
            format!("rank {rank} cannot register for the job's global exit with rank 0 at {at}"),
            e,
        )
    };
    let left = deadline.saturating_duration_since(Instant::now());
    let mut stream =
        TcpStream::connect_timeout(&at, left.max(Duration::from_millis(1))).map_err(fail)?;
    let mut hello = [0u8; HELLO_BYTES];
    hello[..KEY_BYTES].copy_from_slice(&key);
    hello[KEY_BYTES..].copy_from_slice(&rank.to_le_bytes());
    let mut ack = [0u8; 1];
    stream
        .write_all(&hello)
        .and_then(|()| {
            let left = deadline.saturating_duration_since(Instant::now());
            stream.set_read_timeout(Some(left.max(Duration::from_millis(1))))
        })
        .and_then(|()| stream.read_exact(&mut ack))
        .and_then(|()| stream.set_read_timeout(None))
        .map_err(fail)?;
    std::thread::Builder::new()
        .name("rshmem-uid-exit-watch".to_string())
        .spawn(move || {
            let mut status = [0u8; 4];
            if stream.read_exact(&mut status).is_ok() {
                let status = i32::from_le_bytes(status);
                tracing::error!(rank, status, "a global exit ends the job");
                std::process::exit(status);
            }
        })
        .map(drop)
        .map_err(|e| BootstrapError::io("cannot start the global exit's watcher thread", e))
}
