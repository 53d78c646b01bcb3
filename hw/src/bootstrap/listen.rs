//! The relay's connections: a listener (the launcher's Unix domain socket, or the unique-id
//! bootstrap's TCP listener), an acceptor thread, and one reader thread per connection that
//! turns its frames into [`Event`]s on a channel for the serving thread (`server.rs`).

use std::io;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::BootstrapError;
use super::wire::{self, Frame, MAX_MESSAGE_BYTES, ReadError, kind};

/// How often the acceptor looks at the stop flag between connections. The listener is
/// nonblocking so that `serve` can end the acceptor without a self-connection trick; 10 ms is
/// noise next to process start-up.
const ACCEPT_POLL_MS: u64 = 10;

/// How long one write to a rank may block. A rank that does not read its answer for this long
/// is treated as gone rather than allowed to stall the whole run.
const WRITE_TIMEOUT_MS: u64 = 10_000;

/// What a connection's reader thread reports.
pub(super) enum Event {
    /// The connection's first frame, a well-formed hello.
    Hello {
        conn: usize,
        rank: u32,
        n_ranks: u32,
        version: u32,
        /// The job key the rank presented (empty on the launcher's socket).
        key: Vec<u8>,
        writer: UnixStream,
    },
    /// A frame after the hello.
    Frame { conn: usize, frame: Frame },
    /// The connection ended cleanly (`None`) or broke (`Some(why)`), which includes a first
    /// frame that was not a hello.
    Closed { conn: usize, why: Option<String> },
    /// `accept` itself failed; the server can take no more connections.
    AcceptFailed(io::Error),
}

/// A listening socket the relay accepts ranks on: the launcher's Unix domain socket, or the
/// TCP listener of the unique-id bootstrap. Accepted connections become `UnixStream`s, whose
/// calls (read, write, timeouts, shutdown) are the same system calls on a TCP socket.
pub(crate) trait Accept: Send + 'static {
    /// Makes `accept` return `WouldBlock` rather than wait.
    fn set_nonblocking(&self, on: bool) -> io::Result<()>;
    /// Takes one connection.
    fn accept_stream(&self) -> io::Result<UnixStream>;
}

impl Accept for UnixListener {
    fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        UnixListener::set_nonblocking(self, on)
    }

    fn accept_stream(&self) -> io::Result<UnixStream> {
        self.accept().map(|(stream, _)| stream)
    }
}

impl Accept for std::net::TcpListener {
    fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        std::net::TcpListener::set_nonblocking(self, on)
    }

    fn accept_stream(&self) -> io::Result<UnixStream> {
        let (stream, _) = self.accept()?;
        // Frames are small and each waits for an answer: no Nagle delay.
        stream.set_nodelay(true)?;
        Ok(UnixStream::from(std::os::fd::OwnedFd::from(stream)))
    }
}

pub(super) fn spawn_acceptor(
    listener: impl Accept,
    tx: Sender<Event>,
    stop: Arc<AtomicBool>,
    deadline: Instant,
) -> Result<JoinHandle<()>, BootstrapError> {
    thread::Builder::new()
        .name("rshmem-bootstrap-accept".to_string())
        .spawn(move || {
            let mut next_conn = 0;
            while !stop.load(Ordering::Relaxed) {
                match listener.accept_stream() {
                    Ok(stream) => {
                        let conn = next_conn;
                        next_conn += 1;
                        if let Err(e) = spawn_reader(conn, stream, tx.clone(), deadline) {
                            let _ = tx.send(Event::AcceptFailed(e));
                            return;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        thread::sleep(Duration::from_millis(ACCEPT_POLL_MS));
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        let _ = tx.send(Event::AcceptFailed(e));
                        return;
                    }
                }
            }
        })
        .map_err(|e| BootstrapError::io("cannot start the bootstrap acceptor thread", e))
}

fn spawn_reader(
    conn: usize,
    stream: UnixStream,
    tx: Sender<Event>,
    deadline: Instant,
) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_write_timeout(Some(Duration::from_millis(WRITE_TIMEOUT_MS)))?;
    let writer = stream.try_clone()?;
    thread::Builder::new()
        .name(format!("rshmem-bootstrap-conn{conn}"))
        .spawn(move || read_connection(conn, stream, writer, &tx, deadline))?;
    Ok(())
}

/// The reader thread of one connection: the hello first, then frames until the end.
fn read_connection(
    conn: usize,
    mut stream: UnixStream,
    writer: UnixStream,
    tx: &Sender<Event>,
    deadline: Instant,
) {
    // A connection that never says hello must not hold a thread past the deadline.
    let hello = stream
        .set_read_timeout(Some(wire::timeout_until(deadline)))
        .map_err(ReadError::Io)
        .and_then(|()| wire::read_frame(&mut stream));
    let hello = match hello {
        Ok(Some(f)) if f.kind == kind::HELLO && f.payload.len() >= 8 => f,
        Ok(Some(f)) => {
            let why = format!(
                "the first frame was of kind {} with {} bytes, not a hello",
                f.kind,
                f.payload.len()
            );
            let _ = tx.send(Event::Closed {
                conn,
                why: Some(why),
            });
            return;
        }
        Ok(None) => {
            let _ = tx.send(Event::Closed { conn, why: None });
            return;
        }
        Err(e) => {
            let _ = tx.send(Event::Closed {
                conn,
                why: Some(describe(&e)),
            });
            return;
        }
    };
    let word = |at: usize| {
        let mut b = [0u8; 4];
        b.copy_from_slice(&hello.payload[at..at + 4]);
        u32::from_le_bytes(b)
    };
    let event = Event::Hello {
        conn,
        rank: hello.rank,
        n_ranks: word(0),
        version: word(4),
        key: hello.payload[8..].to_vec(),
        writer,
    };
    if tx.send(event).is_err() || stream.set_read_timeout(None).is_err() {
        return;
    }
    // From here the serving thread owns every deadline; this thread only reports.
    loop {
        let event = match wire::read_frame(&mut stream) {
            Ok(Some(frame)) => Event::Frame { conn, frame },
            Ok(None) => Event::Closed { conn, why: None },
            Err(e) => Event::Closed {
                conn,
                why: Some(describe(&e)),
            },
        };
        let last = matches!(event, Event::Closed { .. });
        if tx.send(event).is_err() || last {
            return;
        }
    }
}

fn describe(e: &ReadError) -> String {
    match e {
        ReadError::Io(e) => e.to_string(),
        ReadError::TooLarge(len) => {
            format!("it announced a message of {len} bytes, over the limit of {MAX_MESSAGE_BYTES}")
        }
    }
}
