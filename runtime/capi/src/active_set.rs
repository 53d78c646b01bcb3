//! The deprecated active-set collectives of OpenSHMEM 1.0 to 1.4: `shmem_barrier`,
//! `shmem_sync`, `shmem_broadcast32/64`, `shmem_collect32/64`, `shmem_fcollect32/64`,
//! `shmem_alltoall32/64`, `shmem_alltoalls32/64` and `shmem_TYPENAME_OP_to_all` over
//! `to_all_types!`.
//!
//! Design choices:
//!
//! - **An active set is a team.** The set `(PE_start, logPE_stride, PE_size)` runs on a
//!   runtime team of exactly its PEs, so the team collectives (`collectives.rs`,
//!   `reductions.rs`) do the work and no algorithm exists twice. The set of every PE is the
//!   world team. Any other set gets its team the first time it is used, from
//!   `Shmem::team_create_strided`, which only the set's members call (as only they call an
//!   active-set collective) and which agrees on a team slot through the call's `pSync`; the
//!   team is then cached by `(start, stride, size)` in the PE's state for the life of the PE.
//! - **`pSync` is the agreement's scratch, once.** It must hold
//!   [`SHMEM_SYNC_VALUE`] (0) in every word when a set is first used, as the specification
//!   asks, and is left so; later calls of the set do not touch it. `pWrk` is not needed:
//!   reductions combine in the runtime's own memory.
//! - **Each set uses a team slot** (`RSHMEM_TEAMS_MAX`, at most 64 less the predefined
//!   teams) for as long as the process lives; a program that uses more distinct sets than
//!   there are slots fails with a message that says so.
//! - **The root's dest of `shmem_broadcast32/64` is not changed**, as OpenSHMEM 1.4 says
//!   (the team broadcast writes it): it is saved before and put back after.

use std::cell::UnsafeCell;
use std::ffi::{c_int, c_long};

use rshmem::{Element, TEAM_CREATE_SCRATCH_WORDS, Team};

use crate::collectives::{Strides, alltoall_on, broadcast_on, collect_on};
use crate::fail::CallError;
use crate::state::{Pe, with_pe};

/// `SHMEM_SYNC_VALUE`: what every word of a `pSync` array holds before its first use.
pub const SHMEM_SYNC_VALUE: c_long = 0;
/// The words of `pSync` an active-set collective uses: every `SHMEM_*_SYNC_SIZE` of
/// `shmem.h` is at least this.
pub const SYNC_WORDS_USED: usize = TEAM_CREATE_SCRATCH_WORDS;

/// An active set: the world PEs `start, start + stride, ...`, `size` of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ActiveSet {
    pub(crate) start: u32,
    pub(crate) stride: u32,
    pub(crate) size: u32,
}

impl ActiveSet {
    /// The set of the C arguments `(PE_start, logPE_stride, PE_size)` in a run of `n_pes`.
    ///
    /// # Errors
    /// [`CallError::Argument`] if a number is negative, the stride does not fit, the set is
    /// empty, or it reaches past the last PE.
    pub(crate) fn new(
        pe_start: c_int,
        log_pe_stride: c_int,
        pe_size: c_int,
        n_pes: u32,
    ) -> Result<ActiveSet, CallError> {
        let bad = |why: String| {
            Err(CallError::Argument(format!(
                "active set (PE_start {pe_start}, logPE_stride {log_pe_stride}, PE_size \
                 {pe_size}): {why}"
            )))
        };
        let (Ok(start), Ok(log), Ok(size)) = (
            u32::try_from(pe_start),
            u32::try_from(log_pe_stride),
            u32::try_from(pe_size),
        ) else {
            return bad("each number must be non-negative".to_owned());
        };
        if log >= 31 {
            return bad("logPE_stride must be below 31".to_owned());
        }
        if size == 0 {
            return bad("PE_size must be at least 1".to_owned());
        }
        let stride = 1u32 << log;
        let last = u64::from(start) + u64::from(size - 1) * u64::from(stride);
        if last >= u64::from(n_pes) {
            return bad(format!(
                "its last PE is {last}, but the run has {n_pes} PEs; shrink the set"
            ));
        }
        Ok(ActiveSet {
            start,
            stride,
            size,
        })
    }

    /// Whether the set is every PE of a run of `n_pes`, in order.
    pub(crate) fn is_world(self, n_pes: u32) -> bool {
        self.start == 0 && self.size == n_pes && (self.stride == 1 || self.size == 1)
    }

    /// The index in the set of world PE `pe`, if it is a member.
    pub(crate) fn index_of(self, pe: u32) -> Option<u32> {
        let offset = pe.checked_sub(self.start)?;
        (offset % self.stride == 0 && offset / self.stride < self.size)
            .then_some(offset / self.stride)
    }
}

/// The teams of the active sets a PE has used. Each PE has its own (`state::Pe`): a
/// simulated run has many PEs in one process, and a team belongs to the PE that made it.
#[derive(Default)]
pub(crate) struct ActiveSetTeams {
    teams: UnsafeCell<Vec<(ActiveSet, Team)>>,
}

/// The team of the active set of the C arguments, made (with `psync` as scratch) the first
/// time the set is used.
fn team_of(
    me: &Pe,
    (pe_start, log_pe_stride, pe_size): (c_int, c_int, c_int),
    psync: *mut c_long,
) -> Result<Team, CallError> {
    let set = ActiveSet::new(pe_start, log_pe_stride, pe_size, me.shmem.n_pes())?;
    if set.is_world(me.shmem.n_pes()) {
        return Ok(me.shmem.team_world().clone());
    }
    if set.index_of(me.shmem.my_pe()).is_none() {
        return Err(CallError::Argument(format!(
            "this PE is not in the active set {set:?}; only its members call an active-set \
             collective"
        )));
    }
    // SAFETY: the teams are only touched inside `with_pe`, whose calls never overlap: under
    // SHMEM_THREAD_MULTIPLE each holds the library's lock, and at the other thread levels the
    // program promises it (state.rs); no reference to them outlives this call.
    let teams = unsafe { &mut *me.active_sets.teams.get() };
    if let Some((_, team)) = teams.iter().find(|(known, _)| *known == set) {
        return Ok(team.clone());
    }
    let scratch = me.sym(psync.cast::<i64>().cast_const(), SYNC_WORDS_USED)?;
    let team = me
        .shmem
        .team_create_strided(set.start, set.stride, set.size, scratch)?;
    teams.push((set, team.clone()));
    Ok(team)
}

/// Runs `body` on the team of the active set `set` for the C call `call`.
pub(crate) fn on_set(
    call: &'static str,
    set: (c_int, c_int, c_int),
    psync: *mut c_long,
    body: impl FnOnce(&Pe, &Team) -> Result<(), CallError>,
) {
    with_pe(call, |me| body(me, &team_of(me, set, psync)?));
}

/// Completes this PE's operations and waits for every member of the active set.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_barrier(
    pe_start: c_int,
    log_pe_stride: c_int,
    pe_size: c_int,
    psync: *mut c_long,
) {
    on_set(
        "shmem_barrier",
        (pe_start, log_pe_stride, pe_size),
        psync,
        |me, team| {
            me.shmem.quiet()?;
            Ok(me.shmem.team_sync(team)?)
        },
    );
}

/// Waits for every member of the active set, completing nothing.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_sync(
    pe_start: c_int,
    log_pe_stride: c_int,
    pe_size: c_int,
    psync: *mut c_long,
) {
    on_set(
        "shmem_sync",
        (pe_start, log_pe_stride, pe_size),
        psync,
        |me, team| Ok(me.shmem.team_sync(team)?),
    );
}

/// Broadcasts over the set; the root's `dest` keeps what it held (OpenSHMEM 1.4).
///
/// # Safety
/// On the root, `dest` points to `nelems` readable and writable elements.
unsafe fn broadcast_keeping_root<T: Element>(
    me: &Pe,
    team: &Team,
    dest: *mut T,
    source: *const T,
    nelems: usize,
    root: c_int,
) -> Result<(), CallError> {
    let on_root = u32::try_from(root).is_ok_and(|root| team.my_pe().is_ok_and(|my| my == root));
    let kept: Vec<T> = if on_root && nelems > 0 {
        // SAFETY: the caller passes nelems readable elements at dest on the root.
        unsafe { std::slice::from_raw_parts(dest, nelems) }.to_vec()
    } else {
        Vec::new()
    };
    broadcast_on(me, team, dest, source, nelems, root)?;
    if !kept.is_empty() {
        // SAFETY: as above; the broadcast is complete on this PE.
        unsafe { std::ptr::copy_nonoverlapping(kept.as_ptr(), dest, nelems) };
    }
    Ok(())
}

/// The 32- or 64-bit active-set collectives, on elements of `$t`.
macro_rules! sized_collectives {
    ($t:ty, $bits:literal, $broadcast:ident, $collect:ident, $fcollect:ident, $alltoall:ident, $alltoalls:ident) => {
        #[doc = concat!("Broadcasts `nelems` ", $bits, "-bit elements from the set's PE `pe_root` to the others' `dest`.")]
        ///
        /// # Safety
        /// On the root, `dest` points to `nelems` readable and writable elements.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $broadcast(dest: *mut ::std::ffi::c_void, source: *const ::std::ffi::c_void, nelems: usize, pe_root: c_int, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long) {
            on_set(stringify!($broadcast), (pe_start, log_pe_stride, pe_size), psync, |me, team| {
                // SAFETY: the caller keeps this function's contract, which is the helper's.
                unsafe { broadcast_keeping_root(me, team, dest.cast::<$t>(), source.cast::<$t>(), nelems, pe_root) }
            });
        }

        #[doc = concat!("Concatenates every member's `nelems` ", $bits, "-bit elements (which may differ) into `dest`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $collect(dest: *mut ::std::ffi::c_void, source: *const ::std::ffi::c_void, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long) {
            on_set(stringify!($collect), (pe_start, log_pe_stride, pe_size), psync, |me, team| {
                collect_on(me, team, dest.cast::<$t>(), source.cast::<$t>(), nelems, false)
            });
        }

        #[doc = concat!("Concatenates every member's `nelems` ", $bits, "-bit elements (the same on all) into `dest`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $fcollect(dest: *mut ::std::ffi::c_void, source: *const ::std::ffi::c_void, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long) {
            on_set(stringify!($fcollect), (pe_start, log_pe_stride, pe_size), psync, |me, team| {
                collect_on(me, team, dest.cast::<$t>(), source.cast::<$t>(), nelems, true)
            });
        }

        #[doc = concat!("Sends block `j` of `nelems` ", $bits, "-bit elements to the set's PE `j`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $alltoall(dest: *mut ::std::ffi::c_void, source: *const ::std::ffi::c_void, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long) {
            on_set(stringify!($alltoall), (pe_start, log_pe_stride, pe_size), psync, |me, team| {
                alltoall_on(me, team, dest.cast::<$t>(), source.cast::<$t>(), nelems, Strides::Contiguous)
            });
        }

        #[doc = concat!("alltoall of `nelems` ", $bits, "-bit elements per block, `dst` and `sst` elements apart.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $alltoalls(dest: *mut ::std::ffi::c_void, source: *const ::std::ffi::c_void, dst: isize, sst: isize, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long) {
            on_set(stringify!($alltoalls), (pe_start, log_pe_stride, pe_size), psync, |me, team| {
                alltoall_on(me, team, dest.cast::<$t>(), source.cast::<$t>(), nelems, Strides::Strided { dst, sst })
            });
        }
    };
}

sized_collectives!(
    u32,
    "32",
    shmem_broadcast32,
    shmem_collect32,
    shmem_fcollect32,
    shmem_alltoall32,
    shmem_alltoalls32
);
sized_collectives!(
    u64,
    "64",
    shmem_broadcast64,
    shmem_collect64,
    shmem_fcollect64,
    shmem_alltoall64,
    shmem_alltoalls64
);

/// The exported `_to_all` reductions, one expansion per `to_all_types!` row.
pub mod exports {
    use std::ffi::{c_int, c_long};

    use rshmem::ops::{And, Max, Min, Or, Prod, Sum, Xor};

    use super::on_set;
    use crate::reductions::reduce_on;

    /// `shmem_$name_$op_to_all` of the row `$name` (scans have no active-set form).
    macro_rules! to_all {
        ($name:ident, $t:ty, @scans) => {};
        ($name:ident, $t:ty, $op:ident, $Op:ident) => {paste::paste! {
            #[doc = concat!("Deprecated: reduces `nreduce` `", stringify!($name), "` elements with ", stringify!($op), " over the active set; `p_wrk` is not used.")]
            #[unsafe(no_mangle)]
            pub extern "C" fn [<shmem_ $name _ $op _to_all>](
                dest: *mut $t,
                source: *const $t,
                nreduce: c_int,
                pe_start: c_int,
                log_pe_stride: c_int,
                pe_size: c_int,
                p_wrk: *mut $t,
                psync: *mut c_long,
            ) {
                let _ = p_wrk;
                let call = stringify!([<shmem_ $name _ $op _to_all>]);
                on_set(call, (pe_start, log_pe_stride, pe_size), psync, |me, team| {
                    let nreduce = usize::try_from(nreduce).map_err(|_| {
                        crate::fail::CallError::Argument(format!(
                            "nreduce is {nreduce}; pass a count of at least 0"
                        ))
                    })?;
                    reduce_on(me, team, $Op, dest, source, nreduce)
                });
            }
        }};
    }

    /// Every `_to_all` reduction of each row.
    macro_rules! to_all_reductions {
        ($(($name:ident, $t:ty, $c:literal, [$($group:ident),*])),* $(,)?) => {$(
            crate::reduce_groups!(to_all, $name, $t, [$($group),*]);
        )*};
    }

    crate::to_all_types!(to_all_reductions);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_active_set_is_its_start_stride_and_size() {
        let set = ActiveSet::new(1, 1, 3, 8).unwrap();
        assert_eq!(
            set,
            ActiveSet {
                start: 1,
                stride: 2,
                size: 3
            }
        );
        let members: Vec<u32> = (0..8).filter(|&pe| set.index_of(pe).is_some()).collect();
        assert_eq!(members, [1, 3, 5]);
        assert_eq!(set.index_of(5), Some(2));
        assert_eq!(set.index_of(7), None);
        assert_eq!(set.index_of(0), None);
        assert!(!set.is_world(8));
    }

    #[test]
    fn the_set_of_every_pe_is_the_world() {
        assert!(ActiveSet::new(0, 0, 4, 4).unwrap().is_world(4));
        assert!(ActiveSet::new(0, 3, 1, 1).unwrap().is_world(1));
        assert!(!ActiveSet::new(0, 0, 3, 4).unwrap().is_world(4));
    }

    #[test]
    fn impossible_sets_are_refused() {
        for (start, log, size) in [
            (-1, 0, 2),
            (0, -1, 2),
            (0, 0, 0),
            (0, 31, 2),
            (2, 1, 2),
            (0, 0, 5),
        ] {
            assert!(
                matches!(
                    ActiveSet::new(start, log, size, 4),
                    Err(CallError::Argument(_))
                ),
                "({start}, {log}, {size})"
            );
        }
        assert!(ActiveSet::new(1, 1, 2, 4).is_ok());
    }
}
