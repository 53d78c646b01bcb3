//! The kernels' proxy: device-initiated operations to PEs of other nodes (docs/multi-node.md,
//! "Kernels across nodes").
//!
//! A kernel cannot drive libfabric, so it posts each operation to a PE of another node as a
//! request into a ring of pinned host memory mapped for its GPU (the channel,
//! `rshmem_channel_t` of `rshmem_device.cuh`), and this PE's proxy thread performs it through
//! the same path as the host's operations ([`Remote`]), then marks it complete. This is the
//! shape of NVSHMEM's proxy-driven transports (its IBRC proxy); an IBGDA driver would replace
//! the thread by the GPU writing the NIC's queues itself.
//!
//! The ring: a kernel thread takes a ticket (an atomic counter in its PE's synchronisation
//! memory, on the GPU), waits until the ticket's slot is free (`released`), writes the
//! request, fences and writes the slot's sequence number last. The thread here takes the
//! requests in ticket order, each complete at its target (the target's proxy answered) before
//! the next starts, and after each writes its result and `completed`. So requests reach every
//! target in the order of their tickets, a device fence needs nothing more for them, and a
//! device quiet waits until `completed` passes the tickets taken before it. A slot is
//! released once its request is complete and, for a request whose thread waits for the
//! result, once that thread acknowledged reading it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use cudarc::driver::CudaStream;

use super::proxy::{copy, on_gpu};
use super::shared::SharedPinned;
use super::{CHUNK_BYTES, Region, Remote};
use crate::amo::{AmoKind, AmoOp, AmoWidth};
use crate::cuda::driver::Gpu;
use crate::cuda::memory::Pinned;
use crate::cuda::world::World;
use crate::types::{MemKind, Pe};

/// Slots of the ring (`RSHMEM_CHANNEL_SLOTS`).
pub(crate) const SLOTS: u64 = 1024;
/// Bytes of a request (`rshmem_request_t`) and of a result (`rshmem_result_t`).
const REQUEST_BYTES: usize = 64;
const RESULT_BYTES: usize = 32;
/// Where the words the proxy writes lie, each in a cache line of its own.
const RELEASED: usize = 0;
const COMPLETED: usize = 64;
const FAILED: usize = 128;
/// Bytes of a slot's payload (`RSHMEM_INLINE_BYTES`).
const INLINE_BYTES: usize = 1024;
/// Where the requests, the results, then the payloads begin.
const REQUESTS: usize = 256;
const RESULTS: usize = REQUESTS + SLOTS as usize * REQUEST_BYTES;
const PAYLOADS: usize = RESULTS + SLOTS as usize * RESULT_BYTES;
/// The channel's size (`sizeof(rshmem_channel_t)`).
pub(crate) const CHANNEL_BYTES: usize = PAYLOADS + SLOTS as usize * INLINE_BYTES;

/// How long the thread sleeps after finding nothing to do many times in a row.
const IDLE_NAP: Duration = Duration::from_micros(20);

/// A request's verb (`RSHMEM_VERB_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verb {
    /// `len` bytes from local `src` to offset `dst` of the target's region.
    Put,
    /// `len` bytes from offset `src` of the target's region to local `dst`.
    Get,
    /// The atomic on the word at offset `dst`; the result is its old value.
    Amo(AmoOp),
    /// The low `len` bytes of `value` to offset `dst`.
    PutValue,
    /// `len` bytes at offset `src`; the result holds them.
    GetValue,
    /// The first `len` bytes of the slot's payload to offset `dst`.
    PutInline,
    /// `len` bytes at offset `src` into the slot's payload.
    GetInline,
}

/// A request as the kernel wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct KernelRequest {
    verb: Verb,
    pe: Pe,
    region: Region,
    dst: u64,
    src: u64,
    len: u64,
    value: u64,
}

impl KernelRequest {
    /// The request in the slot's 64 bytes, or what is wrong with it.
    fn decode(slot: &[u8; REQUEST_BYTES]) -> Result<KernelRequest, String> {
        let u16_at = |i: usize| u16::from_le_bytes([slot[i], slot[i + 1]]);
        let u32_at = |i: usize| u32::from_le_bytes(slot[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(slot[i..i + 8].try_into().expect("8 bytes"));
        let (len, value, compare) = (u64_at(32), u64_at(40), u64_at(48));
        let verb = match u16_at(8) {
            1 => Verb::Put,
            2 => Verb::Get,
            3 => Verb::Amo(amo_op(u32_at(56), len, value, compare)?),
            4 => Verb::PutValue,
            5 => Verb::GetValue,
            6 => Verb::PutInline,
            7 => Verb::GetInline,
            other => return Err(format!("unknown verb {other}")),
        };
        let region = match slot[10] {
            0 => Region::Segment(MemKind::Device),
            1 => Region::Sync,
            other => return Err(format!("unknown region {other}")),
        };
        if matches!(verb, Verb::PutValue | Verb::GetValue) && len > 8 {
            return Err(format!("a value of {len} bytes"));
        }
        if matches!(verb, Verb::PutInline | Verb::GetInline) && len > INLINE_BYTES as u64 {
            return Err(format!("a payload of {len} bytes"));
        }
        Ok(KernelRequest {
            verb,
            pe: Pe(u32_at(12)),
            region,
            dst: u64_at(16),
            src: u64_at(24),
            len,
            value,
        })
    }
}

/// The atomic of code `code` (`RSHMEM_AMO_*`) on a word of `len` bytes.
fn amo_op(code: u32, len: u64, operand: u64, compare: u64) -> Result<AmoOp, String> {
    let kind = match code {
        1 => AmoKind::Fetch,
        2 => AmoKind::Set,
        3 => AmoKind::Swap,
        4 => AmoKind::CompareSwap { compare },
        5 => AmoKind::Add,
        6 => AmoKind::And,
        7 => AmoKind::Or,
        8 => AmoKind::Xor,
        other => return Err(format!("unknown atomic {other}")),
    };
    let width = match len {
        4 => AmoWidth::W32,
        8 => AmoWidth::W64,
        other => return Err(format!("an atomic on {other} bytes")),
    };
    Ok(AmoOp {
        kind,
        operand,
        width,
    })
}

/// The channel of a PE's kernels and the thread that serves it; dropping it stops the thread.
#[derive(Debug)]
pub(crate) struct KernelProxy {
    channel: Arc<Channel>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// The ring's memory.
#[derive(Debug)]
struct Channel {
    memory: SharedPinned,
}

impl Channel {
    fn word(&self, offset: usize) -> &AtomicU64 {
        self.memory.word(offset)
    }

    fn request_at(ticket: u64) -> usize {
        REQUESTS + (ticket % SLOTS) as usize * REQUEST_BYTES
    }

    fn result_at(ticket: u64) -> usize {
        RESULTS + (ticket % SLOTS) as usize * RESULT_BYTES
    }

    fn payload_at(ticket: u64) -> usize {
        PAYLOADS + (ticket % SLOTS) as usize * INLINE_BYTES
    }

    /// The request of `ticket`, if its kernel thread has published it.
    fn take(&self, ticket: u64) -> Option<[u8; REQUEST_BYTES]> {
        let at = Self::request_at(ticket);
        if self.word(at).load(Ordering::Acquire) != ticket + 1 {
            return None;
        }
        self.memory.read(at, REQUEST_BYTES).try_into().ok()
    }

    /// The first `len` bytes (at most [`INLINE_BYTES`]) of `ticket`'s payload, which its
    /// thread wrote before publishing the request.
    fn read_payload(&self, ticket: u64, len: usize) -> Vec<u8> {
        assert!(len <= INLINE_BYTES);
        self.memory.read(Self::payload_at(ticket), len)
    }

    /// Writes `bytes` into `ticket`'s payload, for its thread to read once the request is
    /// done; the slot is not reused before it acknowledges.
    fn write_payload(&self, ticket: u64, bytes: &[u8]) {
        assert!(bytes.len() <= INLINE_BYTES);
        self.memory.write(Self::payload_at(ticket), bytes);
    }
}

impl KernelProxy {
    /// Makes PE `me`'s channel and starts its thread, which performs requests through the
    /// world's network path.
    ///
    /// # Errors
    /// A message if the pinned memory or the thread cannot be had.
    pub(crate) fn start(me: Pe, gpu: Arc<Gpu>, world: Arc<World>) -> Result<KernelProxy, String> {
        let memory = SharedPinned::zeroed(&gpu, CHANNEL_BYTES, "the kernels' channel")?;
        let channel = Arc::new(Channel { memory });
        let stop = Arc::new(AtomicBool::new(false));
        let server = Server {
            me,
            gpu,
            world,
            channel: Arc::clone(&channel),
        };
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("rshmem-kernel-proxy".into())
            .spawn(move || server.run(&stopped))
            .map_err(|e| format!("cannot start the kernels' proxy thread: {e}"))?;
        Ok(KernelProxy {
            channel,
            stop,
            thread: Some(thread),
        })
    }

    /// The channel's address, valid on the GPU (`rshmem_state.channel`).
    pub(crate) fn addr(&self) -> u64 {
        self.channel.memory.addr(0)
    }

    /// The ticket below which every request published now lies: the proxy has completed
    /// everything a kernel posted before this call once its completed count reaches it.
    pub(crate) fn published_end(&self) -> u64 {
        let channel = &self.channel;
        let mut end = channel.word(COMPLETED).load(Ordering::Acquire);
        let limit = end + SLOTS;
        // Published slots follow the completed ones without gaps, up to one not yet written.
        while end < limit
            && channel
                .word(Channel::request_at(end))
                .load(Ordering::Acquire)
                == end + 1
        {
            end += 1;
        }
        end
    }

    /// Whether the proxy has completed every request below `end`, or `Err` if it failed.
    pub(crate) fn completed(&self, end: u64) -> Result<bool, String> {
        if self.channel.word(FAILED).load(Ordering::Acquire) != 0 {
            return Err("the kernels' proxy failed a request (its message is on stderr)".into());
        }
        Ok(self.channel.word(COMPLETED).load(Ordering::Acquire) >= end)
    }
}

impl Drop for KernelProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What the thread owns.
struct Server {
    me: Pe,
    gpu: Arc<Gpu>,
    world: Arc<World>,
    channel: Arc<Channel>,
}

impl Server {
    fn run(self, stop: &AtomicBool) {
        let me = self.me;
        let (stream, staging) = match on_gpu(&self.gpu) {
            Ok(ready) => ready,
            Err(e) => return self.fail(&format!("the kernels' proxy cannot use its GPU: {e}")),
        };
        let Some(remote) = self.world.remote() else {
            return self.fail("the kernels' proxy started in a run without a network path");
        };
        let channel = &self.channel;
        let (mut next, mut released) = (0u64, 0u64);
        let mut idle = 0u32;
        while !stop.load(Ordering::Relaxed) {
            if let Some(slot) = channel.take(next) {
                let value = KernelRequest::decode(&slot).and_then(|request| {
                    let inline = Inline {
                        channel,
                        ticket: next,
                    };
                    serve(remote, &request, &stream, &staging, inline)
                });
                match value {
                    Ok(value) => {
                        let result = Channel::result_at(next);
                        channel.word(result + 8).store(value, Ordering::Relaxed);
                        channel.word(result).store(next + 1, Ordering::Release);
                        channel.word(COMPLETED).store(next + 1, Ordering::Release);
                    }
                    Err(e) => {
                        return self.fail(&format!("{me}: a kernel's request {next} failed: {e}"));
                    }
                }
                next += 1;
                idle = 0;
            } else {
                remote.progress();
                idle += 1;
                match idle < 256 {
                    true => std::thread::yield_now(),
                    false => std::thread::sleep(IDLE_NAP),
                }
            }
            released = self.release(released, next);
        }
    }

    /// Releases the slots of complete requests from `released` on, up to `next`, stopping at
    /// one whose thread has not acknowledged its result yet; returns the new mark.
    fn release(&self, mut released: u64, next: u64) -> u64 {
        let channel = &self.channel;
        let before = released;
        while released < next {
            // Byte 11 of a request: whether its thread waits for the result.
            let awaited = channel
                .word(Channel::request_at(released) + 8)
                .load(Ordering::Relaxed)
                >> 24
                & 0xff
                != 0;
            let acked = channel
                .word(Channel::result_at(released) + 16)
                .load(Ordering::Acquire);
            if awaited && acked != released + 1 {
                break;
            }
            released += 1;
        }
        if released != before {
            channel.word(RELEASED).store(released, Ordering::Release);
        }
        released
    }

    /// Marks the channel failed (for the host's quiet), reports `why` on stderr and ends the
    /// job: its kernels cannot go on without the request.
    fn fail(&self, why: &str) {
        self.channel.word(FAILED).store(1, Ordering::Release);
        // Why stderr: the job ends here, as the watchdog's does, and stderr is all there is.
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "rshmem: {why}; the job ends");
        self.world.global_exit(1);
        // Not `exit`: its handlers (the C API's finalisation among them) would run on this
        // thread while the program's threads still use the run; one did crash that way.
        // SAFETY: `_exit` ends the process at once; nothing here relies on what follows.
        unsafe { libc::_exit(1) };
    }
}

/// The payload of the request being served.
struct Inline<'a> {
    channel: &'a Channel,
    ticket: u64,
}

/// Performs `request` through `remote`, with its slot's payload; returns the result the
/// kernel reads.
fn serve(
    remote: &Remote,
    request: &KernelRequest,
    stream: &CudaStream,
    staging: &Pinned,
    inline: Inline<'_>,
) -> Result<u64, String> {
    let pe = request.pe;
    if !remote.reaches(pe) {
        return Err(format!("{pe} is not reached over the network from here"));
    }
    let len = request.len as usize;
    let lost = |e: crate::error::QueueError| e.to_string();
    match request.verb {
        Verb::Put => {
            let mut done = 0;
            while done < len {
                let n = (len - done).min(CHUNK_BYTES);
                copy(stream, staging.addr(), request.src + done as u64, n)?;
                // SAFETY: the copy into the staging buffer (this thread's) has completed.
                let bytes = unsafe { staging.bytes(n) };
                remote
                    .put(pe, request.region, request.dst + done as u64, bytes)
                    .map_err(lost)?;
                done += n;
            }
            Ok(0)
        }
        Verb::Get => {
            let mut done = 0;
            let mut bytes = vec![0u8; len.min(CHUNK_BYTES)];
            while done < len {
                let n = (len - done).min(CHUNK_BYTES);
                remote
                    .get(
                        pe,
                        request.region,
                        request.src + done as u64,
                        &mut bytes[..n],
                    )
                    .map_err(lost)?;
                // SAFETY: the staging buffer is this thread's and holds a chunk.
                unsafe {
                    std::ptr::copy_nonoverlapping(bytes.as_ptr(), staging.addr() as *mut u8, n);
                }
                copy(stream, request.dst + done as u64, staging.addr(), n)?;
                done += n;
            }
            Ok(0)
        }
        Verb::Amo(op) => remote
            .amo(pe, request.region, request.dst, op)
            .map_err(lost),
        Verb::PutValue => {
            let bytes = request.value.to_le_bytes();
            remote
                .put(pe, request.region, request.dst, &bytes[..len])
                .map_err(lost)?;
            Ok(0)
        }
        Verb::GetValue => {
            let mut bytes = [0u8; 8];
            remote
                .get(pe, request.region, request.src, &mut bytes[..len])
                .map_err(lost)?;
            Ok(u64::from_le_bytes(bytes))
        }
        Verb::PutInline => {
            let bytes = inline.channel.read_payload(inline.ticket, len);
            remote
                .put(pe, request.region, request.dst, &bytes)
                .map_err(lost)?;
            Ok(0)
        }
        Verb::GetInline => {
            let mut bytes = vec![0u8; len];
            remote
                .get(pe, request.region, request.src, &mut bytes)
                .map_err(lost)?;
            inline.channel.write_payload(inline.ticket, &bytes);
            Ok(0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request laid out as `rshmem_request_t`.
    fn slot(verb: u16, region: u8, awaited: u8, pe: u32, words: [u64; 5], op: u32) -> [u8; 64] {
        let mut slot = [0u8; 64];
        slot[0..8].copy_from_slice(&7u64.to_le_bytes());
        slot[8..10].copy_from_slice(&verb.to_le_bytes());
        slot[10] = region;
        slot[11] = awaited;
        slot[12..16].copy_from_slice(&pe.to_le_bytes());
        for (i, word) in words.iter().enumerate() {
            slot[16 + 8 * i..24 + 8 * i].copy_from_slice(&word.to_le_bytes());
        }
        slot[56..60].copy_from_slice(&op.to_le_bytes());
        slot
    }

    #[test]
    fn requests_decode_as_the_header_lays_them_out() {
        let put = KernelRequest::decode(&slot(1, 0, 1, 3, [64, 0xa000, 100, 0, 0], 0)).unwrap();
        assert_eq!(put.verb, Verb::Put);
        assert_eq!(
            (put.pe, put.region),
            (Pe(3), Region::Segment(MemKind::Device))
        );
        assert_eq!((put.dst, put.src, put.len), (64, 0xa000, 100));
        let cas = KernelRequest::decode(&slot(3, 1, 1, 0, [8, 0, 4, 5, 9], 4)).unwrap();
        let op = AmoOp {
            kind: AmoKind::CompareSwap { compare: 9 },
            operand: 5,
            width: AmoWidth::W32,
        };
        assert_eq!((cas.verb, cas.region), (Verb::Amo(op), Region::Sync));
        let wrong = [
            (slot(9, 0, 0, 0, [0; 5], 0), "unknown verb 9"),
            (slot(1, 2, 0, 0, [0; 5], 0), "unknown region 2"),
            (slot(3, 0, 0, 0, [0, 0, 2, 0, 0], 5), "an atomic on 2 bytes"),
            (slot(3, 0, 0, 0, [0, 0, 8, 0, 0], 11), "unknown atomic 11"),
            (slot(4, 0, 0, 0, [0, 0, 9, 0, 0], 0), "a value of 9 bytes"),
            (
                slot(6, 0, 0, 0, [0, 0, 1025, 0, 0], 0),
                "a payload of 1025 bytes",
            ),
        ];
        for (bytes, why) in wrong {
            assert_eq!(KernelRequest::decode(&bytes).unwrap_err(), why);
        }
    }

    /// The layout is the header's: the sizes the header asserts.
    #[test]
    fn the_header_has_the_same_channel() {
        let header = crate::cuda::device_api::HEADER;
        for line in [
            format!("#define RSHMEM_CHANNEL_SLOTS {SLOTS}\n"),
            format!("sizeof(rshmem_request_t) == {REQUEST_BYTES}"),
            format!("sizeof(rshmem_result_t) == {RESULT_BYTES}"),
            format!("sizeof(rshmem_channel_t) == {CHANNEL_BYTES}"),
        ] {
            assert!(header.contains(&line), "the header lacks {line:?}");
        }
        assert_eq!((RELEASED, COMPLETED, FAILED, REQUESTS), (0, 64, 128, 256));
    }
}
