//! Remote atomic memory operations on one element of a symmetric array.
//!
//! Every operation goes through one of three helpers: `amo_fetch` (issue, wait for the ticket,
//! return the old value), `amo_fetch_nbi` (issue; the old value lands in a local word at
//! quiet, see `amo_nbi.rs`) and `amo_post` (issue and return; complete at the next quiet).

use hw::{AmoKind, AmoOp, Backend, Queue, RemoteRange, Ticket};

use crate::TRACING_TARGET;
use crate::ctx::Ctx;
use crate::error::ShmemError;
use crate::memory::sym::{AtomicElement, Sym};
use crate::pe::word_access;

/// Generates an atomic that fetches, `$name(target, [operands,] pe) -> T`, and its
/// non-blocking form `$nbi(fetch, target, [operands,] pe)`, both doing `$kind` with
/// `$operand`.
macro_rules! fetching {
    ($(#[$doc:meta])* $name:ident, $nbi:ident($($arg:ident),*) => $kind:expr, $operand:expr) => {
        $(#[$doc])*
        ///
        /// # Ordering
        /// The update is ordered by [`Ctx::fence`] like a put; with NVSHMEM semantics the
        /// fetched value is unordered with other fetching operations unless a fence separates
        /// them (docs/ordering.md).
        ///
        /// # Errors
        /// [`ShmemError::LengthMismatch`] unless `target` is one element;
        /// [`ShmemError::PeOutOfRange`]; an address error ([`ShmemError::NotInHeap`],
        /// `OutsideAllocation`, `Misaligned`, `FreedAllocation`); [`ShmemError::Queue`] if
        /// the value does not arrive within `RSHMEM_WAIT_TIMEOUT_MS`.
        pub fn $name<T: AtomicElement>(&self, target: Sym<T>, $($arg: T,)* pe: u32)
            -> Result<T, ShmemError>
        {
            self.amo_fetch(target, $kind, $operand, pe)
        }

        #[doc = concat!(
            "Non-blocking [`Ctx::", stringify!($name), "`] (`shmem_", stringify!($nbi), "`): \
             returns once issued, and the old value is in this PE's word `fetch` after the \
             next [`Ctx::quiet`] (or barrier_all) on this context. `fetch` must stay \
             allocated until then."
        )]
        ///
        /// # Ordering
        /// The update is ordered by [`Ctx::fence`] like a put; the fetched value is not:
        /// only quiet completes it (docs/ordering.md).
        ///
        /// # Errors
        /// [`ShmemError::LengthMismatch`] unless `fetch` and `target` are one element each;
        /// [`ShmemError::PeOutOfRange`]; an address error for either
        /// ([`ShmemError::NotInHeap`], `OutsideAllocation`, `Misaligned`,
        /// `FreedAllocation`); [`ShmemError::StoreOnNostoreContext`] for an update on a
        /// NOSTORE context; [`ShmemError::Queue`] if the queue was lost.
        pub fn $nbi<T: AtomicElement>(
            &self,
            fetch: Sym<T>,
            target: Sym<T>,
            $($arg: T,)*
            pe: u32,
        ) -> Result<(), ShmemError> {
            self.amo_fetch_nbi(fetch, target, $kind, $operand, pe)
        }
    };
}

/// Generates atomics that do not fetch: `$name(target, [operand,] pe)` doing `$kind` with
/// `$operand`.
macro_rules! posting {
    ($(#[$doc:meta])* $name:ident($($arg:ident),*) => $kind:expr, $operand:expr) => {
        $(#[$doc])*
        /// Returns once issued; the update completes at the next [`Ctx::quiet`].
        ///
        /// # Ordering
        /// Ordered by [`Ctx::fence`] like a put (docs/ordering.md).
        ///
        /// # Errors
        /// [`ShmemError::LengthMismatch`] unless `target` is one element;
        /// [`ShmemError::PeOutOfRange`]; an address error ([`ShmemError::NotInHeap`],
        /// `OutsideAllocation`, `Misaligned`, `FreedAllocation`); [`ShmemError::Queue`] if
        /// the queue was lost.
        pub fn $name<T: AtomicElement>(&self, target: Sym<T>, $($arg: T,)* pe: u32)
            -> Result<(), ShmemError>
        {
            self.amo_post(target, $kind, $operand, pe)
        }
    };
}

impl<B: Backend> Ctx<B> {
    fetching! {
        /// Atomically reads `target` on PE `pe`.
        atomic_fetch, atomic_fetch_nbi() => AmoKind::Fetch, T::from_bits(0)
    }
    posting! {
        /// Atomically writes `value` to `target` on PE `pe`.
        atomic_set(value) => AmoKind::Set, value
    }
    fetching! {
        /// Atomically writes `value` to `target` on PE `pe` and returns the old value.
        atomic_swap, atomic_swap_nbi(value) => AmoKind::Swap, value
    }
    fetching! {
        /// Atomically writes `value` to `target` on PE `pe` if it equals `cond`, and returns
        /// the old value (equal to `cond` exactly when the swap happened).
        atomic_compare_swap, atomic_compare_swap_nbi(cond, value) => AmoKind::CompareSwap { compare: cond.to_bits() }, value
    }
    fetching! {
        /// Atomically adds `value` (wrapping) to `target` on PE `pe` and returns the old value.
        atomic_fetch_add, atomic_fetch_add_nbi(value) => AmoKind::Add, value
    }
    posting! {
        /// Atomically adds `value` (wrapping) to `target` on PE `pe`.
        atomic_add(value) => AmoKind::Add, value
    }
    fetching! {
        /// Atomically adds one (wrapping) to `target` on PE `pe` and returns the old value.
        atomic_fetch_inc, atomic_fetch_inc_nbi() => AmoKind::Add, T::from_bits(1)
    }
    posting! {
        /// Atomically adds one (wrapping) to `target` on PE `pe`.
        atomic_inc() => AmoKind::Add, T::from_bits(1)
    }
    fetching! {
        /// Atomically ands `value` into `target` on PE `pe` and returns the old value.
        atomic_fetch_and, atomic_fetch_and_nbi(value) => AmoKind::And, value
    }
    posting! {
        /// Atomically ands `value` into `target` on PE `pe`.
        atomic_and(value) => AmoKind::And, value
    }
    fetching! {
        /// Atomically ors `value` into `target` on PE `pe` and returns the old value.
        atomic_fetch_or, atomic_fetch_or_nbi(value) => AmoKind::Or, value
    }
    posting! {
        /// Atomically ors `value` into `target` on PE `pe`.
        atomic_or(value) => AmoKind::Or, value
    }
    fetching! {
        /// Atomically xors `value` into `target` on PE `pe` and returns the old value.
        atomic_fetch_xor, atomic_fetch_xor_nbi(value) => AmoKind::Xor, value
    }
    posting! {
        /// Atomically xors `value` into `target` on PE `pe`.
        atomic_xor(value) => AmoKind::Xor, value
    }

    /// Performs `kind` with `operand` on `target` at `pe`, waits, and returns the old value.
    fn amo_fetch<T: AtomicElement>(
        &self,
        target: Sym<T>,
        kind: AmoKind,
        operand: T,
        pe: u32,
    ) -> Result<T, ShmemError> {
        let (range, op) = self.amo_checked(target, kind, operand, pe, true)?;
        // A backend that completes atomics at issue returns the value here, with no ticket.
        if let Some(old) = self.queue.amo_now(range, op)? {
            return Ok(T::from_bits(old));
        }
        let ticket = self.queue.amo(range, op, true)?;
        self.queue.wait_ticket(ticket, self.deadline())?;
        Ok(T::from_bits(self.take_fetched_word(ticket)))
    }

    /// The old value a completed fetching atomic read.
    pub(crate) fn take_fetched_word(&self, ticket: Ticket) -> u64 {
        let fetched = self.queue.take_fetched(ticket);
        let word: [u8; 8] = fetched.as_slice().try_into().unwrap_or_else(|_| {
            panic!(
                "backend contract violation: a fetching atomic returned {} bytes, not 8",
                fetched.len()
            )
        });
        u64::from_le_bytes(word)
    }

    /// Performs `kind` with `operand` on `target` at `pe` without waiting for it.
    fn amo_post<T: AtomicElement>(
        &self,
        target: Sym<T>,
        kind: AmoKind,
        operand: T,
        pe: u32,
    ) -> Result<(), ShmemError> {
        let (range, op) = self.amo_checked(target, kind, operand, pe, false)?;
        self.queue.amo(range, op, false)?;
        Ok(())
    }

    /// Checks `target` and `pe`: the word's range and the backend's op, to issue.
    pub(crate) fn amo_checked<T: AtomicElement>(
        &self,
        target: Sym<T>,
        kind: AmoKind,
        operand: T,
        pe: u32,
        fetch: bool,
    ) -> Result<(RemoteRange, AmoOp), ShmemError> {
        let access = word_access(target)?;
        let range = if kind == AmoKind::Fetch {
            self.read_range(access, pe)?
        } else {
            self.store_range(access, pe, "atomic update")?
        };
        let op = AmoOp {
            kind,
            operand: operand.to_bits(),
            width: T::WIDTH,
        };
        tracing::trace!(
            target: TRACING_TARGET,
            pe = self.my_pe,
            peer = pe,
            op = ?kind,
            offset = range.offset,
            fetch
        );
        Ok((range, op))
    }
}
