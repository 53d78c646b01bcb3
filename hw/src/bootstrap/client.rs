//! A rank's side: one connection to the launcher's server, and the allgather over it.

use std::io;
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use super::wire::{self, Frame, MAX_MESSAGE_BYTES, PROTOCOL_VERSION, ReadError, kind};
use super::{BootstrapEnv, BootstrapError, SOCKET_VAR};

/// How long to wait between attempts to reach a server that is not listening yet.
const CONNECT_RETRY_MS: u64 = 20;

/// How long `global_exit` may block on a server that does not read: the caller exits right
/// after, so a second is plenty for a frame of 20 bytes into a socket's buffer.
const GLOBAL_EXIT_WRITE_MS: u64 = 1_000;

/// How long a rank whose message could not be sent still listens for the server's reason:
/// the server writes its error frame before it closes, so it is already there or never comes.
const REASON_GRACE_MS: u64 = 200;

/// One rank's connection to the bootstrap server.
///
/// Dropping it tells the server that this rank takes part in no further round.
#[derive(Debug)]
pub struct BootstrapClient {
    stream: UnixStream,
    rank: u32,
    n_ranks: u32,
    /// A call failed part-way, so the stream may be inside a frame: no further call can work.
    broken: bool,
}

impl BootstrapClient {
    /// Connects to the server named by `env` and presents this rank, retrying until
    /// `deadline` while the server is not listening yet (the launcher may bind it a little
    /// after the child starts).
    ///
    /// Returns when the server accepted this rank; it does not wait for the other ranks.
    ///
    /// # Errors
    /// [`BootstrapError::Io`] when the socket cannot be reached by the deadline or the
    /// connection fails; [`BootstrapError::Rejected`] when the server refuses the rank (a
    /// duplicate, or a different number of ranks); [`BootstrapError::Deadline`] when the
    /// server does not answer in time; [`BootstrapError::PeerLost`] or
    /// [`BootstrapError::Protocol`] when the run failed before this rank joined.
    pub fn connect(env: &BootstrapEnv, deadline: Instant) -> Result<Self, BootstrapError> {
        let stream = loop {
            match UnixStream::connect(&env.socket) {
                Ok(stream) => break stream,
                // Not bound yet (no file) or bound and not listening yet (refused).
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused
                    ) && Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(CONNECT_RETRY_MS));
                }
                Err(e) => {
                    return Err(BootstrapError::io(
                        format!(
                            "cannot reach the bootstrap server at {} ({SOCKET_VAR}) by the \
                             deadline; is the `rshmem run -n` that started this process still \
                             running?",
                            env.socket.display()
                        ),
                        e,
                    ));
                }
            }
        };
        Self::present(stream, env.rank, env.n_ranks, &[], deadline)
    }

    /// Presents this rank, of `n_ranks`, with the job's `key` on `stream`, a connection to a
    /// relay (the launcher's, or the unique-id bootstrap's over TCP), and waits for the
    /// relay to accept it.
    ///
    /// # Errors
    /// As [`connect`](Self::connect), after the connection.
    pub(crate) fn present(
        stream: UnixStream,
        rank: u32,
        n_ranks: u32,
        key: &[u8],
        deadline: Instant,
    ) -> Result<Self, BootstrapError> {
        let mut client = BootstrapClient {
            stream,
            rank,
            n_ranks,
            broken: false,
        };
        let mut hello = Vec::with_capacity(8 + key.len());
        hello.extend_from_slice(&n_ranks.to_le_bytes());
        hello.extend_from_slice(&PROTOCOL_VERSION.to_le_bytes());
        hello.extend_from_slice(key);
        client.send(kind::HELLO, &hello, deadline)?;
        let frame = client.receive(deadline)?;
        match frame.kind {
            kind::ACCEPTED => Ok(client),
            _ => Err(client.unexpected(frame, "an answer to its hello")),
        }
    }

    /// Gives `mine` to every rank and returns every rank's message, in rank order (this
    /// rank's own included).
    ///
    /// A collective: every rank must call it the same number of times. It returns when every
    /// rank has called it, or fails when a rank left or a deadline passed. After a failure the
    /// client is unusable.
    ///
    /// # Errors
    /// [`BootstrapError::TooLarge`] when `mine` is over [`MAX_MESSAGE_BYTES`] (the client stays
    /// usable); [`BootstrapError::PeerLost`] and [`BootstrapError::Deadline`] naming the ranks
    /// waited for (`Deadline` with no ranks when this call's own `deadline` passed before the
    /// server said more); [`BootstrapError::Protocol`] when the server reported another
    /// failure or sent something unexpected; [`BootstrapError::Io`] when the connection broke.
    pub fn allgather(
        &mut self,
        mine: &[u8],
        deadline: Instant,
    ) -> Result<Vec<Vec<u8>>, BootstrapError> {
        BootstrapError::check_len(mine)?;
        if self.broken {
            return Err(BootstrapError::Protocol(
                "an earlier bootstrap call of this rank failed, so its connection cannot be used \
                 any more"
                    .to_string(),
            ));
        }
        self.send(kind::DATA, mine, deadline)?;
        let mut all = Vec::with_capacity(self.n_ranks as usize);
        for expected in 0..self.n_ranks {
            let frame = self.receive(deadline)?;
            if frame.kind != kind::DATA || frame.rank != expected {
                return Err(self.unexpected(frame, &format!("rank {expected}'s message")));
            }
            all.push(frame.payload);
        }
        Ok(all)
    }

    /// Tells the server that this rank called `shmem_global_exit(status)`: the launcher ends
    /// every other rank at once and exits with `status`. Returns as soon as the frame is
    /// written; the caller then exits its process (with `status`), without further bootstrap
    /// calls.
    ///
    /// The other ranks' pending or later bootstrap calls fail with
    /// [`BootstrapError::GlobalExit`] naming this rank and `status`.
    ///
    /// # Errors
    /// [`BootstrapError::Protocol`] when an earlier call of this rank failed (the connection
    /// may be inside a frame); [`BootstrapError::Io`] when the frame cannot be written within a
    /// second (the server is gone). Either way the caller should still exit.
    pub fn global_exit(&self, status: i32) -> Result<(), BootstrapError> {
        if self.broken {
            return Err(BootstrapError::Protocol(format!(
                "rank {} cannot report shmem_global_exit({status}): an earlier bootstrap call \
                 of this rank failed, so its connection cannot be used any more",
                self.rank
            )));
        }
        // `&UnixStream` writes: a shared borrow is enough, so a library may call this from
        // whatever holds the client.
        let mut stream = &self.stream;
        stream
            .set_write_timeout(Some(Duration::from_millis(GLOBAL_EXIT_WRITE_MS)))
            .and_then(|()| {
                wire::write_frame(
                    &mut stream,
                    kind::GLOBAL_EXIT,
                    self.rank,
                    &status.to_le_bytes(),
                )
            })
            .map_err(|e| {
                BootstrapError::io(
                    format!(
                        "rank {}: cannot tell the bootstrap server of shmem_global_exit({status})",
                        self.rank
                    ),
                    e,
                )
            })
    }

    /// This process's rank.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// The number of ranks of the run.
    pub fn n_ranks(&self) -> u32 {
        self.n_ranks
    }

    /// Sends one frame. If the server already closed the connection, its reason is probably
    /// waiting to be read: return that rather than a bare "broken pipe".
    fn send(
        &mut self,
        frame_kind: u32,
        payload: &[u8],
        deadline: Instant,
    ) -> Result<(), BootstrapError> {
        let sent = self
            .stream
            .set_write_timeout(Some(wire::timeout_until(deadline)))
            .and_then(|()| wire::write_frame(&mut self.stream, frame_kind, self.rank, payload));
        let Err(e) = sent else {
            return Ok(());
        };
        self.broken = true;
        let grace = Instant::now() + Duration::from_millis(REASON_GRACE_MS);
        if let Ok(frame) = self.receive(grace.min(deadline.max(Instant::now()))) {
            return Err(self.unexpected(frame, "nothing"));
        }
        Err(BootstrapError::io(
            format!("rank {}: cannot write to the bootstrap server", self.rank),
            e,
        ))
    }

    /// Reads one frame, waiting at most until `deadline`.
    fn receive(&mut self, deadline: Instant) -> Result<Frame, BootstrapError> {
        let read = self
            .stream
            .set_read_timeout(Some(wire::timeout_until(deadline)))
            .map_err(ReadError::Io)
            .and_then(|()| wire::read_frame(&mut self.stream));
        match read {
            Ok(Some(frame)) => Ok(frame),
            Ok(None) => {
                self.broken = true;
                Err(BootstrapError::io(
                    format!(
                        "rank {}: the bootstrap server closed the connection without a reason; \
                         did the launcher stop?",
                        self.rank
                    ),
                    io::Error::from(io::ErrorKind::UnexpectedEof),
                ))
            }
            Err(ReadError::Io(e)) if wire::is_timeout(&e) => {
                self.broken = true;
                Err(BootstrapError::Deadline { waited_for: vec![] })
            }
            Err(ReadError::Io(e)) => {
                self.broken = true;
                Err(BootstrapError::io(
                    format!("rank {}: cannot read from the bootstrap server", self.rank),
                    e,
                ))
            }
            Err(ReadError::TooLarge(len)) => {
                self.broken = true;
                Err(BootstrapError::TooLarge {
                    len_bytes: len,
                    max_bytes: MAX_MESSAGE_BYTES,
                })
            }
        }
    }

    /// The error for a frame other than the one expected: the server's own error frames
    /// become their typed errors.
    fn unexpected(&mut self, frame: Frame, expected: &str) -> BootstrapError {
        self.broken = true;
        let text = || String::from_utf8_lossy(&frame.payload).into_owned();
        match frame.kind {
            kind::PEER_LOST | kind::DEADLINE => match wire::decode_ranks(&frame.payload) {
                Some(waited_for) if frame.kind == kind::PEER_LOST => {
                    BootstrapError::PeerLost { waited_for }
                }
                Some(waited_for) => BootstrapError::Deadline { waited_for },
                None => BootstrapError::Protocol(format!(
                    "the server sent a list of ranks of {} bytes",
                    frame.payload.len()
                )),
            },
            kind::REJECTED => BootstrapError::Rejected {
                rank: self.rank,
                reason: text(),
            },
            kind::PROTOCOL => BootstrapError::Protocol(format!("the server reported: {}", text())),
            kind::GLOBAL_EXIT => match wire::decode_status(&frame.payload) {
                Some(status) => BootstrapError::GlobalExit {
                    rank: frame.rank,
                    status,
                },
                None => BootstrapError::Protocol(format!(
                    "the server sent a global exit status of {} bytes",
                    frame.payload.len()
                )),
            },
            other => BootstrapError::Protocol(format!(
                "rank {} expected {expected} and got a frame of kind {other} for rank {}",
                self.rank, frame.rank
            )),
        }
    }
}

impl Drop for BootstrapClient {
    fn drop(&mut self) {
        if !self.broken {
            // Best effort: if the server is gone, the closed socket says the same.
            let _ = self
                .stream
                .set_write_timeout(Some(Duration::from_millis(REASON_GRACE_MS)));
            let _ = wire::write_frame(&mut self.stream, kind::GOODBYE, self.rank, &[]);
        }
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}
