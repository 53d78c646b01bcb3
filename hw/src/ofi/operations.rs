//! The one-sided operations on an [`Endpoint`]: put, get and atomics on memory a peer
//! registered, and quiet.
//!
//! Why operations copy their source and wait for their results: a provider may read a
//! source buffer until the operation completes, so a put keeps its own copy until quiet says
//! it completed; a get or a fetching atomic returns only once its data is here. Completion is
//! delivery to the target (`FI_DELIVERY_COMPLETE`) where the provider offers it.
//!
//! A provider with manual progress (`tcp;ofi_rxm`) moves data only while someone calls into
//! the endpoints at both ends: every wait here reads this endpoint's queue and counters, and
//! calls `progress_peers` so that a caller with both ends in one thread (the tests) moves the
//! other end; a process of a job will have a progress thread instead.

use std::ffi::{c_int, c_void};
use std::ptr::null_mut;
use std::time::Instant;

use super::OfiError;
use super::abi;
use super::endpoint::{Endpoint, RemoteKey, check};

/// Where an operation acts: a byte offset into a region a peer registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// The peer, its index in [`Endpoint::insert_peers`]'s list.
    pub peer: u64,
    /// The peer's region.
    pub key: RemoteKey,
    /// The offset into it, in bytes.
    pub offset: u64,
}

impl Place {
    /// The address the provider takes for it.
    fn address(self) -> u64 {
        self.key.base + self.offset
    }
}

/// An atomic operation on a 32- or 64-bit integer of a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    /// Add.
    Sum,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise exclusive or.
    Xor,
    /// Replace (with a fetch: swap).
    Write,
    /// Read (fetching only).
    Read,
}

impl AtomicOp {
    fn code(self) -> c_int {
        match self {
            AtomicOp::Sum => abi::FI_SUM,
            AtomicOp::And => abi::FI_BAND,
            AtomicOp::Or => abi::FI_BOR,
            AtomicOp::Xor => abi::FI_BXOR,
            AtomicOp::Write => abi::FI_ATOMIC_WRITE,
            AtomicOp::Read => abi::FI_ATOMIC_READ,
        }
    }
}

/// The integer an atomic works on: unsigned, as every operation here wraps alike on both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicWidth {
    /// `uint32_t`.
    U32,
    /// `uint64_t`.
    U64,
}

impl AtomicWidth {
    fn code(self) -> c_int {
        match self {
            AtomicWidth::U32 => abi::FI_UINT32,
            AtomicWidth::U64 => abi::FI_UINT64,
        }
    }

    fn bytes(self) -> usize {
        match self {
            AtomicWidth::U32 => 4,
            AtomicWidth::U64 => 8,
        }
    }
}

/// The most sources of unfinished writes an endpoint keeps before it waits for them.
const MAX_KEPT_SOURCES: usize = 4096;

impl Endpoint {
    /// Posts one operation through `post`, retrying while the provider's queue is full.
    fn post(
        &self,
        what: &'static str,
        progress_peers: &mut dyn FnMut(),
        mut post: impl FnMut() -> isize,
    ) -> Result<(), OfiError> {
        let started = Instant::now();
        loop {
            let code = post();
            if code == 0 {
                return Ok(());
            }
            if code != -abi::FI_EAGAIN {
                return check(what, c_int::try_from(code).unwrap_or(c_int::MIN), self.api);
            }
            self.progress()?;
            progress_peers();
            self.within_patience(started)?;
        }
    }

    /// [`OfiError::Stalled`] once this endpoint's patience has passed since `started`.
    fn within_patience(&self, started: Instant) -> Result<(), OfiError> {
        let waited = started.elapsed();
        if waited <= self.patience.get() {
            return Ok(());
        }
        Err(OfiError::Stalled {
            provider: self.provider().to_owned(),
            waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
        })
    }

    /// Posts a write or an atomic without a result from `source`, a copy this endpoint keeps
    /// until the operation completes (seen by [`Endpoint::quiet`] or [`Endpoint::progress`]);
    /// `post` gets its address and length. With [`MAX_KEPT_SOURCES`] copies kept already, it
    /// first waits for every earlier write, so that a program that never quiets holds a
    /// bounded number of them.
    fn post_write(
        &self,
        what: &'static str,
        progress_peers: &mut dyn FnMut(),
        source: Vec<u8>,
        mut post: impl FnMut(*const c_void, usize) -> isize,
    ) -> Result<(), OfiError> {
        if self.sources.borrow().in_flight() >= MAX_KEPT_SOURCES {
            self.quiet(progress_peers)?;
        }
        let (address, len) = (source.as_ptr().cast::<c_void>(), source.len());
        self.post(what, progress_peers, || post(address, len))?;
        self.writes_posted.set(self.writes_posted.get() + 1);
        self.sources.borrow_mut().keep(source);
        Ok(())
    }

    /// How many puts and atomics without a result this endpoint has posted.
    pub fn writes_posted(&self) -> u64 {
        self.writes_posted.get()
    }

    /// How many of them have completed at their targets (in any order: a count reaching `n`
    /// says `n` completed, not which).
    pub fn writes_completed(&self) -> u64 {
        // SAFETY: fi_cntr_read of an open counter.
        unsafe { ((*(*self.writes).ops).read)(self.writes) }
    }

    /// Waits until `target` puts and atomics without a result have completed: with
    /// `target` at [`Endpoint::writes_posted`] just after a write, until it and every write
    /// before it completed.
    ///
    /// # Errors
    /// [`OfiError::Failed`] if one failed; [`OfiError::Stalled`] past the patience.
    pub fn wait_writes(
        &self,
        target: u64,
        progress_peers: &mut dyn FnMut(),
    ) -> Result<(), OfiError> {
        self.wait_count(self.writes, target, progress_peers)?;
        self.retire_sources();
        Ok(())
    }

    /// Drops the kept sources once every write posted has completed.
    pub(super) fn retire_sources(&self) {
        if self.writes_completed() >= self.writes_posted.get() {
            self.sources.borrow_mut().retire_all();
        }
    }

    /// Waits until the counter `counter` reaches `target`, moving this endpoint and, through
    /// `progress_peers`, the caller's others.
    fn wait_count(
        &self,
        counter: *mut abi::Cntr,
        target: u64,
        progress_peers: &mut dyn FnMut(),
    ) -> Result<(), OfiError> {
        let started = Instant::now();
        // SAFETY: fi_cntr_read of an open counter.
        while unsafe { ((*(*counter).ops).read)(counter) } < target {
            self.progress()?;
            progress_peers();
            self.within_patience(started)?;
            std::hint::spin_loop();
        }
        Ok(())
    }

    /// Puts `data` at `at`; complete after
    /// [`Endpoint::quiet`].
    ///
    /// # Errors
    /// [`OfiError::Call`] if the provider refuses it.
    pub fn put(
        &self,
        at: Place,
        data: &[u8],
        progress_peers: &mut dyn FnMut(),
    ) -> Result<(), OfiError> {
        let source = self.sources.borrow_mut().copy_of(data);
        self.post_write(
            "fi_write",
            progress_peers,
            source,
            // SAFETY: from the source's copy, which `post_write` keeps until quiet sees it
            // complete.
            |source, len| unsafe { self.write(at, source, len) },
        )
    }

    /// Puts `data` at `at` from `data` itself, without a copy, and waits until it and every
    /// put and atomic before it completed at its target (as [`Endpoint::quiet`]).
    ///
    /// # Errors
    /// [`OfiError::Call`] if the provider refuses it; [`OfiError::Failed`] if one failed.
    pub fn put_delivered(
        &self,
        at: Place,
        data: &[u8],
        progress_peers: &mut dyn FnMut(),
    ) -> Result<(), OfiError> {
        let (source, len) = (data.as_ptr().cast::<c_void>(), data.len());
        // SAFETY: from `data`, which this waits for (the quiet below) before returning.
        self.post("fi_write", progress_peers, || unsafe {
            self.write(at, source, len)
        })?;
        self.writes_posted.set(self.writes_posted.get() + 1);
        self.quiet(progress_peers)
    }

    /// `fi_write` of `len` bytes at `source` to `at`, posted once.
    ///
    /// # Safety
    /// `source` stays valid and unchanged for `len` bytes until the write completes.
    unsafe fn write(&self, at: Place, source: *const c_void, len: usize) -> isize {
        let ep = self.ep;
        // SAFETY: an open endpoint, a peer inserted in its address vector, and a source the
        // caller keeps.
        unsafe {
            ((*(*ep).rma).write)(
                ep,
                source.cast_mut(),
                len,
                null_mut(),
                at.peer,
                at.address(),
                at.key.key,
                null_mut(),
            )
        }
    }

    /// Gets `out.len()` bytes at `at`, and waits for them.
    ///
    /// # Errors
    /// [`OfiError::Call`] if the provider refuses it; [`OfiError::Failed`] if it fails.
    pub fn get(
        &self,
        at: Place,
        out: &mut [u8],
        progress_peers: &mut dyn FnMut(),
    ) -> Result<(), OfiError> {
        let ep = self.ep;
        let (buffer, len) = (out.as_mut_ptr(), out.len());
        // SAFETY: fi_read into `out`, which this waits for before returning.
        self.post("fi_read", progress_peers, || unsafe {
            ((*(*ep).rma).read)(
                ep,
                buffer.cast(),
                len,
                null_mut(),
                at.peer,
                at.address(),
                at.key.key,
                null_mut(),
            )
        })?;
        self.reads_posted.set(self.reads_posted.get() + 1);
        self.wait_count(self.reads, self.reads_posted.get(), progress_peers)
    }

    /// Applies `op` with `operand` (its low `width` bytes) to the integer at `at`; complete
    /// after [`Endpoint::quiet`].
    ///
    /// # Errors
    /// [`OfiError::Call`] if the provider refuses it (an operation it does not offer).
    pub fn atomic(
        &self,
        at: Place,
        (op, width): (AtomicOp, AtomicWidth),
        operand: u64,
        progress_peers: &mut dyn FnMut(),
    ) -> Result<(), OfiError> {
        let source = self
            .sources
            .borrow_mut()
            .copy_of(&operand.to_le_bytes()[..width.bytes()]);
        let ep = self.ep;
        // SAFETY: fi_atomic of one element from the source's copy, kept until quiet.
        self.post_write("fi_atomic", progress_peers, source, |source, _| unsafe {
            ((*(*ep).atomic).write)(
                ep,
                source,
                1,
                null_mut(),
                at.peer,
                at.address(),
                at.key.key,
                width.code(),
                op.code(),
                null_mut(),
            )
        })
    }

    /// Like [`Endpoint::atomic`], and returns the integer's value before it (zero-extended);
    /// with `compare`, a compare-and-swap that writes `operand` only where the value equals
    /// `compare`.
    ///
    /// # Errors
    /// As [`Endpoint::atomic`]; [`OfiError::Failed`] if it fails.
    pub fn fetch_atomic(
        &self,
        at: Place,
        (op, width): (AtomicOp, AtomicWidth),
        operand: u64,
        compare: Option<u64>,
        progress_peers: &mut dyn FnMut(),
    ) -> Result<u64, OfiError> {
        let source = operand.to_le_bytes();
        let expected = compare.unwrap_or(0).to_le_bytes();
        let mut result = [0u8; 8];
        let ep = self.ep;
        let result_ptr = result.as_mut_ptr();
        // SAFETY: fi_fetch_atomic or fi_compare_atomic of one element; `source`, `expected`
        // and `result` live until the wait below sees it complete.
        self.post("fi_fetch_atomic", progress_peers, || unsafe {
            let atomic = &*(*ep).atomic;
            match compare {
                None => (atomic.readwrite)(
                    ep,
                    source.as_ptr().cast(),
                    1,
                    null_mut(),
                    result_ptr.cast(),
                    null_mut(),
                    at.peer,
                    at.address(),
                    at.key.key,
                    width.code(),
                    op.code(),
                    null_mut(),
                ),
                Some(_) => (atomic.compwrite)(
                    ep,
                    source.as_ptr().cast(),
                    1,
                    null_mut(),
                    expected.as_ptr().cast(),
                    null_mut(),
                    result_ptr.cast(),
                    null_mut(),
                    at.peer,
                    at.address(),
                    at.key.key,
                    width.code(),
                    abi::FI_CSWAP,
                    null_mut(),
                ),
            }
        })?;
        self.reads_posted.set(self.reads_posted.get() + 1);
        self.wait_count(self.reads, self.reads_posted.get(), progress_peers)?;
        let mut value = [0u8; 8];
        value[..width.bytes()].copy_from_slice(&result[..width.bytes()]);
        Ok(u64::from_le_bytes(value))
    }

    /// Waits until every put and atomic posted so far completed at its target.
    ///
    /// # Errors
    /// [`OfiError::Failed`] if one failed.
    pub fn quiet(&self, progress_peers: &mut dyn FnMut()) -> Result<(), OfiError> {
        self.wait_writes(self.writes_posted.get(), progress_peers)
    }
}
