//! The proxy thread of a CUDA PE: it rings no doorbell of its own, it watches the request
//! doorbells of its mailbox, performs each request on this PE's memory, and answers.
//!
//! It performs requests one at a time, in the order it finds them, each one complete
//! (the copy or atomics kernel synchronised) before its answer leaves: so a source that saw
//! the answer knows the bytes are in the target's memory, and a target that waits on a word
//! sees it change once the copy is done. GPU memory is written by copies on the proxy's own
//! stream and atomics by the atomics kernel there, both in the proxies' context (`on_gpu`);
//! host memory (`Host`, `Static`) by the CPU, as the queue does for its own host operations
//! (`queue/cpu.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use cudarc::driver::{CudaStream, sys};

use super::{
    CHUNK_BYTES, HEADER_BYTES, Mailbox, OwnSegments, REPLY_ERROR, REPLY_OK, Request, Verb,
};
use crate::amo::{AmoOp, AmoWidth};
use crate::common::cpu_atomics;
use crate::cuda::driver::Gpu;
use crate::cuda::error::{DriverCallError, During};
use crate::cuda::memory::Pinned;
use crate::error::QueueError;
use crate::ofi::RemoteKey;
use crate::ofi::network::Network;
use crate::sync::cross_process::fence;
use crate::types::Pe;

/// How long the proxy sleeps when it found nothing to do many times in a row.
const IDLE_NAP: Duration = Duration::from_micros(20);

/// What the proxy thread owns.
pub(super) struct Proxy {
    pub(super) me: Pe,
    pub(super) gpu: Arc<Gpu>,
    pub(super) network: Arc<Network>,
    pub(super) mailbox: Arc<Mailbox>,
    pub(super) keys: Vec<RemoteKey>,
    pub(super) own: Arc<OwnSegments>,
    pub(super) stop: Arc<AtomicBool>,
}

/// The result of one request: the answer's value and bytes.
type Answer = Result<(u64, Vec<u8>), String>;

impl Proxy {
    /// Starts the thread.
    ///
    /// # Errors
    /// A message if the thread cannot start.
    pub(super) fn start(self) -> Result<JoinHandle<()>, String> {
        std::thread::Builder::new()
            .name("rshmem-cuda-proxy".into())
            .spawn(move || self.run())
            .map_err(|e| format!("cannot start the proxy thread: {e}"))
    }

    fn run(self) {
        let me = self.me;
        let (stream, staging) = match on_gpu(&self.gpu) {
            Ok(ready) => ready,
            Err(e) => {
                tracing::error!("{me}: the proxy thread cannot use its GPU: {e}");
                return;
            }
        };
        let layout = self.mailbox.layout;
        let n_pes = layout.n_pes;
        let mut seen = vec![0u64; n_pes];
        let mut idle = 0u32;
        while !self.stop.load(Ordering::Relaxed) {
            let mut served = false;
            for source in (0..n_pes as u32).map(Pe) {
                let bell = self
                    .mailbox
                    .memory
                    .word(layout.request_bell(source))
                    .load(Ordering::Acquire);
                if bell == seen[source.idx()] {
                    continue;
                }
                seen[source.idx()] = bell;
                served = true;
                let answer = self.serve(source, &stream, &staging);
                if let Err(e) = self.answer(source, bell, answer) {
                    // The source is gone or unreachable; it finds out on its own.
                    tracing::warn!("{me}: answering {source}: {e}");
                }
            }
            if served {
                idle = 0;
                continue;
            }
            self.network.progress();
            idle += 1;
            match idle < 256 {
                true => std::thread::yield_now(),
                false => std::thread::sleep(IDLE_NAP),
            }
        }
    }

    /// Performs `source`'s request on this PE's memory.
    fn serve(&self, source: Pe, stream: &CudaStream, staging: &Pinned) -> Answer {
        let layout = self.mailbox.layout;
        let slot = layout.request(source);
        let request = Request::decode(&self.mailbox.memory.read(slot, HEADER_BYTES))?;
        let len = request.len as usize;
        if len > CHUNK_BYTES {
            return Err(format!("a request of {len} bytes, more than a slot holds"));
        }
        let target = self.address(&request)?;
        let on_host = request.region.on_host();
        match request.verb {
            Verb::Put => {
                let from = self.mailbox.memory.addr(slot + HEADER_BYTES);
                match on_host {
                    // SAFETY: `target` is `len` bytes inside this PE's host segment (checked
                    // by `address`); the slot holds the payload until this PE answers.
                    true => unsafe {
                        std::ptr::copy_nonoverlapping(from as *const u8, target as *mut u8, len);
                        fence(Ordering::SeqCst);
                    },
                    false => copy(stream, target, from, len)?,
                }
                Ok((0, Vec::new()))
            }
            Verb::Get => {
                match on_host {
                    // SAFETY: as for a put, the other way; the staging buffer is this
                    // thread's and holds a slot's bytes.
                    true => unsafe {
                        fence(Ordering::SeqCst);
                        std::ptr::copy_nonoverlapping(
                            target as *const u8,
                            staging.addr() as *mut u8,
                            len,
                        );
                    },
                    false => copy(stream, staging.addr(), target, len)?,
                }
                let mut bytes = vec![0u8; len];
                // SAFETY: the staging buffer is this thread's, and the copy into it is done.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        staging.addr() as *const u8,
                        bytes.as_mut_ptr(),
                        len,
                    );
                }
                Ok((0, bytes))
            }
            Verb::Amo => {
                let op = request
                    .op
                    .ok_or("an atomic request without its operation")?;
                let old = match on_host {
                    // SAFETY: an aligned word inside this PE's host segment (`address`);
                    // every party updates it with CPU atomics, as `queue/cpu.rs` does.
                    true => unsafe {
                        let old = cpu_atomics::apply_at(target as *mut u8, op, Ordering::AcqRel);
                        fence(Ordering::SeqCst);
                        old
                    },
                    false => self.amo_on_gpu(stream, staging, target, op)?,
                };
                Ok((old, Vec::new()))
            }
        }
    }

    /// The address of the request's bytes in this PE's segment, or why it has none.
    fn address(&self, request: &Request) -> Result<u64, String> {
        let own = self.own.lock().unwrap_or_else(|e| e.into_inner());
        let (base, len_bytes) = own[request.region.index()].ok_or_else(|| {
            format!(
                "{} has no {:?} (yet): a request reached it before the memory did",
                self.me, request.region
            )
        })?;
        let end = request.offset.checked_add(request.len);
        if end.is_none_or(|end| end > len_bytes) {
            return Err(format!(
                "bytes {}+{} are outside {}'s {:?} of {len_bytes} bytes",
                request.offset, request.len, self.me, request.region
            ));
        }
        if request.verb == Verb::Amo && !(base + request.offset).is_multiple_of(request.len) {
            return Err(format!(
                "an atomic on a misaligned word at offset {}",
                request.offset
            ));
        }
        Ok(base + request.offset)
    }

    /// Applies `op` to the GPU word at `target` with the atomics kernel and returns its old
    /// value.
    fn amo_on_gpu(
        &self,
        stream: &CudaStream,
        staging: &Pinned,
        target: u64,
        op: AmoOp,
    ) -> Result<u64, String> {
        let kernel = &self.gpu.proxy_context()?.amo;
        // SAFETY: `target` is an aligned word of this PE's device segment, mapped for its GPU
        // until the run ends; the staging buffer is this thread's, pinned, and the kernel
        // completes before it is read.
        unsafe { kernel.enqueue(stream, target, op, Some(staging.addr())) }
            .map_err(|e| e.to_string())?;
        stream
            .synchronize()
            .during("cuStreamSynchronize")
            .map_err(|e| e.to_string())?;
        // SAFETY: the kernel wrote 8 bytes there and has completed.
        let old = unsafe { (staging.addr() as *const u64).read_volatile() };
        Ok(match op.width {
            AmoWidth::W32 => old & u64::from(u32::MAX),
            AmoWidth::W64 => old,
        })
    }

    /// Writes the answer into `source`'s reply slot for this PE and rings its doorbell with
    /// `seq`.
    fn answer(&self, source: Pe, seq: u64, answer: Answer) -> Result<(), QueueError> {
        let layout = self.mailbox.layout;
        let (status, value, body) = match answer {
            Ok((value, body)) => (REPLY_OK, value, body),
            Err(why) => {
                tracing::warn!("{}: refused a request of {source}: {why}", self.me);
                (REPLY_ERROR, 0, why.into_bytes())
            }
        };
        let body = &body[..body.len().min(CHUNK_BYTES)];
        let mut slot = vec![0u8; HEADER_BYTES];
        slot[0..8].copy_from_slice(&status.to_le_bytes());
        slot[8..16].copy_from_slice(&value.to_le_bytes());
        slot[16..24].copy_from_slice(&(body.len() as u64).to_le_bytes());
        slot.extend_from_slice(body);
        self.network.put_and_ring(
            source,
            self.keys[source.idx()],
            (layout.reply(self.me) as u64, &slot),
            (layout.reply_bell(self.me) as u64, seq),
        )
    }
}

/// Binds `gpu`'s proxies' context ([`ProxyContext`](crate::cuda::driver::ProxyContext): never
/// the program's, whose kernels may spin until the proxy's work lands) to the calling proxy
/// thread and makes what the thread copies with: its own stream and a pinned buffer of a
/// chunk.
pub(super) fn on_gpu(gpu: &Gpu) -> Result<(Arc<CudaStream>, Pinned), String> {
    let ctx = &gpu.proxy_context()?.ctx;
    let ready = || {
        ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        let stream = ctx.new_stream().during("cuStreamCreate")?;
        Ok::<_, DriverCallError>((stream, Pinned::new(ctx, CHUNK_BYTES)?))
    };
    ready().map_err(|e| e.to_string())
}

/// Copies `len` bytes from `src` to `dst` on `stream` and waits for the copy.
pub(super) fn copy(stream: &CudaStream, dst: u64, src: u64, len: usize) -> Result<(), String> {
    // SAFETY: both ranges are mapped for this GPU (this PE's segment, checked by `address`,
    // and pinned memory of this process) and stay so until the stream is synchronised below.
    unsafe { sys::cuMemcpyAsync(dst, src, len, stream.cu_stream()) }
        .during("cuMemcpyAsync")
        .map_err(|e| e.to_string())?;
    stream
        .synchronize()
        .during("cuStreamSynchronize")
        .map_err(|e| e.to_string())
}
