//! GPU memory of PEs on other nodes: every host-initiated operation to such a PE is a request
//! to its proxy thread, carried over libfabric (`crate::ofi::network`), which the proxy
//! performs on its GPU and answers (docs/multi-node.md, "GPU memory across nodes").
//!
//! Why requests and not RDMA into GPU memory: a provider writes GPU memory only with
//! `FI_HMEM`, which neither Debian's libfabric nor `tcp;ofi_rxm` offers; so the bytes are
//! staged through pinned host memory at both ends, and the target's CPU copies them in with
//! the driver. Atomics go through the same proxy, as the atomics kernel on the target's GPU
//! with system-scope atomics, so they stay indivisible against kernels and against the local
//! peers' atomics on that GPU.
//!
//! The wire: each PE has one mailbox of pinned host memory, registered with its endpoint,
//! with a request slot and a doorbell per source PE and a reply slot and a doorbell per
//! target PE (`Layout`). A request is the slot's bytes put with delivery complete, then the
//! doorbell set to the request's sequence number by an atomic; the proxy answers in the
//! source's reply slot the same way. A source has at most one request in flight to each
//! target and waits for its reply, so every operation completes at issue: requests to one
//! target are performed in issue order (fence costs nothing), and quiet finds nothing in
//! flight. A put larger than a slot travels as several requests in order.

mod kernel_proxy;
mod proxy;
mod shared;

pub(crate) use kernel_proxy::KernelProxy;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::driver::Gpu;
use crate::amo::{AmoKind, AmoOp, AmoWidth};
use crate::common::paths::PeerPath;
use crate::error::QueueError;
use crate::ofi::RemoteKey;
use crate::ofi::allgather::{self, Gathered, NetworkAllgather};
use crate::ofi::network::{LauncherAllgather, NETWORK_NAP, Network};
use crate::types::{MemKind, Pe};
use shared::SharedPinned;

/// The payload bytes a request or reply slot holds.
pub(crate) const CHUNK_BYTES: usize = 64 * 1024;

/// The header before a slot's payload.
const HEADER_BYTES: usize = 64;

/// A request or reply slot: header, then payload.
const SLOT_BYTES: usize = HEADER_BYTES + CHUNK_BYTES;

/// How long a source waits for a reply before it names the target as not answering.
const PATIENCE: Duration = Duration::from_secs(60);

/// What a request asks the proxy to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
enum Verb {
    Put = 1,
    Get = 2,
    Amo = 3,
}

/// What a request reaches on its target: one of its segments, or the synchronisation memory
/// of its device-side API (barrier words and the collectives' scratch), which kernels of
/// other nodes reach through their proxies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Region {
    Segment(MemKind),
    Sync,
}

/// How many regions a PE has: its segments, then its synchronisation memory.
pub(crate) const REGIONS: usize = MemKind::COUNT + 1;

impl Region {
    /// Its index among a PE's [`REGIONS`], as the wire carries it.
    fn index(self) -> usize {
        match self {
            Region::Segment(kind) => kind.index(),
            Region::Sync => MemKind::COUNT,
        }
    }

    /// The region of index `index`, if there is one.
    fn of_index(index: usize) -> Option<Region> {
        match MemKind::ALL.into_iter().find(|kind| kind.index() == index) {
            Some(kind) => Some(Region::Segment(kind)),
            None => (index == MemKind::COUNT).then_some(Region::Sync),
        }
    }

    /// Whether it is host memory, which the CPU reads and writes (else the GPU's memory).
    fn on_host(self) -> bool {
        matches!(self, Region::Segment(kind) if kind != MemKind::Device)
    }
}

impl From<MemKind> for Region {
    fn from(kind: MemKind) -> Region {
        Region::Segment(kind)
    }
}

/// Where each slot and doorbell lies in a mailbox of `n_pes` PEs.
#[derive(Clone, Copy, Debug)]
struct Layout {
    n_pes: usize,
}

impl Layout {
    /// The request slot of source `pe`.
    fn request(self, pe: Pe) -> usize {
        pe.idx() * SLOT_BYTES
    }
    /// The doorbell of source `pe`'s requests.
    fn request_bell(self, pe: Pe) -> usize {
        self.n_pes * SLOT_BYTES + pe.idx() * 8
    }
    /// The reply slot of target `pe`.
    fn reply(self, pe: Pe) -> usize {
        self.n_pes * (SLOT_BYTES + 8) + pe.idx() * SLOT_BYTES
    }
    /// The doorbell of target `pe`'s replies.
    fn reply_bell(self, pe: Pe) -> usize {
        2 * self.n_pes * SLOT_BYTES + self.n_pes * 8 + pe.idx() * 8
    }
    fn bytes(self) -> usize {
        2 * self.n_pes * (SLOT_BYTES + 8)
    }
}

/// A request's header: the verb, the segment, the bytes, and an atomic's operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Request {
    verb: Verb,
    region: Region,
    offset: u64,
    len: u64,
    op: Option<AmoOp>,
}

impl Request {
    fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut h = [0u8; HEADER_BYTES];
        let (amo_code, compare, operand, wide) = match self.op {
            None => (0u32, 0u64, 0u64, 0u32),
            Some(op) => {
                let (code, compare) = match op.kind {
                    AmoKind::Fetch => (1, 0),
                    AmoKind::Set => (2, 0),
                    AmoKind::Swap => (3, 0),
                    AmoKind::CompareSwap { compare } => (4, compare),
                    AmoKind::Add => (5, 0),
                    AmoKind::And => (6, 0),
                    AmoKind::Or => (7, 0),
                    AmoKind::Xor => (8, 0),
                };
                (
                    code,
                    compare,
                    op.operand,
                    u32::from(op.width == AmoWidth::W64),
                )
            }
        };
        h[0..4].copy_from_slice(&(self.verb as u32).to_le_bytes());
        h[4..8].copy_from_slice(&(self.region.index() as u32).to_le_bytes());
        h[8..16].copy_from_slice(&self.offset.to_le_bytes());
        h[16..24].copy_from_slice(&self.len.to_le_bytes());
        h[24..28].copy_from_slice(&amo_code.to_le_bytes());
        h[28..32].copy_from_slice(&wide.to_le_bytes());
        h[32..40].copy_from_slice(&operand.to_le_bytes());
        h[40..48].copy_from_slice(&compare.to_le_bytes());
        h
    }

    /// The request in `h`, or what is wrong with it.
    fn decode(h: &[u8]) -> Result<Request, String> {
        let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().expect("8 bytes"));
        let verb = match u32_at(0) {
            1 => Verb::Put,
            2 => Verb::Get,
            3 => Verb::Amo,
            other => return Err(format!("unknown request verb {other}")),
        };
        let region = Region::of_index(u32_at(4) as usize)
            .ok_or_else(|| format!("unknown region {}", u32_at(4)))?;
        let (compare, operand) = (u64_at(40), u64_at(32));
        let kind_of = match u32_at(24) {
            0 => None,
            1 => Some(AmoKind::Fetch),
            2 => Some(AmoKind::Set),
            3 => Some(AmoKind::Swap),
            4 => Some(AmoKind::CompareSwap { compare }),
            5 => Some(AmoKind::Add),
            6 => Some(AmoKind::And),
            7 => Some(AmoKind::Or),
            8 => Some(AmoKind::Xor),
            other => return Err(format!("unknown atomic {other}")),
        };
        let width = match u32_at(28) {
            0 => AmoWidth::W32,
            _ => AmoWidth::W64,
        };
        let op = kind_of.map(|kind| AmoOp {
            kind,
            operand,
            width,
        });
        if (verb == Verb::Amo) != op.is_some() {
            return Err("an atomic request without its operation, or the reverse".into());
        }
        Ok(Request {
            verb,
            region,
            offset: u64_at(8),
            len: u64_at(16),
            op,
        })
    }
}

/// A reply's header: 0 and the atomic's old value, or an error whose text is the payload.
const REPLY_OK: u64 = 0;
const REPLY_ERROR: u64 = 1;

/// This PE's regions as its proxy reaches them, published by the PE's thread as it makes
/// and grows them: base address and length per [`Region::index`].
pub(crate) type OwnSegments = Mutex<[Option<(u64, u64)>; REGIONS]>;

/// The mailbox: pinned host memory registered with the endpoint.
struct Mailbox {
    memory: SharedPinned,
    layout: Layout,
}

/// A CUDA PE's path to PEs of other nodes: its endpoint, mailbox, every PE's mailbox key, a
/// lane per target, and its proxy thread.
pub(crate) struct Remote {
    me: Pe,
    paths: Vec<PeerPath>,
    nodes: Vec<u32>,
    network: Arc<Network>,
    mailbox: Arc<Mailbox>,
    keys: Vec<RemoteKey>,
    /// Per target: the sequence number of the last request, held while one is in flight.
    lanes: Vec<Mutex<u64>>,
    own: Arc<OwnSegments>,
    /// The run's exchanges over the network, where it has at most
    /// [`allgather::MAX_PES`] PEs.
    allgather: Option<NetworkAllgather>,
    stop: Arc<AtomicBool>,
    proxy: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("me", &self.me)
            .field("paths", &self.paths)
            .finish_non_exhaustive()
    }
}

impl Remote {
    /// Opens PE `me`'s endpoint and mailbox on `gpu`, trades addresses and mailbox keys with
    /// every PE through `allgather` (collective), and starts the proxy thread.
    ///
    /// # Errors
    /// A message saying what failed: libfabric, the provider, pinned memory, the exchange.
    pub(crate) fn open(
        me: Pe,
        nodes: &[u32],
        paths: Vec<PeerPath>,
        gpu: Arc<Gpu>,
        allgather: LauncherAllgather<'_>,
    ) -> Result<Remote, String> {
        let network = Network::open(me, nodes, allgather)?;
        let layout = Layout { n_pes: nodes.len() };
        let memory = SharedPinned::zeroed(&gpu, layout.bytes(), "the mailbox")?;
        // SAFETY: the mailbox outlives the endpoint (`Drop` stops the proxy first and the
        // network is dropped before the memory, field order below), and is read with atomics
        // and copies after doorbells.
        let keys = unsafe {
            network.share_region(
                memory.addr(0) as *mut u8,
                layout.bytes(),
                allgather,
                "mailbox",
            )
        }?;
        let over_network = match nodes.len() <= allgather::MAX_PES {
            true => Some(NetworkAllgather::open(
                me,
                nodes.len(),
                &network,
                allgather,
            )?),
            false => None,
        };
        let network = Arc::new(network);
        let mailbox = Arc::new(Mailbox { memory, layout });
        let own = Arc::new(OwnSegments::default());
        let stop = Arc::new(AtomicBool::new(false));
        let proxy = proxy::Proxy {
            me,
            gpu,
            network: Arc::clone(&network),
            mailbox: Arc::clone(&mailbox),
            keys: keys.clone(),
            own: Arc::clone(&own),
            stop: Arc::clone(&stop),
        }
        .start()?;
        Ok(Remote {
            me,
            lanes: keys.iter().map(|_| Mutex::new(0)).collect(),
            paths,
            nodes: nodes.to_vec(),
            network,
            mailbox,
            keys,
            own,
            allgather: over_network,
            stop,
            proxy: Some(proxy),
        })
    }

    /// Every PE's `mine` through the network, waiting until `until`; `None` when the
    /// launcher must carry this exchange (a run too large for it, or bytes too large for a
    /// slot: every PE finds the same).
    pub(crate) fn exchange(
        &self,
        mine: &[u8],
        until: Instant,
    ) -> Option<Result<Vec<Vec<u8>>, String>> {
        let over = self.allgather.as_ref()?;
        match over.exchange(&self.network, mine, until, &|sleep| sleep()) {
            Ok(Gathered::All(all)) => Some(Ok(all)),
            Ok(Gathered::TooLarge) => None,
            Err(e) => Some(Err(e)),
        }
    }

    /// Whether `pe` is reached through this path (a PE of another node, or every peer under
    /// `RSHMEM_TRANSPORT=ofi`).
    pub(crate) fn reaches(&self, pe: Pe) -> bool {
        pe != self.me && self.paths.get(pe.idx()) == Some(&PeerPath::Network)
    }

    /// Lets libfabric move what it has in hand (the thread of a waiting PE calls it).
    pub(crate) fn progress(&self) {
        self.network.progress();
    }

    /// Records this PE's segment of kind index `kind_idx` at `base` for `len_bytes`, as its
    /// proxy will reach it.
    pub(crate) fn publish_own(&self, kind_idx: usize, base: u64, len_bytes: u64) {
        self.own.lock().unwrap_or_else(|e| e.into_inner())[kind_idx] = Some((base, len_bytes));
    }

    /// Records this PE's synchronisation memory at `base` for `len_bytes`: kernels of other
    /// nodes reach its barrier words and scratch through this PE's proxy.
    pub(crate) fn publish_sync(&self, base: u64, len_bytes: u64) {
        self.publish_own(Region::Sync.index(), base, len_bytes);
    }

    /// Puts `data` at `offset` of `target`'s `region`; returns once the target's GPU (or host
    /// memory) has it.
    pub(crate) fn put(
        &self,
        target: Pe,
        region: Region,
        offset: u64,
        data: &[u8],
    ) -> Result<(), QueueError> {
        for (i, chunk) in data.chunks(CHUNK_BYTES).enumerate() {
            let request = Request {
                verb: Verb::Put,
                region,
                offset: offset + (i * CHUNK_BYTES) as u64,
                len: chunk.len() as u64,
                op: None,
            };
            self.call(target, &request, chunk)?;
        }
        Ok(())
    }

    /// Gets `out.len()` bytes at `offset` of `target`'s `region` into `out`.
    pub(crate) fn get(
        &self,
        target: Pe,
        region: Region,
        offset: u64,
        out: &mut [u8],
    ) -> Result<(), QueueError> {
        for (i, chunk) in out.chunks_mut(CHUNK_BYTES).enumerate() {
            let request = Request {
                verb: Verb::Get,
                region,
                offset: offset + (i * CHUNK_BYTES) as u64,
                len: chunk.len() as u64,
                op: None,
            };
            let (_, bytes) = self.call(target, &request, &[])?;
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
        Ok(())
    }

    /// Applies `op` to the word at `offset` of `target`'s `region` and returns its old value.
    pub(crate) fn amo(
        &self,
        target: Pe,
        region: Region,
        offset: u64,
        op: AmoOp,
    ) -> Result<u64, QueueError> {
        let request = Request {
            verb: Verb::Amo,
            region,
            offset,
            len: op.width.bytes(),
            op: Some(op),
        };
        self.call(target, &request, &[]).map(|(old, _)| old)
    }

    /// Sends `request` with `payload` to `target`'s proxy and waits for its answer: the
    /// reply header's value and the payload of a get.
    fn call(
        &self,
        target: Pe,
        request: &Request,
        payload: &[u8],
    ) -> Result<(u64, Vec<u8>), QueueError> {
        let layout = self.mailbox.layout;
        let mut lane = self.lanes[target.idx()]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let seq = *lane + 1;
        let mut slot = Vec::with_capacity(HEADER_BYTES + payload.len());
        slot.extend_from_slice(&request.encode());
        slot.extend_from_slice(payload);
        self.network.put_and_ring(
            target,
            self.keys[target.idx()],
            (layout.request(self.me) as u64, &slot),
            (layout.request_bell(self.me) as u64, seq),
        )?;
        let bell = self.mailbox.memory.word(layout.reply_bell(target));
        let since = Instant::now();
        let mut spins = 0u32;
        while bell.load(Ordering::Acquire) != seq {
            if since.elapsed() > PATIENCE {
                return Err(QueueError::Lost(format!(
                    "{target} (on node {}) did not answer a request of {} over the network in \
                     {} s: its process is stuck or gone",
                    self.nodes[target.idx()],
                    self.me,
                    PATIENCE.as_secs()
                )));
            }
            self.network.progress();
            spins += 1;
            match spins < 64 {
                true => std::thread::yield_now(),
                false => std::thread::sleep(NETWORK_NAP.min(Duration::from_micros(20))),
            }
        }
        *lane = seq;
        let header = self.mailbox.memory.read(layout.reply(target), 24);
        let word = |i: usize| u64::from_le_bytes(header[i..i + 8].try_into().expect("8 bytes"));
        let (status, value, len) = (word(0), word(8), word(16) as usize);
        let body = self
            .mailbox
            .memory
            .read(layout.reply(target) + HEADER_BYTES, len.min(CHUNK_BYTES));
        match status {
            REPLY_OK => Ok((value, body)),
            _ => Err(QueueError::Lost(format!(
                "{target} (on node {}) refused a request over the network: {}",
                self.nodes[target.idx()],
                String::from_utf8_lossy(&body)
            ))),
        }
    }
}

impl Drop for Remote {
    /// Stops the proxy after the request it is serving, before the endpoint and the mailbox
    /// go.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(proxy) = self.proxy.take() {
            let _ = proxy.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every request survives the trip through its header, atomics with every operation.
    #[test]
    fn requests_round_trip() {
        let ops = [
            AmoKind::Fetch,
            AmoKind::Set,
            AmoKind::Swap,
            AmoKind::CompareSwap { compare: 7 },
            AmoKind::Add,
            AmoKind::And,
            AmoKind::Or,
            AmoKind::Xor,
        ];
        let regions = MemKind::ALL.into_iter().map(Region::from);
        for region in regions.chain([Region::Sync]) {
            let put = Request {
                verb: Verb::Put,
                region,
                offset: 4096,
                len: 77,
                op: None,
            };
            assert_eq!(Request::decode(&put.encode()), Ok(put));
            for (amo, width) in ops
                .into_iter()
                .zip([AmoWidth::W32, AmoWidth::W64].repeat(4))
            {
                let request = Request {
                    verb: Verb::Amo,
                    region,
                    offset: 8,
                    len: width.bytes(),
                    op: Some(AmoOp {
                        kind: amo,
                        operand: u64::MAX - 3,
                        width,
                    }),
                };
                assert_eq!(Request::decode(&request.encode()), Ok(request));
            }
        }
        let mut bad = [0u8; HEADER_BYTES];
        bad[0] = 9;
        assert!(Request::decode(&bad).unwrap_err().contains("verb 9"));
        bad[0] = 1;
        bad[4] = REGIONS as u8;
        assert!(
            Request::decode(&bad)
                .unwrap_err()
                .contains("unknown region")
        );
    }

    /// Slots and doorbells of a mailbox do not overlap and fit in it.
    #[test]
    fn the_mailbox_layout_has_no_overlap() {
        let layout = Layout { n_pes: 3 };
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for pe in (0..3).map(Pe) {
            spans.push((layout.request(pe), SLOT_BYTES));
            spans.push((layout.request_bell(pe), 8));
            spans.push((layout.reply(pe), SLOT_BYTES));
            spans.push((layout.reply_bell(pe), 8));
        }
        spans.sort_unstable();
        for pair in spans.windows(2) {
            assert!(pair[0].0 + pair[0].1 <= pair[1].0, "{pair:?}");
        }
        let (last, len) = spans[spans.len() - 1];
        assert_eq!(last + len, layout.bytes());
    }
}
