//! The bootstrap's wire format: frames of a 16-byte little-endian header (`u32` kind, `u32`
//! rank, `u64` payload length) and the payload.
//!
//! Fixed-width little-endian fields, not a serialisation crate: the format has nine frame kinds,
//! both ends are this module, and `hw` takes no new dependency for it.

use std::io::{self, Read, Write};

/// The largest payload of one frame, and so of one rank's message in an allgather (64 MiB).
///
/// Segment keys are a few hundred bytes; the cap turns a corrupt length into an error instead
/// of an allocation of up to 2^64 bytes.
pub const MAX_MESSAGE_BYTES: u64 = 64 << 20;

/// The version a client states in its hello; the server rejects any other.
pub(crate) const PROTOCOL_VERSION: u32 = 1;

/// Frame kinds.
pub(crate) mod kind {
    /// Client to server, first frame: payload `n_ranks: u32, version: u32`, then the job key
    /// (none on the launcher's socket).
    pub(crate) const HELLO: u32 = 1;
    /// Server to client: the hello was accepted. No payload.
    pub(crate) const ACCEPTED: u32 = 2;
    /// Client to server: this rank's message of the current round. Server to client: one
    /// rank's message of the finished round (the server sends `n_ranks` of them, in rank order).
    pub(crate) const DATA: u32 = 3;
    /// Client to server: this rank is done; it takes part in no further round.
    pub(crate) const GOODBYE: u32 = 4;
    /// Server to client: a rank left while others waited. Payload: the ranks, `u32` each.
    pub(crate) const PEER_LOST: u32 = 5;
    /// Server to client: the server's deadline passed. Payload: the ranks it waited for.
    pub(crate) const DEADLINE: u32 = 6;
    /// Server to client: the hello was rejected. Payload: the reason, UTF-8.
    pub(crate) const REJECTED: u32 = 7;
    /// Server to client: some rank broke the protocol. Payload: what happened, UTF-8.
    pub(crate) const PROTOCOL: u32 = 8;
    /// Client to server: this rank called `shmem_global_exit(status)` and is about to exit;
    /// the job ends. Server to client: the rank named in the header did, so this rank's
    /// bootstrap call fails. Payload: `status: i32`.
    pub(crate) const GLOBAL_EXIT: u32 = 9;
}

const HEADER_BYTES: usize = 16;

/// One frame.
#[derive(Debug)]
pub(crate) struct Frame {
    pub(crate) kind: u32,
    pub(crate) rank: u32,
    pub(crate) payload: Vec<u8>,
}

/// Why a frame could not be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The stream failed, timed out, or ended inside a frame.
    Io(io::Error),
    /// The header announced more than [`MAX_MESSAGE_BYTES`].
    TooLarge(u64),
}

/// Appends one frame to `out`; the server builds a round's answer once and sends it to all.
pub(crate) fn encode(out: &mut Vec<u8>, kind: u32, rank: u32, payload: &[u8]) {
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&rank.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
}

/// Writes one frame with a single `write_all`, so that a frame is never interleaved.
pub(crate) fn write_frame(
    w: &mut impl Write,
    kind: u32,
    rank: u32,
    payload: &[u8],
) -> io::Result<()> {
    let mut buf = Vec::with_capacity(HEADER_BYTES + payload.len());
    encode(&mut buf, kind, rank, payload);
    w.write_all(&buf)?;
    w.flush()
}

/// Reads one frame; `Ok(None)` when the stream ended cleanly between frames.
pub(crate) fn read_frame(r: &mut impl Read) -> Result<Option<Frame>, ReadError> {
    let mut header = [0u8; HEADER_BYTES];
    let mut filled = 0;
    // Not `read_exact`: an end of stream before the first byte is a peer that closed between
    // frames (a normal end), one after it is a frame cut short.
    while filled < HEADER_BYTES {
        match r.read(&mut header[filled..]) {
            Ok(0) if filled == 0 => return Ok(None),
            Ok(0) => {
                return Err(ReadError::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the stream ended inside a frame header",
                )));
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ReadError::Io(e)),
        }
    }
    let word = |at: usize| {
        u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let mut len_bytes = [0u8; 8];
    len_bytes.copy_from_slice(&header[8..16]);
    let len = u64::from_le_bytes(len_bytes);
    if len > MAX_MESSAGE_BYTES {
        return Err(ReadError::TooLarge(len));
    }
    // `len <= MAX_MESSAGE_BYTES` fits in usize on every supported target.
    let mut payload = vec![0u8; len as usize];
    r.read_exact(&mut payload).map_err(ReadError::Io)?;
    Ok(Some(Frame {
        kind: word(0),
        rank: word(4),
        payload,
    }))
}

/// Encodes a list of ranks as the payload of a `PEER_LOST` or `DEADLINE` frame.
pub(crate) fn encode_ranks(ranks: &[u32]) -> Vec<u8> {
    ranks.iter().flat_map(|r| r.to_le_bytes()).collect()
}

/// Decodes the payload of a `PEER_LOST` or `DEADLINE` frame; `None` if its length is not a
/// multiple of four.
pub(crate) fn decode_ranks(payload: &[u8]) -> Option<Vec<u32>> {
    if !payload.len().is_multiple_of(4) {
        return None;
    }
    Some(
        payload
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

/// Whether an I/O error is a read or write timeout (`set_read_timeout` reports `WouldBlock`
/// on Unix, `TimedOut` elsewhere).
pub(crate) fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// What is left of `deadline` as a socket timeout: at least 1 ms, because a zero timeout means
/// "none" to `set_read_timeout` and is refused.
pub(crate) fn timeout_until(deadline: std::time::Instant) -> std::time::Duration {
    deadline
        .saturating_duration_since(std::time::Instant::now())
        .max(std::time::Duration::from_millis(1))
}

/// Decodes the payload of a `GLOBAL_EXIT` frame; `None` if it is not four bytes.
pub(crate) fn decode_status(payload: &[u8]) -> Option<i32> {
    Some(i32::from_le_bytes(payload.try_into().ok()?))
}
