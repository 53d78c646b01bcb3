//! Team collectives: `shmem_team_sync`, and `shmem_TYPENAME_broadcast`, `collect`, `fcollect`,
//! `alltoall`, `alltoalls` over `rma_types!` with their `*mem` forms (sizes in bytes). The
//! reductions are in `reductions.rs`, the deprecated active-set forms in `active_set.rs`.
//!
//! Each export turns its pointers into symmetric arrays of the lengths the call moves and
//! calls the runtime's collective (`Shmem::broadcast` and friends), which checks and agrees on
//! the arguments of every member before data moves. They return 0; a failure ends the job
//! with a message naming the call, as every misuse does. The helpers take a runtime team, so
//! that the active-set forms run the same code on their team.

use std::ffi::c_int;

use rshmem::{Element, Team};

use crate::fail::CallError;
use crate::handles::shmem_team_t;
use crate::setup::pe_number;
use crate::state::{Pe, with_pe};

/// Which all-to-all: contiguous, or with element strides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Strides {
    /// `alltoall`.
    Contiguous,
    /// `alltoalls(dst, sst)`.
    Strided {
        /// The stride of dest, in elements.
        dst: isize,
        /// The stride of source, in elements.
        sst: isize,
    },
}

/// Runs `body` on the team `team` for the C call `call`; returns 0.
fn on_team(
    call: &'static str,
    team: shmem_team_t,
    body: impl FnOnce(&Pe, &Team) -> Result<(), CallError>,
) -> c_int {
    with_pe(call, |me| {
        body(me, me.team(team)?)?;
        Ok(0)
    })
}

/// Broadcasts `nelems` of `source` on team PE `root` to `dest` on every member.
pub(crate) fn broadcast_on<T: Element>(
    me: &Pe,
    team: &Team,
    dest: *mut T,
    source: *const T,
    nelems: usize,
    root: c_int,
) -> Result<(), CallError> {
    let root = pe_number(root)?;
    if nelems == 0 {
        return Ok(());
    }
    let (dest, source) = (me.sym(dest.cast_const(), nelems)?, me.sym(source, nelems)?);
    Ok(me.shmem.broadcast(team, dest, source, root)?)
}

/// Concatenates every member's `nelems` of `source` into `dest`: `fixed` if every member
/// brings the same count (fcollect), else each brings its own (collect).
///
/// Zero elements move nothing, so `NULL` buffers are fine then (OpenSHMEM 1.5 section 9.9.8
/// asks nothing of them): an fcollect of 0 returns at once, as every member passes 0; a
/// collect member that brings 0 still takes part, its empty source placed at `dest`, and a
/// member with no `dest` either (so the team's total is 0) only synchronises.
pub(crate) fn collect_on<T: Element>(
    me: &Pe,
    team: &Team,
    dest: *mut T,
    source: *const T,
    nelems: usize,
    fixed: bool,
) -> Result<(), CallError> {
    if fixed && nelems == 0 {
        return Ok(());
    }
    let source = if nelems == 0 && source.is_null() {
        if dest.is_null() {
            return Ok(me.shmem.team_sync(team)?);
        }
        dest.cast_const()
    } else {
        source
    };
    let source = me.sym(source, nelems)?;
    if fixed {
        let n_pes = team.n_pes()? as usize;
        let dest = me.sym(dest.cast_const(), n_pes * nelems)?;
        Ok(me.shmem.fcollect(team, dest, source)?)
    } else {
        Ok(me.shmem.collect_unsized(team, me.addr(dest)?, source)?)
    }
}

/// Exchanges blocks of `nelems` between every pair of members.
pub(crate) fn alltoall_on<T: Element>(
    me: &Pe,
    team: &Team,
    dest: *mut T,
    source: *const T,
    nelems: usize,
    strides: Strides,
) -> Result<(), CallError> {
    let strides = match strides {
        Strides::Contiguous => None,
        Strides::Strided { dst, sst } => Some((stride(dst, "dst")?, stride(sst, "sst")?)),
    };
    // Every member passes the same nelems (OpenSHMEM 1.5 sections 9.9.5 and 9.9.6), so with
    // none there is nothing to exchange, whatever the buffers.
    if nelems == 0 {
        return Ok(());
    }
    let n_pes = team.n_pes()? as usize;
    match strides {
        None => {
            let len = n_pes * nelems;
            let (dest, source) = (me.sym(dest.cast_const(), len)?, me.sym(source, len)?);
            Ok(me.shmem.alltoall(team, dest, source)?)
        }
        Some((dst, sst)) => {
            let span = |stride: usize| (n_pes * nelems - 1) * stride + 1;
            let dest = me.sym(dest.cast_const(), span(dst))?;
            let source = me.sym(source, span(sst))?;
            Ok(me.shmem.alltoalls(team, dest, source, dst, sst, nelems)?)
        }
    }
}

/// A stride of alltoalls, checked to be at least 1 (OpenSHMEM 1.5 section 9.9.6).
fn stride(value: isize, name: &str) -> Result<usize, CallError> {
    usize::try_from(value)
        .ok()
        .filter(|&stride| stride > 0)
        .ok_or_else(|| {
            CallError::Argument(format!(
                "{name} is {value}; pass a stride of at least 1 element"
            ))
        })
}

/// Waits until every member of `team` arrives (`shmem_team_sync`); 0 on success.
#[unsafe(no_mangle)]
pub extern "C" fn shmem_team_sync(team: shmem_team_t) -> c_int {
    on_team("shmem_team_sync", team, |me, team| {
        Ok(me.shmem.team_sync(team)?)
    })
}

/// The collectives of one element type `$t`, under the names given.
macro_rules! team_collectives {
    ($t:ty, $what:expr, $broadcast:ident, $collect:ident, $fcollect:ident, $alltoall:ident, $alltoalls:ident) => {
        #[doc = concat!("Broadcasts `nelems` ", $what, " of `source` on team PE `pe_root` to `dest` on every member; 0 on success.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $broadcast(team: shmem_team_t, dest: *mut $t, source: *const $t, nelems: usize, pe_root: c_int) -> c_int {
            on_team(stringify!($broadcast), team, |me, team| broadcast_on(me, team, dest, source, nelems, pe_root))
        }

        #[doc = concat!("Concatenates every member's `nelems` ", $what, " (which may differ) into `dest`; 0 on success.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $collect(team: shmem_team_t, dest: *mut $t, source: *const $t, nelems: usize) -> c_int {
            on_team(stringify!($collect), team, |me, team| collect_on(me, team, dest, source, nelems, false))
        }

        #[doc = concat!("Concatenates every member's `nelems` ", $what, " (the same on all) into `dest`; 0 on success.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $fcollect(team: shmem_team_t, dest: *mut $t, source: *const $t, nelems: usize) -> c_int {
            on_team(stringify!($fcollect), team, |me, team| collect_on(me, team, dest, source, nelems, true))
        }

        #[doc = concat!("Sends block `j` of `nelems` ", $what, " to member `j`; 0 on success.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $alltoall(team: shmem_team_t, dest: *mut $t, source: *const $t, nelems: usize) -> c_int {
            on_team(stringify!($alltoall), team, |me, team| alltoall_on(me, team, dest, source, nelems, Strides::Contiguous))
        }

        #[doc = concat!("alltoall of `nelems` ", $what, " per block, `dst` and `sst` elements apart; 0 on success.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $alltoalls(team: shmem_team_t, dest: *mut $t, source: *const $t, dst: isize, sst: isize, nelems: usize) -> c_int {
            on_team(stringify!($alltoalls), team, |me, team| alltoall_on(me, team, dest, source, nelems, Strides::Strided { dst, sst }))
        }
    };
}

/// The typed collectives of each `rma_types!` row.
macro_rules! typed_collectives {
    ($(($name:ident, $t:ty, $c:literal)),* $(,)?) => {$(paste::paste! {
        team_collectives!(
            $t, concat!("`", $c, "` elements"),
            [<shmem_ $name _broadcast>], [<shmem_ $name _collect>], [<shmem_ $name _fcollect>],
            [<shmem_ $name _alltoall>], [<shmem_ $name _alltoalls>]
        );
    })*};
}

/// The exported collectives: typed, and the `*mem` forms on bytes.
pub mod exports {
    use std::ffi::c_int;

    use super::{Strides, alltoall_on, broadcast_on, collect_on, on_team};
    use crate::handles::shmem_team_t;

    crate::rma_types!(typed_collectives);
    team_collectives!(
        u8,
        "bytes",
        shmem_broadcastmem,
        shmem_collectmem,
        shmem_fcollectmem,
        shmem_alltoallmem,
        shmem_alltoallsmem
    );
}
