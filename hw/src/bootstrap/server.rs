//! The launcher's side: accepts one connection per rank and relays the allgather rounds.
//!
//! One reader thread per connection (`listen.rs`) turns its frames into [`Event`]s on a
//! channel; the thread that called [`BootstrapServer::serve`] owns all state and does all
//! writing. A blocked
//! `read` per connection is the simplest way to notice at once that any one peer closed its
//! socket, and `recv_timeout` on the channel bounds everything by the deadline.

use std::io;
use std::net::Shutdown;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::listen::{Accept, Event, spawn_acceptor};
use super::wire::{self, Frame, PROTOCOL_VERSION, kind};
use super::{BootstrapError, ServeEnd};

/// How long the server, once the run failed, still answers ranks that connect late with the
/// failure. A rank slowed by a loaded machine may reach the socket after a peer died; told
/// why, it says so rather than failing on a socket that went away. The launcher's grace period
/// after a failure is longer, so this never holds a dying job up.
const LATECOMER_MS: u64 = 1_000;

/// The bootstrap server of one run: a bound Unix domain socket and the number of ranks.
///
/// The socket file is removed when the server is dropped (after [`serve`](Self::serve)).
#[derive(Debug)]
pub struct BootstrapServer {
    listener: UnixListener,
    path: PathBuf,
    n_ranks: u32,
}

/// Where one rank is in the run.
enum Slot {
    /// Not connected yet.
    Absent,
    /// Connected; `writer` is the server's end for answers.
    Joined { conn: usize, writer: UnixStream },
    /// Said goodbye or closed its connection.
    Left,
}

impl BootstrapServer {
    /// Binds the socket at `path` for a run of `n_ranks` ranks. Clients may connect from now
    /// on; they wait until [`serve`](Self::serve) answers.
    ///
    /// # Errors
    /// [`BootstrapError::InvalidArgument`] when `n_ranks` is 0; [`BootstrapError::Io`] when the
    /// socket cannot be bound (the path exists, its directory does not, or it is too long for
    /// a Unix socket, about 100 bytes).
    pub fn bind(path: &Path, n_ranks: u32) -> Result<Self, BootstrapError> {
        if n_ranks == 0 {
            return Err(BootstrapError::InvalidArgument(
                "a run needs at least one rank, not 0".to_string(),
            ));
        }
        let listener = UnixListener::bind(path).map_err(|e| {
            BootstrapError::io(
                format!(
                    "cannot bind the bootstrap socket {} (remove a stale file there, or choose a \
                     shorter path in an existing directory)",
                    path.display()
                ),
                e,
            )
        })?;
        Ok(BootstrapServer {
            listener,
            path: path.to_path_buf(),
            n_ranks,
        })
    }

    /// The socket's path, for the clients' [`SOCKET_VAR`](super::SOCKET_VAR).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The number of ranks the server waits for.
    pub fn n_ranks(&self) -> u32 {
        self.n_ranks
    }

    /// Serves the run: accepts every rank, relays allgather rounds, and returns when every rank
    /// has said goodbye or closed its connection outside a round ([`ServeEnd::AllLeft`]), or
    /// at once when a rank reports a global exit ([`ServeEnd::GlobalExit`], after telling every
    /// other connected rank).
    ///
    /// When a rank leaves while others wait in a round, or `deadline` passes first, every
    /// connected rank gets an error frame naming the ranks waited for, and so does the caller.
    ///
    /// # Errors
    /// [`BootstrapError::PeerLost`] and [`BootstrapError::Deadline`] naming the ranks waited
    /// for; [`BootstrapError::Rejected`] for a duplicate rank, a rank out of range or a
    /// different number of ranks; [`BootstrapError::Protocol`] and [`BootstrapError::TooLarge`]
    /// for a peer that breaks the protocol; [`BootstrapError::Io`] if the socket fails.
    pub fn serve(self, deadline: Instant) -> Result<ServeEnd, BootstrapError> {
        let listener = self
            .listener
            .try_clone()
            .map_err(|e| BootstrapError::io("cannot prepare the bootstrap socket", e))?;
        serve_listener(listener, self.n_ranks, Vec::new(), deadline, deadline)
    }
}

/// [`BootstrapServer::serve`] on any listener: ranks whose hello does not carry `key` are
/// refused (the launcher's socket needs none: only its children can reach it), and ranks
/// that have not connected by `connect_by` fail the run, named.
pub(crate) fn serve_listener(
    listener: impl Accept,
    n_ranks: u32,
    key: Vec<u8>,
    connect_by: Instant,
    deadline: Instant,
) -> Result<ServeEnd, BootstrapError> {
    listener
        .set_nonblocking(true)
        .map_err(|e| BootstrapError::io("cannot prepare the bootstrap socket", e))?;
    let (tx, rx) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let acceptor = spawn_acceptor(listener, tx, Arc::clone(&stop), deadline)?;
    let mut relay = Relay {
        n_ranks,
        key,
        connect_by,
        slots: (0..n_ranks).map(|_| Slot::Absent).collect(),
        pending: vec![None; n_ranks as usize],
        global_exit: None,
        last_round: None,
        failure: None,
    };
    let result = relay.run(&rx, deadline);
    if result.is_err() {
        relay.tell_latecomers(&rx, deadline);
    }
    // Whatever the outcome, close every connection so that each reader thread sees the end
    // of its stream and exits, and stop the acceptor before the socket file goes.
    relay.close_all();
    stop.store(true, Ordering::Relaxed);
    let _ = acceptor.join();
    result
}

impl Drop for BootstrapServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The serving thread's state.
struct Relay {
    n_ranks: u32,
    /// The job key every hello must carry.
    key: Vec<u8>,
    /// When every rank must have connected.
    connect_by: Instant,
    slots: Vec<Slot>,
    /// Each rank's message of the current round, once it sent it.
    pending: Vec<Option<Vec<u8>>>,
    /// The rank that reported a global exit, and its status.
    global_exit: Option<(u32, i32)>,
    /// When the last round ended: the ranks then went on running the program.
    last_round: Option<Instant>,
    /// The frame that told the connected ranks why the run failed, for those that come late.
    failure: Option<(u32, Vec<u8>)>,
}

impl Relay {
    fn run(&mut self, rx: &Receiver<Event>, deadline: Instant) -> Result<ServeEnd, BootstrapError> {
        loop {
            if self.slots.iter().all(|s| matches!(s, Slot::Left)) {
                return Ok(ServeEnd::AllLeft);
            }
            let absent: Vec<u32> = (0u32..)
                .zip(&self.slots)
                .filter_map(|(rank, slot)| matches!(slot, Slot::Absent).then_some(rank))
                .collect();
            let until = if absent.is_empty() {
                deadline
            } else {
                deadline.min(self.connect_by)
            };
            let event = match rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(event) => event,
                Err(RecvTimeoutError::Timeout) if until < deadline => {
                    return Err(self.fail(BootstrapError::Deadline { waited_for: absent }));
                }
                Err(RecvTimeoutError::Timeout) => {
                    let error = self.deadline_error();
                    return Err(self.fail(error));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    // The acceptor only exits early after sending `AcceptFailed`.
                    return Err(self.fail(BootstrapError::Protocol(
                        "the bootstrap acceptor stopped".to_string(),
                    )));
                }
            };
            self.handle(event)?;
            // Before `advance`: a global exit ends the job, whatever the round's state.
            if let Some((rank, status)) = self.global_exit {
                self.tell_global_exit(rank, status);
                return Ok(ServeEnd::GlobalExit { rank, status });
            }
            self.advance()?;
        }
    }

    fn handle(&mut self, event: Event) -> Result<(), BootstrapError> {
        match event {
            Event::Hello {
                conn,
                rank,
                n_ranks,
                version,
                key,
                writer,
            } => {
                if key != self.key {
                    return Err(self.refuse(
                        rank,
                        writer,
                        "it presented another job's key: its unique id comes from another \
                         nvshmemx_get_uniqueid call; give every rank the id of this job's rank 0"
                            .to_string(),
                    ));
                }
                self.hello(conn, rank, n_ranks, version, writer)
            }
            Event::Frame { conn, frame } => {
                let Some(rank) = self.rank_of(conn) else {
                    // A connection that was refused or has left: its frames no longer count.
                    return Ok(());
                };
                self.frame(rank, frame)
            }
            Event::Closed { conn, why } => {
                match (self.rank_of(conn), why) {
                    (Some(rank), _) => self.slots[rank as usize] = Slot::Left,
                    (None, Some(why)) => {
                        return Err(self.fail(BootstrapError::Protocol(format!(
                            "a connection to the bootstrap socket did not start with a valid \
                             hello: {why}"
                        ))));
                    }
                    // Connected and left without a word: nothing claimed a rank.
                    (None, None) => {}
                }
                Ok(())
            }
            Event::AcceptFailed(e) => Err(self.fail(BootstrapError::io(
                "cannot accept connections on the bootstrap socket",
                e,
            ))),
        }
    }

    fn hello(
        &mut self,
        conn: usize,
        rank: u32,
        n_ranks: u32,
        version: u32,
        mut writer: UnixStream,
    ) -> Result<(), BootstrapError> {
        let reason = if version != PROTOCOL_VERSION {
            Some(format!(
                "it speaks bootstrap protocol version {version}, the launcher {PROTOCOL_VERSION}; \
                 build the program and rshmem from the same sources"
            ))
        } else if n_ranks != self.n_ranks {
            Some(format!(
                "it was told of {n_ranks} ranks, the job has {}",
                self.n_ranks
            ))
        } else if rank >= self.n_ranks {
            Some(format!("ranks are 0..{}", self.n_ranks))
        } else {
            match self.slots[rank as usize] {
                Slot::Absent => None,
                Slot::Joined { .. } => Some(format!("rank {rank} is already connected")),
                Slot::Left => Some(format!("rank {rank} already connected and left")),
            }
        };
        if let Some(reason) = reason {
            return Err(self.refuse(rank, writer, reason));
        }
        if wire::write_frame(&mut writer, kind::ACCEPTED, rank, &[]).is_err() {
            // It is gone already; count it as having left.
            self.slots[rank as usize] = Slot::Left;
            return Ok(());
        }
        self.slots[rank as usize] = Slot::Joined { conn, writer };
        Ok(())
    }

    /// Refuses a hello claiming `rank`, telling it and every connected rank why.
    fn refuse(&mut self, rank: u32, mut writer: UnixStream, reason: String) -> BootstrapError {
        let _ = wire::write_frame(&mut writer, kind::REJECTED, rank, reason.as_bytes());
        let _ = writer.shutdown(Shutdown::Both);
        self.fail(BootstrapError::Rejected { rank, reason })
    }

    fn frame(&mut self, rank: u32, frame: Frame) -> Result<(), BootstrapError> {
        let r = rank as usize;
        match frame.kind {
            kind::DATA if frame.rank != rank => Err(self.fail(BootstrapError::Protocol(format!(
                "rank {rank} sent a message marked as rank {}",
                frame.rank
            )))),
            kind::DATA if self.pending[r].is_some() => Err(self.fail(BootstrapError::Protocol(
                format!("rank {rank} sent a second message before the round ended"),
            ))),
            kind::DATA => {
                self.pending[r] = Some(frame.payload);
                Ok(())
            }
            kind::GLOBAL_EXIT => match wire::decode_status(&frame.payload) {
                Some(status) => {
                    self.global_exit = Some((rank, status));
                    Ok(())
                }
                None => Err(self.fail(BootstrapError::Protocol(format!(
                    "rank {rank} sent a global exit status of {} bytes, not 4",
                    frame.payload.len()
                )))),
            },
            kind::GOODBYE => {
                if let Slot::Joined { writer, .. } = &self.slots[r] {
                    let _ = writer.shutdown(Shutdown::Both);
                }
                self.slots[r] = Slot::Left;
                Ok(())
            }
            other => Err(self.fail(BootstrapError::Protocol(format!(
                "rank {rank} sent a frame of kind {other}, which only the server sends"
            )))),
        }
    }

    /// Ends the round if every rank has sent its message; fails if some rank never will.
    fn advance(&mut self) -> Result<(), BootstrapError> {
        if self.pending.iter().all(Option::is_none) {
            return Ok(());
        }
        // A rank that left without a message for this round will never send one. A rank that
        // sent its message and then left still counts for this round.
        let lost: Vec<u32> = (0..self.n_ranks)
            .filter(|&r| {
                matches!(self.slots[r as usize], Slot::Left) && self.pending[r as usize].is_none()
            })
            .collect();
        if !lost.is_empty() {
            return Err(self.fail(BootstrapError::PeerLost { waited_for: lost }));
        }
        if self.pending.iter().any(Option::is_none) {
            return Ok(());
        }
        let mut answer = Vec::new();
        for (rank, message) in (0u32..).zip(self.pending.iter_mut()) {
            let message = message.take().unwrap_or_default();
            wire::encode(&mut answer, kind::DATA, rank, &message);
        }
        self.last_round = Some(Instant::now());
        for slot in &mut self.slots {
            if let Slot::Joined { writer, .. } = slot {
                // A rank that cannot take its answer is gone; its reader reports the close,
                // and the next round names it.
                if io::Write::write_all(writer, &answer).is_err() {
                    let _ = writer.shutdown(Shutdown::Both);
                }
            }
        }
        Ok(())
    }

    /// Why the deadline passed: ranks that never connected or did not join the round in
    /// progress; or, when every rank still there connected and no round is in progress, the
    /// program itself ran past it ([`BootstrapError::ProgramRan`]): the bootstrap is not to
    /// blame, and saying "to connect or to join the allgather" would send the user looking in
    /// the wrong place.
    fn deadline_error(&self) -> BootstrapError {
        let between_rounds = self.pending.iter().all(Option::is_none);
        let running: Vec<u32> = (0u32..)
            .zip(&self.slots)
            .filter_map(|(rank, slot)| matches!(slot, Slot::Joined { .. }).then_some(rank))
            .collect();
        let none_absent = !self.slots.iter().any(|s| matches!(s, Slot::Absent));
        match self.last_round {
            Some(at) if between_rounds && none_absent && !running.is_empty() => {
                BootstrapError::ProgramRan {
                    running,
                    since_s: at.elapsed().as_secs_f64(),
                }
            }
            _ => BootstrapError::Deadline {
                waited_for: self.waited_for(),
            },
        }
    }

    /// The ranks that hold up the run: those not connected or without a message this round,
    /// or, between rounds, all that have not left.
    fn waited_for(&self) -> Vec<u32> {
        let in_round = self.pending.iter().any(Option::is_some);
        (0..self.n_ranks)
            .filter(|&r| {
                let r = r as usize;
                if in_round {
                    self.pending[r].is_none()
                } else {
                    !matches!(self.slots[r], Slot::Left)
                }
            })
            .collect()
    }

    fn rank_of(&self, conn: usize) -> Option<u32> {
        (0u32..)
            .zip(&self.slots)
            .find_map(|(rank, slot)| match slot {
                Slot::Joined { conn: c, .. } if *c == conn => Some(rank),
                _ => None,
            })
    }

    /// Tells every connected rank why the run failed, and hands the error back.
    fn fail(&mut self, error: BootstrapError) -> BootstrapError {
        let (frame_kind, payload) = match &error {
            BootstrapError::PeerLost { waited_for } => {
                (kind::PEER_LOST, wire::encode_ranks(waited_for))
            }
            BootstrapError::Deadline { waited_for } => {
                (kind::DEADLINE, wire::encode_ranks(waited_for))
            }
            other => (kind::PROTOCOL, other.to_string().into_bytes()),
        };
        for (rank, slot) in (0u32..).zip(&mut self.slots) {
            if let Slot::Joined { writer, .. } = slot {
                let _ = wire::write_frame(writer, frame_kind, rank, &payload);
            }
        }
        self.close_all();
        self.failure = Some((frame_kind, payload));
        error
    }

    /// After a failure, answers the hello of each rank that had not connected yet with the
    /// failure, for [`LATECOMER_MS`] or until no rank is missing.
    fn tell_latecomers(&mut self, rx: &Receiver<Event>, deadline: Instant) {
        let Some((frame_kind, payload)) = self.failure.take() else {
            return;
        };
        let until = deadline.min(Instant::now() + Duration::from_millis(LATECOMER_MS));
        while self.slots.iter().any(|s| matches!(s, Slot::Absent)) {
            let wait = until.saturating_duration_since(Instant::now());
            let Ok(event) = rx.recv_timeout(wait) else {
                return;
            };
            if let Event::Hello {
                rank, mut writer, ..
            } = event
            {
                let _ = wire::write_frame(&mut writer, frame_kind, rank, &payload);
                let _ = writer.shutdown(Shutdown::Both);
                if let Some(slot) = self.slots.get_mut(rank as usize) {
                    *slot = Slot::Left;
                }
            }
        }
    }

    /// Tells every other connected rank that `rank` ended the job, then closes every
    /// connection. Best effort: the launcher kills those ranks anyway.
    fn tell_global_exit(&mut self, rank: u32, status: i32) {
        let payload = status.to_le_bytes();
        for (other, slot) in (0u32..).zip(&mut self.slots) {
            if let Slot::Joined { writer, .. } = slot
                && other != rank
            {
                let _ = wire::write_frame(writer, kind::GLOBAL_EXIT, rank, &payload);
            }
        }
        self.close_all();
    }

    fn close_all(&mut self) {
        for slot in &mut self.slots {
            if let Slot::Joined { writer, .. } = slot {
                let _ = writer.shutdown(Shutdown::Both);
            }
            if !matches!(slot, Slot::Absent) {
                *slot = Slot::Left;
            }
        }
    }
}
