//! Point-to-point messages: sends are buffered at once (a send never waits for its
//! receive), receives are matched to messages by (communicator, source, tag), each message to
//! the first receive posted that matches it and each receive to the first message sent that
//! matches it, which is MPI's non-overtaking order; a receive completes when its message has
//! arrived in simulated time.

use std::ffi::{c_int, c_void};

use super::handles;
use super::{ANY, Comm, MpiError, PROC_NULL, World, transfer_ns};

/// A message sent and not yet received.
#[derive(Debug)]
pub(super) struct Message {
    comm: u64,
    /// The sender's rank in `comm`.
    source: c_int,
    tag: c_int,
    bytes: Vec<u8>,
    arrives_ns: u64,
}

/// A request of `MPI_Isend` or `MPI_Irecv`.
#[derive(Debug)]
pub(super) enum Request {
    /// A send: done once buffered.
    Sent,
    /// A receive into `buffer` of `capacity` bytes.
    Receive {
        comm: u64,
        source: c_int,
        tag: c_int,
        buffer: usize,
        capacity: usize,
        message: Option<Message>,
    },
}

/// What a completed receive tells its status.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Received {
    pub(super) source: c_int,
    pub(super) tag: c_int,
    pub(super) bytes: usize,
}

impl Received {
    /// The status of a request that was `MPI_REQUEST_NULL`: an empty one.
    pub(super) const EMPTY: Received = Received {
        source: ANY,
        tag: ANY,
        bytes: 0,
    };
}

/// Open MPI's `MPI_Status`.
#[repr(C)]
pub(super) struct Status {
    pub(super) source: c_int,
    pub(super) tag: c_int,
    pub(super) error: c_int,
    pub(super) cancelled: c_int,
    pub(super) ucount: usize,
}

impl Status {
    /// Writes `received` into the status at `status`, unless it is `MPI_STATUS_IGNORE`.
    ///
    /// # Safety
    /// `status` is null or points to a writable `MPI_Status`.
    pub(super) unsafe fn write(status: *mut Status, received: Received) {
        if !status.is_null() {
            // SAFETY: the caller's contract.
            unsafe {
                status.write(Status {
                    source: received.source,
                    tag: received.tag,
                    error: 0,
                    cancelled: 0,
                    ucount: received.bytes,
                });
            }
        }
    }
}

fn matches(message: &Message, comm: u64, source: c_int, tag: c_int) -> bool {
    message.comm == comm
        && (source == ANY || source == message.source)
        && (tag == ANY || tag == message.tag)
}

impl World {
    /// Sends `bytes` from the running PE `pe`, rank `comm.rank`, to rank `dest` of `comm`
    /// with `tag`, at simulated time `now_ns`.
    pub(super) fn send(
        &mut self,
        pe: u32,
        comm: Comm,
        dest: c_int,
        tag: c_int,
        bytes: Vec<u8>,
        now_ns: u64,
    ) -> Result<(), MpiError> {
        self.live(pe)?;
        if dest == PROC_NULL {
            return Ok(());
        }
        if tag < 0 {
            return Err(MpiError::Mismatch(format!(
                "tag {tag} is negative; a send's tag is 0 or more"
            )));
        }
        let dest = super::rank_in(dest, comm)?;
        let to = self.comms[comm.id as usize].members[dest];
        let message = Message {
            comm: comm.id,
            source: comm.rank as c_int,
            tag,
            arrives_ns: now_ns + transfer_ns(bytes.len()),
            bytes,
        };
        let posted = &self.pes[to as usize].posted;
        let taker = posted.iter().position(|id| match &self.requests[id] {
            Request::Receive {
                comm, source, tag, ..
            } => matches(&message, *comm, *source, *tag),
            Request::Sent => false,
        });
        match taker {
            Some(at) => {
                let id = self.pe(to).posted.remove(at).expect("a posted receive");
                if let Some(Request::Receive { message: slot, .. }) = self.requests.get_mut(&id) {
                    *slot = Some(message);
                }
            }
            None => self.pe(to).unexpected.push_back(message),
        }
        Ok(())
    }

    /// Posts a receive of PE `pe` into `buffer` (`capacity` bytes) from rank `source` (or
    /// `MPI_ANY_SOURCE`) of `comm` with `tag` (or `MPI_ANY_TAG`); returns its request.
    pub(super) fn post_receive(
        &mut self,
        pe: u32,
        comm: Comm,
        source: c_int,
        tag: c_int,
        buffer: *mut c_void,
        capacity: usize,
    ) -> Result<*mut c_void, MpiError> {
        self.live(pe)?;
        if source != ANY && source != PROC_NULL {
            super::rank_in(source, comm)?;
        }
        let id = self.next_request;
        self.next_request += 1;
        let unexpected = &mut self.pe(pe).unexpected;
        let message = if source == PROC_NULL {
            None
        } else {
            unexpected
                .iter()
                .position(|m| matches(m, comm.id, source, tag))
                .and_then(|at| unexpected.remove(at))
        };
        let waiting = message.is_none() && source != PROC_NULL;
        self.requests.insert(
            id,
            Request::Receive {
                comm: comm.id,
                source,
                tag,
                buffer: buffer as usize,
                capacity,
                message,
            },
        );
        if waiting {
            self.pe(pe).posted.push_back(id);
        }
        Ok(handles::make_request(id))
    }

    /// What request `id` waits for, for a report of a wait that never ends.
    pub(super) fn describe(&self, id: u64) -> String {
        match self.requests.get(&id) {
            Some(Request::Receive {
                comm, source, tag, ..
            }) => {
                let from = if *source == ANY {
                    "any rank".to_owned()
                } else {
                    format!("rank {source}")
                };
                let with = if *tag == ANY {
                    "any tag".to_owned()
                } else {
                    format!("tag {tag}")
                };
                let members = &self.comms[*comm as usize].members;
                format!("a message from {from} with {with} (on a communicator of PEs {members:?})")
            }
            _ => format!("request {id}"),
        }
    }

    /// When request `id` can complete: at once for a send or a receive from
    /// `MPI_PROC_NULL`, at its message's arrival once a message matched it; `None` before.
    pub(super) fn ready_ns(&self, id: u64) -> Result<Option<u64>, MpiError> {
        match self.requests.get(&id) {
            None => Err(MpiError::Handle(format!(
                "request {id} was completed already; a completed request is MPI_REQUEST_NULL"
            ))),
            Some(
                Request::Sent
                | Request::Receive {
                    source: PROC_NULL, ..
                },
            ) => Ok(Some(0)),
            Some(Request::Receive { message, .. }) => Ok(message.as_ref().map(|m| m.arrives_ns)),
        }
    }

    /// The first message sent to PE `pe` that no receive took and that a receive from
    /// `source` (or `MPI_ANY_SOURCE`) with `tag` (or `MPI_ANY_TAG`) on `comm` would match:
    /// what its status says, and when it arrives. `MPI_PROC_NULL` matches at once, empty.
    pub(super) fn probe(
        &mut self,
        pe: u32,
        comm: Comm,
        source: c_int,
        tag: c_int,
    ) -> Result<Option<(Received, u64)>, MpiError> {
        self.live(pe)?;
        if source == PROC_NULL {
            let empty = Received {
                source: PROC_NULL,
                tag: ANY,
                bytes: 0,
            };
            return Ok(Some((empty, 0)));
        }
        if source != ANY {
            super::rank_in(source, comm)?;
        }
        Ok(self.pe(pe).unexpected.iter().find_map(|m| {
            matches(m, comm.id, source, tag).then(|| {
                let received = Received {
                    source: m.source,
                    tag: m.tag,
                    bytes: m.bytes.len(),
                };
                (received, m.arrives_ns)
            })
        }))
    }

    /// A request for a send that is done.
    pub(super) fn sent_request(&mut self) -> *mut c_void {
        let id = self.next_request;
        self.next_request += 1;
        self.requests.insert(id, Request::Sent);
        handles::make_request(id)
    }

    /// Completes request `id` if it can be: `None` while its message has not been
    /// sent, else what it received and when it is done (the message's arrival). A receive's
    /// bytes are copied into its buffer here.
    pub(super) fn complete(&mut self, id: u64) -> Result<Option<(Received, u64)>, MpiError> {
        let request = self.requests.get(&id).ok_or_else(|| {
            MpiError::Handle(format!(
                "request {id} was completed already; a completed request is MPI_REQUEST_NULL"
            ))
        })?;
        let outcome = match request {
            Request::Sent => (Received::default(), 0),
            Request::Receive {
                source: PROC_NULL, ..
            } => (
                Received {
                    source: PROC_NULL,
                    tag: ANY,
                    bytes: 0,
                },
                0,
            ),
            Request::Receive { message: None, .. } => return Ok(None),
            Request::Receive {
                buffer,
                capacity,
                message: Some(message),
                ..
            } => {
                if message.bytes.len() > *capacity {
                    return Err(MpiError::Mismatch(format!(
                        "the message from rank {} with tag {} has {} bytes, more than the \
                         {capacity} bytes the receive has room for (MPI_ERR_TRUNCATE)",
                        message.source,
                        message.tag,
                        message.bytes.len()
                    )));
                }
                // SAFETY: the program posted `capacity` writable bytes at `buffer`, which stay
                // its own until the request completes.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        message.bytes.as_ptr(),
                        *buffer as *mut u8,
                        message.bytes.len(),
                    );
                }
                (
                    Received {
                        source: message.source,
                        tag: message.tag,
                        bytes: message.bytes.len(),
                    },
                    message.arrives_ns,
                )
            }
        };
        self.requests.remove(&id);
        Ok(Some(outcome))
    }
}
