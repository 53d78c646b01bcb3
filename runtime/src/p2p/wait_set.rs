//! Point-to-point synchronisation on many words at once (OpenSHMEM 1.5 §9.10):
//! `wait_until_all/any/some`, `test_all/any/some`, and their `_vector` forms with one
//! comparison value per element.
//!
//! Each call first turns its arguments into a [`WaitSet`]: one [`hw::WaitSpec`] per element
//! that its `status` mask does not exclude. Then:
//! - *all* waits on each word in turn. A word that held stays counted even if it changes
//!   later, as in the reference implementations; every word has held by the time it returns.
//! - *some* blocks in [`hw::Device::wait_until_any`], which wakes on whichever word holds
//!   first, then tests the other words once and returns every index that held. Looping over
//!   `test` instead would keep a simulated PE running, so the world could neither advance to
//!   the peer's update nor see a deadlock.
//! - *any* waits or tests as *some*, then picks one of the indices that held, taking turns
//!   ([`Ctx::next_any`]) so that every entry that holds is eventually returned.
//! - the tests look at each word once.

use hw::{Backend, Cmp, Device, LocalRange, WaitSpec};

use crate::TRACING_TARGET;
use crate::ctx::Ctx;
use crate::error::ShmemError;
use crate::memory::allocator::Access;
use crate::memory::sym::{AtomicElement, Sym};
use crate::p2p::wait::word_spec;
use crate::pe::same_len;

/// What each element is compared against.
#[derive(Clone, Copy, Debug)]
enum Values<'a, T> {
    /// One value for every element.
    Same(T),
    /// One value per element (the `_vector` forms).
    Each(&'a [T]),
}

/// The words a call waits on or tests: `specs[k]` is element `indices[k]`.
#[derive(Debug)]
struct WaitSet {
    specs: Vec<WaitSpec>,
    indices: Vec<usize>,
}

/// Generates one operation on a set of words and its `_vector` form; `$how` is the
/// [`WaitSet`] method that does the work and `$ret` what it returns.
macro_rules! wait_set_ops {
    ($(
        $(#[$doc:meta])*
        $name:ident, $vector:ident => $how:ident -> $ret:ty;
    )*) => {$(
        $(#[$doc])*
        ///
        /// `status`, if given, has one entry per element of `ivars`; elements whose entry is
        /// nonzero are left out.
        ///
        /// # Ordering
        /// As [`Ctx::wait_until`] for each word found to hold: the update that satisfied it
        /// is complete, and every update delivered to this PE is visible to it.
        ///
        /// # Errors
        /// [`ShmemError::LengthMismatch`] if `status` differs in length from `ivars`; an
        /// address error for `ivars` ([`ShmemError::NotInHeap`], `OutsideAllocation`,
        /// `Misaligned`, `FreedAllocation`); for the waits, [`ShmemError::Queue`] if nothing
        /// satisfies them within `RSHMEM_WAIT_TIMEOUT_MS` or no PE can make progress (the
        /// report names every word waited on).
        pub fn $name<T: AtomicElement>(
            &self,
            ivars: Sym<T>,
            status: Option<&[i32]>,
            cmp: Cmp,
            value: T,
        ) -> Result<$ret, ShmemError> {
            let set = self.wait_set(ivars, status, cmp, Values::Same(value), stringify!($name))?;
            set.$how(self)
        }

        #[doc = concat!(
            "[`Ctx::", stringify!($name), "`] with one value per element (`shmem_",
            stringify!($vector), "`): element `i` is compared as `ivars[i] cmp values[i]`."
        )]
        ///
        /// # Ordering
        #[doc = concat!("As [`Ctx::", stringify!($name), "`].")]
        ///
        /// # Errors
        #[doc = concat!(
            "As [`Ctx::", stringify!($name), "`]; [`ShmemError::LengthMismatch`] if `values` \
             differs in length from `ivars`."
        )]
        pub fn $vector<T: AtomicElement>(
            &self,
            ivars: Sym<T>,
            status: Option<&[i32]>,
            cmp: Cmp,
            values: &[T],
        ) -> Result<$ret, ShmemError> {
            let set =
                self.wait_set(ivars, status, cmp, Values::Each(values), stringify!($vector))?;
            set.$how(self)
        }
    )*};
}

impl<B: Backend> Ctx<B> {
    wait_set_ops! {
        /// Blocks until every element of this PE's `ivars` satisfies `ivars[i] cmp value`
        /// (`shmem_wait_until_all`). Returns at once when every element is left out.
        wait_until_all, wait_until_all_vector => wait_all -> ();

        /// Blocks until some element of this PE's `ivars` satisfies `ivars[i] cmp value`, and
        /// returns its index (`shmem_wait_until_any`); when several hold, the context takes
        /// turns among them, so that each is eventually returned. `None` at once when every element is left out (OpenSHMEM's
        /// `SIZE_MAX`).
        wait_until_any, wait_until_any_vector => wait_any -> Option<usize>;

        /// Blocks until at least one element of this PE's `ivars` satisfies
        /// `ivars[i] cmp value`, and returns the indices of all that do, in increasing order
        /// (`shmem_wait_until_some`). Empty at once when every element is left out.
        wait_until_some, wait_until_some_vector => wait_some -> Vec<usize>;

        /// Tests once whether every element of this PE's `ivars` satisfies
        /// `ivars[i] cmp value` (`shmem_test_all`); true when every element is left out.
        test_all, test_all_vector => test_all -> bool;

        /// Tests each element of this PE's `ivars` once and returns the index of one that
        /// satisfies `ivars[i] cmp value` (`shmem_test_any`), taking turns as
        /// [`Ctx::wait_until_any`] does, or `None`.
        test_any, test_any_vector => test_any -> Option<usize>;

        /// Tests each element of this PE's `ivars` once and returns the indices of those
        /// that satisfy `ivars[i] cmp value`, in increasing order (`shmem_test_some`).
        test_some, test_some_vector => test_some -> Vec<usize>;
    }

    /// Checks the arguments of a call on `ivars` and returns the words it waits on.
    fn wait_set<T: AtomicElement>(
        &self,
        ivars: Sym<T>,
        status: Option<&[i32]>,
        cmp: Cmp,
        values: Values<'_, T>,
        purpose: &'static str,
    ) -> Result<WaitSet, ShmemError> {
        if let Some(status) = status {
            same_len(ivars.len(), status.len())?;
        }
        if let Values::Each(values) = values {
            same_len(ivars.len(), values.len())?;
        }
        let width_bytes = T::WIDTH.bytes();
        let all = self.local_range(Access {
            align: width_bytes,
            ..ivars.access()
        })?;
        tracing::trace!(
            target: TRACING_TARGET,
            pe = self.my_pe,
            op = purpose,
            offset = all.offset,
            words = ivars.len(),
            cmp = cmp.symbol()
        );
        let included = |i: &usize| status.is_none_or(|status| status[*i] == 0);
        let indices: Vec<usize> = (0..ivars.len()).filter(included).collect();
        let specs = indices
            .iter()
            .map(|&i| {
                let word = LocalRange {
                    offset: all.offset + i as u64 * width_bytes,
                    len: width_bytes,
                    ..all
                };
                let value = match values {
                    Values::Same(value) => value,
                    Values::Each(values) => values[i],
                };
                word_spec(word, cmp, value, purpose)
            })
            .collect();
        Ok(WaitSet { specs, indices })
    }
}

impl<B: Backend> Ctx<B> {
    /// Of the indices `held` (increasing), the one an `_any` call returns: the first at or
    /// after this context's turn, else the first; the turn then moves past it. Why: "if an
    /// entry i satisfies the condition, a series of calls must eventually return i"
    /// (OpenSHMEM 1.5 section 9.10, shmem_wait_until_any and shmem_test_any), which always
    /// answering the lowest index breaks for a program that polls with every entry left in.
    pub(crate) fn next_any(&self, held: &[usize]) -> Option<usize> {
        let turn = self.any_turn.get();
        let next = held
            .iter()
            .find(|&&i| i >= turn)
            .or(held.first())
            .copied()?;
        self.any_turn.set(next + 1);
        Some(next)
    }
}

impl WaitSet {
    fn wait_all<B: Backend>(&self, ctx: &Ctx<B>) -> Result<(), ShmemError> {
        let deadline = ctx.deadline();
        for &spec in &self.specs {
            ctx.device.wait_until(spec, deadline)?;
        }
        Ok(())
    }

    fn wait_any<B: Backend>(&self, ctx: &Ctx<B>) -> Result<Option<usize>, ShmemError> {
        let held = self.wait_some(ctx)?;
        Ok(ctx.next_any(&held))
    }

    fn wait_some<B: Backend>(&self, ctx: &Ctx<B>) -> Result<Vec<usize>, ShmemError> {
        if self.specs.is_empty() {
            return Ok(Vec::new());
        }
        let (k, _) = ctx.device.wait_until_any(&self.specs, ctx.deadline())?;
        let found = self.indices[k];
        // Why `found` without a test: it held, and a later change must not drop it.
        Ok(self
            .indices
            .iter()
            .zip(&self.specs)
            .filter(|&(&i, &spec)| i == found || ctx.device.test(spec).is_some())
            .map(|(&i, _)| i)
            .collect())
    }

    fn test_all<B: Backend>(&self, ctx: &Ctx<B>) -> Result<bool, ShmemError> {
        Ok(self
            .specs
            .iter()
            .all(|&spec| ctx.device.test(spec).is_some()))
    }

    fn test_any<B: Backend>(&self, ctx: &Ctx<B>) -> Result<Option<usize>, ShmemError> {
        let held = self.test_some(ctx)?;
        Ok(ctx.next_any(&held))
    }

    fn test_some<B: Backend>(&self, ctx: &Ctx<B>) -> Result<Vec<usize>, ShmemError> {
        Ok(self
            .indices
            .iter()
            .zip(&self.specs)
            .filter(|&(_, &spec)| ctx.device.test(spec).is_some())
            .map(|(&i, _)| i)
            .collect())
    }
}
