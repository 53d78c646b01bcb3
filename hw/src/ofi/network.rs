//! The network path: a PE's libfabric endpoint (`hw::ofi`) to PEs on other nodes, with its
//! progress thread and its peers' keys. The process backend puts, gets and applies every
//! atomic through it once it is open (with `RSHMEM_TRANSPORT=ofi`, to every PE, its own
//! memory included); the CUDA backend carries its requests to remote PEs' proxies over it
//! (`cuda/remote.rs`). docs/multi-node.md.
//!
//! Each operation is complete at return, as on the mapped path: a put or an atomic waits for
//! delivery at its target, a get and a fetching atomic for their data. A progress thread per
//! process keeps the endpoint moving while the PE does something else (a provider with manual
//! progress applies peers' writes to this process's memory only while it is called into); a
//! provider with automatic progress (`sockets`) has a thread of its own and gets none. A
//! write that arrives this way wakes no sleeping waiter: a waiter moves the endpoint itself
//! each time it looks at its words, and looks at least every [`NETWORK_NAP`].
//!
//! The endpoints' addresses are traded at join, and each segment's key travels inside the
//! segment key the backend already trades, after the shared-memory key.

#[cfg(feature = "process")]
use std::sync::OnceLock;
#[cfg(feature = "process")]
use std::sync::atomic::AtomicU64;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{AtomicOp, AtomicWidth, Endpoint, OfiError, Place, RemoteKey};
use crate::amo::{AmoKind, AmoOp, AmoWidth};
#[cfg(feature = "process")]
use crate::common::memfd::Mapping;
use crate::error::QueueError;
use crate::types::Pe;
#[cfg(feature = "process")]
use crate::types::{MemKind, RemoteRange};

/// How long a waiter sleeps at most on the network path before it looks again.
pub(crate) const NETWORK_NAP: Duration = Duration::from_micros(100);

/// The variable that sets the longest the progress thread waits between calls into the
/// endpoint, in µs; 0: it never waits (it polls, yielding the core between polls).
pub(crate) const PROGRESS_VAR: &str = "RSHMEM_OFI_PROGRESS_US";

/// The longest the progress thread waits between calls into the endpoint where the node has
/// too few cores for it to poll: for the provider's descriptor to say something arrived
/// (a missed wake-up costs at most this), or, where the provider has none, asleep.
const PROGRESS_WAIT: Duration = Duration::from_micros(1000);
const PROGRESS_SLEEP: Duration = Duration::from_micros(20);

/// The progress thread's longest wait, from [`PROGRESS_VAR`], else by the cores of this node
/// for its `local_pes` PEs: it polls where each PE and its progress thread have a core each
/// (as the progress of MPI libraries and NVSHMEM's proxy do), and waits where they would take
/// cores from the PEs: [`PROGRESS_WAIT`] for the endpoint's descriptor where it `has_wait_fd`,
/// else [`PROGRESS_SLEEP`] asleep.
///
/// # Errors
/// A message naming the variable, for a value that is not a count of µs.
fn progress_period(local_pes: usize, has_wait_fd: bool) -> Result<Duration, String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let default = match (2 * local_pes <= cores, has_wait_fd) {
        (true, _) => Duration::ZERO,
        (false, true) => PROGRESS_WAIT,
        (false, false) => PROGRESS_SLEEP,
    };
    progress_period_of(std::env::var(PROGRESS_VAR).ok().as_deref(), default)
}

/// [`progress_period`] for the variable's value, `None` when it is not set.
fn progress_period_of(value: Option<&str>, default: Duration) -> Result<Duration, String> {
    match value.map(str::trim) {
        None | Some("") => Ok(default),
        Some(text) => text.parse::<u64>().map(Duration::from_micros).map_err(|_| {
            format!(
                "{PROGRESS_VAR}={text}: it is the longest the progress thread waits between \
                 polls, in µs (0 polls without waiting: the lowest latency, for a core per \
                 process; unset: 0 where the node has two cores per PE, else {} where the \
                 provider wakes the thread when data arrives and {} where it does not)",
                PROGRESS_WAIT.as_micros(),
                PROGRESS_SLEEP.as_micros()
            )
        }),
    }
}

/// The progress thread's timer slack, in ns.
const TIMER_SLACK_NS: libc::c_ulong = 1_000;

/// The bytes of a segment's network key inside its segment key.
pub(crate) const NETWORK_KEY_BYTES: usize = 16;

/// An exchange through the launcher: every PE's bytes, in PE order, or what failed.
pub(crate) type LauncherAllgather<'a> = &'a dyn Fn(&[u8]) -> Result<Vec<Vec<u8>>, String>;

/// A PE's endpoint, its peers' segment keys and its progress thread.
pub(crate) struct Network {
    endpoint: Arc<Mutex<Endpoint>>,
    /// Each peer's network key per segment kind, set at import.
    #[cfg(feature = "process")]
    keys: Vec<[OnceLock<RemoteKey>; MemKind::COUNT]>,
    /// Every PE's node id, for errors that name where a lost peer ran.
    nodes: Vec<u32>,
    stop: Arc<AtomicBool>,
    /// Every write posted up to this count has completed ([`Network::writes_done`]).
    #[cfg(feature = "process")]
    settled: AtomicU64,
    progress: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Network").finish_non_exhaustive()
    }
}

impl Network {
    /// Opens PE `me`'s endpoint (the provider `FI_PROVIDER` names, or libfabric's first),
    /// trades addresses with every PE (on `nodes`, by PE) through `allgather`, and starts the
    /// progress thread ([`progress_period`] says how often it polls).
    ///
    /// # Errors
    /// A message saying what failed: libfabric missing, no provider, the exchange.
    pub(crate) fn open(
        me: Pe,
        nodes: &[u32],
        allgather: impl Fn(&[u8]) -> Result<Vec<Vec<u8>>, String>,
    ) -> Result<Network, String> {
        let endpoint = Endpoint::open(None, nodes.len()).map_err(|e| e.to_string())?;
        let name = endpoint.name().map_err(|e| e.to_string())?;
        let names = allgather(&name)?;
        endpoint.insert_peers(&names).map_err(|e| e.to_string())?;
        tracing::debug!(provider = endpoint.provider(), "network path open");
        // Why none for a provider that moves data itself: its own thread does, and on a
        // machine with few cores a second polling thread only takes their time.
        let needs_progress = !endpoint.progresses_itself();
        let my_node = nodes[me.idx()];
        let local_pes = nodes.iter().filter(|&&n| n == my_node).count();
        let period = progress_period(local_pes, endpoint.wait_fd().is_some())?;
        let endpoint = Arc::new(Mutex::new(endpoint));
        let stop = Arc::new(AtomicBool::new(false));
        let progress = if !needs_progress {
            None
        } else {
            let (endpoint, stop) = (Arc::clone(&endpoint), Arc::clone(&stop));
            let thread = std::thread::Builder::new()
                .name("rshmem-ofi-progress".into())
                .spawn(move || {
                    // Why: the kernel's default slack of 50 µs would stretch each short sleep
                    // below to about 70 µs, and with it every operation's wait for the target.
                    // SAFETY: PR_SET_TIMERSLACK takes a value and changes this thread only.
                    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, TIMER_SLACK_NS) };
                    while !stop.load(Ordering::Relaxed) {
                        match progress_after_others(&endpoint, period.is_zero()) {
                            Next::Again => std::thread::yield_now(),
                            Next::WaitFor(fd) => wait_readable(fd, period),
                            Next::Sleep => std::thread::sleep(period),
                        }
                    }
                })
                .map_err(|e| format!("cannot start the network progress thread: {e}"))?;
            Some(thread)
        };
        Ok(Network {
            endpoint,
            #[cfg(feature = "process")]
            keys: nodes.iter().map(|_| Default::default()).collect(),
            nodes: nodes.to_vec(),
            stop,
            #[cfg(feature = "process")]
            settled: AtomicU64::new(0),
            progress,
        })
    }

    /// Moves the endpoint once, unless another thread of this process is in it (which moves
    /// it then): what a waiter calls before it looks at its words, so that writes on their way
    /// to this PE land without waiting for the progress thread.
    pub(crate) fn progress(&self) {
        progress_once(&self.endpoint);
    }

    fn endpoint(&self) -> MutexGuard<'_, Endpoint> {
        self.endpoint.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers `len` bytes at `base` of this process's memory (not a segment: a CUDA PE's
    /// mailbox, `cuda/remote.rs`) for peers to write, and returns its key.
    ///
    /// # Safety
    /// The memory stays allocated while the endpoint is open, and this process touches it
    /// only with atomics or copies that tolerate peers' writes.
    ///
    /// # Errors
    /// The provider's refusal.
    pub(crate) unsafe fn register_region(
        &self,
        base: *mut u8,
        len: usize,
    ) -> Result<RemoteKey, String> {
        // SAFETY: the caller's promise.
        unsafe { self.endpoint().register(base, len) }.map_err(|e| e.to_string())
    }

    /// Registers `len` bytes at `base` as [`Network::register_region`] does and trades the
    /// region's key with every PE through `allgather` (collective); returns every PE's key, in
    /// PE order. `what` names the region in errors.
    ///
    /// # Safety
    /// As [`Network::register_region`].
    ///
    /// # Errors
    /// The provider's refusal, the exchange's error, or a peer's malformed key.
    pub(crate) unsafe fn share_region(
        &self,
        base: *mut u8,
        len: usize,
        allgather: LauncherAllgather<'_>,
        what: &str,
    ) -> Result<Vec<RemoteKey>, String> {
        // SAFETY: the caller's promise.
        let key = unsafe { self.register_region(base, len) }?;
        allgather(&encode(key))?
            .iter()
            .enumerate()
            .map(|(peer, bytes)| {
                <&[u8; NETWORK_KEY_BYTES]>::try_from(bytes.as_slice())
                    .map(decode)
                    .map_err(|_| format!("PE {peer} sent a malformed {what} key"))
            })
            .collect()
    }

    /// Puts `data` at `offset` of `peer`'s region `key` and waits for its delivery.
    pub(crate) fn put_to(
        &self,
        peer: Pe,
        key: RemoteKey,
        offset: u64,
        data: &[u8],
    ) -> Result<(), QueueError> {
        let place = Place {
            peer: u64::from(peer.0),
            key,
            offset,
        };
        self.endpoint()
            .put_delivered(place, data, &mut || {})
            .map_err(|e| self.lost(peer, "a put", e))
    }

    /// Applies `op` to the word at `offset` of `peer`'s region `key` as one fetching atomic,
    /// and returns its old value.
    pub(crate) fn amo_to(
        &self,
        peer: Pe,
        key: RemoteKey,
        offset: u64,
        op: AmoOp,
    ) -> Result<u64, QueueError> {
        let place = Place {
            peer: u64::from(peer.0),
            key,
            offset,
        };
        self.fetch_atomic(place, op)
            .map_err(|e| self.lost(peer, "an atomic", e))
    }

    /// Puts `data` at `offset` of `peer`'s region `key`, delivered, then sets the word at
    /// `bell` there to `seq` with an atomic: a message whose reader, seeing `seq` in the word,
    /// sees the bytes (the mailboxes' requests and answers, the exchanges' contributions).
    pub(crate) fn put_and_ring(
        &self,
        peer: Pe,
        key: RemoteKey,
        (offset, data): (u64, &[u8]),
        (bell, seq): (u64, u64),
    ) -> Result<(), QueueError> {
        self.put_to(peer, key, offset, data)?;
        let ring = AmoOp {
            kind: AmoKind::Set,
            operand: seq,
            width: AmoWidth::W64,
        };
        self.amo_to(peer, key, bell, ring).map(|_| ())
    }

    fn fetch_atomic(&self, place: Place, op: AmoOp) -> Result<u64, OfiError> {
        let (kind, compare) = atomic_of(op);
        self.endpoint()
            .fetch_atomic(place, (kind, width_of(op)), op.operand, compare, &mut || {})
    }
}

/// The process backend's operations on peers' segments, by kind: it registers each segment
/// and imports every peer's key.
#[cfg(feature = "process")]
impl Network {
    /// Registers this PE's `mapping` of `kind`, and returns its network key's bytes to append
    /// to the segment key.
    ///
    /// # Errors
    /// The provider's refusal.
    pub(crate) fn register(
        &self,
        pe: Pe,
        kind: MemKind,
        mapping: &Mapping,
    ) -> Result<[u8; NETWORK_KEY_BYTES], String> {
        let base = mapping.span(0, mapping.len() as u64, "register");
        // SAFETY: the mapping is the PE's segment, which lives as long as the PE state and
        // so longer than the endpoint (dropped first, `Drop` below); peers' writes reach it
        // as the mapped path's do, and this backend reads it only with atomics or copies.
        let key =
            unsafe { self.endpoint().register(base, mapping.len()) }.map_err(|e| e.to_string())?;
        let _ = self.keys[pe.idx()][kind.index()].set(key);
        Ok(encode(key))
    }

    /// Keeps `peer`'s network key of its `kind` segment; a second import keeps the first.
    pub(crate) fn import(&self, peer: Pe, kind: MemKind, bytes: &[u8; NETWORK_KEY_BYTES]) {
        let _ = self.keys[peer.idx()][kind.index()].set(decode(bytes));
    }

    fn place(&self, range: RemoteRange) -> Place {
        let key = self.keys[range.pe.idx()][range.kind.index()]
            .get()
            .copied()
            .unwrap_or_else(|| {
                panic!(
                    "{} used without importing its {:?} segment",
                    range.pe, range.kind
                )
            });
        Place {
            peer: u64::from(range.pe.0),
            key,
            offset: range.offset,
        }
    }

    /// Puts `data` at `dst` and waits for its delivery.
    pub(crate) fn put(&self, dst: RemoteRange, data: &[u8]) -> Result<(), QueueError> {
        self.endpoint()
            .put_delivered(self.place(dst), data, &mut || {})
            .map_err(|e| self.lost(dst.pe, "a put", e))
    }

    /// Posts a put of `data` (copied) at `dst` without waiting for it, and returns the count
    /// of writes to wait for ([`Network::wait_writes`]) before it is delivered.
    pub(crate) fn put_nbi(&self, dst: RemoteRange, data: &[u8]) -> Result<u64, QueueError> {
        let endpoint = self.endpoint();
        endpoint
            .put(self.place(dst), data, &mut || {})
            .map_err(|e| self.lost(dst.pe, "a put", e))?;
        Ok(endpoint.writes_posted())
    }

    /// Posts `op`, an atomic that writes and fetches nothing (not a compare-and-swap), at
    /// `dst` without waiting for it; returns the count of writes to wait for, as
    /// [`Network::put_nbi`] does.
    pub(crate) fn amo_nbi(&self, dst: RemoteRange, op: AmoOp) -> Result<u64, QueueError> {
        let (kind, compare) = atomic_of(op);
        debug_assert!(
            compare.is_none() && kind != AtomicOp::Read,
            "{op:?} is not posted"
        );
        let endpoint = self.endpoint();
        endpoint
            .atomic(
                self.place(dst),
                (kind, width_of(op)),
                op.operand,
                &mut || {},
            )
            .map_err(|e| self.lost(dst.pe, "an atomic", e))?;
        Ok(endpoint.writes_posted())
    }

    /// Whether the write whose [`Network::put_nbi`] returned `target` has completed.
    ///
    /// Why not the counter against `target`: the endpoint counts completed writes of every
    /// queue of the PE, in any order, so a count reaching `target` may include later writes of
    /// another queue while this one is still in flight. Only a count that reached every write
    /// posted so far, read under the endpoint's lock (no write is posted meanwhile), says that
    /// each of them completed; that count is kept as the settled mark.
    pub(crate) fn writes_done(&self, target: u64) -> bool {
        target <= self.settled.load(Ordering::Acquire) || target <= self.settle_now()
    }

    /// Raises the settled mark to every write posted so far if all of them have completed,
    /// and returns the mark.
    pub(crate) fn settle_now(&self) -> u64 {
        let endpoint = self.endpoint();
        let posted = endpoint.writes_posted();
        if endpoint.writes_completed() >= posted {
            self.settled.fetch_max(posted, Ordering::AcqRel);
        }
        self.settled.load(Ordering::Acquire)
    }

    /// Waits until the write whose [`Network::put_nbi`] returned `target` has completed: until
    /// every write posted so far has (see [`Network::writes_done`] for why every one).
    pub(crate) fn wait_writes(&self, target: u64) -> Result<(), QueueError> {
        if target <= self.settled.load(Ordering::Acquire) {
            return Ok(());
        }
        let endpoint = self.endpoint();
        let posted = endpoint.writes_posted();
        endpoint
            .wait_writes(posted, &mut || {})
            .map_err(|e| QueueError::Lost(format!("a put or atomic over the network: {e}")))?;
        self.settled.fetch_max(posted, Ordering::AcqRel);
        Ok(())
    }

    /// Gets `src` into `out`.
    pub(crate) fn get(&self, src: RemoteRange, out: &mut [u8]) -> Result<(), QueueError> {
        self.endpoint()
            .get(self.place(src), out, &mut || {})
            .map_err(|e| self.lost(src.pe, "a get", e))
    }

    /// Applies `op` to the word `dst` as one fetching atomic, and returns the word's old
    /// value.
    pub(crate) fn amo(&self, dst: RemoteRange, op: AmoOp) -> Result<u64, QueueError> {
        self.fetch_atomic(self.place(dst), op)
            .map_err(|e| self.lost(dst.pe, "an atomic", e))
    }
}

impl Network {
    /// A failed network operation (`what`, to `peer`): the run cannot go on.
    fn lost(&self, peer: Pe, what: &str, e: OfiError) -> QueueError {
        let node = self.nodes[peer.idx()];
        QueueError::Lost(format!(
            "{what} to {peer} (on node {node}) over the network: {e}"
        ))
    }
}

/// How long a PE that leaves waits for its posted operations to be delivered.
const PATIENCE_AT_EXIT: Duration = Duration::from_secs(10);

impl Drop for Network {
    /// Delivers what this PE posted before its endpoint closes: the last signal of a
    /// barrier, say, which the PE did not wait for before it left and a peer still waits
    /// for. A peer that is gone fails it at once; one that never answers is given up after
    /// [`PATIENCE_AT_EXIT`].
    fn drop(&mut self) {
        {
            let endpoint = self.endpoint();
            endpoint.set_patience(PATIENCE_AT_EXIT);
            if let Err(e) = endpoint.quiet(&mut || {}) {
                tracing::warn!("posted operations not delivered as the PE left: {e}");
            }
        }
        self.stop.store(true, Ordering::Relaxed);
        if let Some(progress) = self.progress.take() {
            let _ = progress.join();
        }
    }
}

/// libfabric's operation for `op`, and the value to compare with for a compare-and-swap.
fn atomic_of(op: AmoOp) -> (AtomicOp, Option<u64>) {
    match op.kind {
        AmoKind::Fetch => (AtomicOp::Read, None),
        AmoKind::Set | AmoKind::Swap => (AtomicOp::Write, None),
        AmoKind::CompareSwap { compare } => (AtomicOp::Write, Some(compare)),
        AmoKind::Add => (AtomicOp::Sum, None),
        AmoKind::And => (AtomicOp::And, None),
        AmoKind::Or => (AtomicOp::Or, None),
        AmoKind::Xor => (AtomicOp::Xor, None),
    }
}

/// libfabric's width for `op`.
fn width_of(op: AmoOp) -> AtomicWidth {
    match op.width {
        AmoWidth::W32 => AtomicWidth::U32,
        AmoWidth::W64 => AtomicWidth::U64,
    }
}

/// Moves `endpoint` once, unless a thread is in it already (a PE in an operation moves it
/// itself).
fn progress_once(endpoint: &Mutex<Endpoint>) {
    if let Ok(endpoint) = endpoint.try_lock() {
        progress_locked(&endpoint);
    }
}

/// What the progress thread does after a step.
enum Next {
    /// The thread polls, or the endpoint has more to move already: step again.
    Again,
    /// Wait for the endpoint's descriptor to become readable.
    WaitFor(std::ffi::c_int),
    /// The provider has no descriptor: sleep.
    Sleep,
}

/// Moves `endpoint` once, after the thread in it (if any) leaves: the progress thread's step.
/// Why it blocks where a waiter tries: while a PE's operation holds the endpoint and moves it
/// itself, a progress thread that only tried would stay runnable, and on a node with as many
/// cores as threads that poll it took their time (the polling thread's puts, gets and
/// fetch-adds went from 1.1-1.7 to 0.8-1.6 times raw libfabric, BENCHMARKS.md).
/// A thread that `polls` steps again at once; one that waits asks the endpoint how.
fn progress_after_others(endpoint: &Mutex<Endpoint>, polls: bool) -> Next {
    let endpoint = endpoint.lock().unwrap_or_else(|e| e.into_inner());
    progress_locked(&endpoint);
    match endpoint.wait_fd() {
        _ if polls => Next::Again,
        None => Next::Sleep,
        Some(fd) if endpoint.may_wait() => Next::WaitFor(fd),
        Some(_) => Next::Again,
    }
}

/// Waits until `fd` is readable or `timeout` has passed.
fn wait_readable(fd: std::ffi::c_int, timeout: Duration) {
    let mut poll_fd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let timeout = libc::timespec {
        tv_sec: 0,
        tv_nsec: timeout.as_nanos().min(999_999_999) as libc::c_long,
    };
    // SAFETY: ppoll of one descriptor that lives as long as the endpoint, which outlives
    // this thread.
    unsafe { libc::ppoll(&mut poll_fd, 1, &timeout, std::ptr::null()) };
}

fn progress_locked(endpoint: &Endpoint) {
    if let Err(e) = endpoint.progress() {
        tracing::warn!("network progress: {e}");
    }
}

fn encode(key: RemoteKey) -> [u8; NETWORK_KEY_BYTES] {
    let mut bytes = [0u8; NETWORK_KEY_BYTES];
    bytes[..8].copy_from_slice(&key.key.to_le_bytes());
    bytes[8..].copy_from_slice(&key.base.to_le_bytes());
    bytes
}

fn decode(bytes: &[u8; NETWORK_KEY_BYTES]) -> RemoteKey {
    let (key, base) = bytes.split_at(8);
    RemoteKey {
        key: u64::from_le_bytes(key.try_into().expect("8 bytes")),
        base: u64::from_le_bytes(base.try_into().expect("8 bytes")),
    }
}

#[cfg(test)]
mod tests {
    use super::{Duration, RemoteKey, decode, encode, progress_period_of};

    /// The progress thread's period is µs, or the default when unset; anything else is an
    /// error naming the variable.
    #[test]
    fn the_progress_period_is_read_strictly() {
        let default = Duration::from_micros(20);
        assert_eq!(progress_period_of(None, default), Ok(default));
        assert_eq!(progress_period_of(Some("0"), default), Ok(Duration::ZERO));
        assert_eq!(
            progress_period_of(Some(" 5 "), Duration::ZERO),
            Ok(Duration::from_micros(5))
        );
        let err = progress_period_of(Some("5us"), default).expect_err("not a count");
        assert!(err.contains("RSHMEM_OFI_PROGRESS_US=5us"), "{err}");
    }

    /// A segment's network key survives the trip inside its segment key.
    #[test]
    fn network_keys_round_trip() {
        let key = RemoteKey {
            key: 0x0123_4567_89ab_cdef,
            base: 0x7f00_0000_1000,
        };
        assert_eq!(decode(&encode(key)), key);
    }
}
