//! The table of split teams that kernels nvcc compiled read (`rshmem/device_gpu.cuh`):
//! per NVSHMEM team handle from 3 up, the team's first world PE, stride, size, this PE's
//! number in it and its slot, so that `nvshmem_team_my_pe`, `_n_pes` and
//! `nvshmem_team_translate_pe` answer in kernels for any team, and barriers and collectives on
//! it use the synchronisation words of its slot (`rshmem_sync_t`'s `team_barrier`).
//!
//! As with the device state (`device_state.rs`), every translation unit that includes the
//! header registers a binder for its own `__constant__` table, and libshmem calls the binders
//! with the table's bytes when a handle is made or released. On other backends nothing is
//! bound: the simulator answers team calls in libshmem.

use std::ffi::{c_int, c_void};
use std::sync::{Mutex, PoisonError};

use hw::cuda::CudaDevice;

use crate::device_state::DeviceBinder;
use crate::fail::CallError;
use crate::handles::{predefined, shmem_team_t};
use crate::state::{Pe, is_running, with_pe};

/// Handles the table holds (`RSHMEMD_GPU_MAX_TEAMS` of the header), predefined ones included.
const MAX_TEAMS: usize = 64;
/// The handles below this are the world, shared and node teams, which the header answers.
const FIRST_SPLIT: usize = 3;
/// The `int32_t`s of one handle's entry: start, stride, size, this PE's number, slot.
const ENTRY_WORDS: usize = 5;

/// The registered binders.
static TEAM_BINDERS: Mutex<Vec<DeviceBinder>> = Mutex::new(Vec::new());

/// Registers a translation unit's binder of the team table; after init it is bound at once.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemx_register_device_team_binder(binder: DeviceBinder) {
    TEAM_BINDERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(binder);
    if is_running() {
        rshmemx_bind_device_teams();
    }
}

/// Binds the PE's team table into every registered unit; nothing on backends other than
/// CUDA or when no unit registered.
#[unsafe(no_mangle)]
pub extern "C" fn rshmemx_bind_device_teams() {
    let binders = TEAM_BINDERS.lock().unwrap_or_else(PoisonError::into_inner);
    // Why first: programs built for the simulator register none, and their runs then make no
    // call here that the simulator would count.
    if binders.is_empty() {
        return;
    }
    with_pe("rshmemx_bind_device_teams", |me| {
        if me.shmem.device().downcast_ref::<CudaDevice>().is_none() {
            return Ok(());
        }
        let table = table(me)?;
        for binder in binders.iter() {
            // SAFETY: the binder is the program's, registered by rshmem/device_gpu.cuh; it
            // reads `table.len()` bytes at the pointer, which live until it returns.
            let status = unsafe { binder(table.as_ptr().cast::<c_void>(), table.len()) };
            if status != 0 {
                return Err(CallError::DeviceState(format!(
                    "cudaMemcpyToSymbol of the team table returned CUDA error {status}"
                )));
            }
        }
        Ok(())
    });
}

/// The table's bytes: the number of handles, a reserved word, then per handle its first world
/// PE, stride, size, this PE's number and its slot (size 0: no live team), as `int32_t`s.
fn table(me: &Pe) -> Result<Vec<u8>, CallError> {
    let handles = me.nvshmem_teams.handles();
    if handles > MAX_TEAMS {
        return Err(CallError::Argument(format!(
            "{handles} team handles are live, and kernels on the GPU know {MAX_TEAMS}; destroy \
             teams no longer used"
        )));
    }
    let mut words = vec![0i32; 2 + ENTRY_WORDS * MAX_TEAMS];
    words[0] = handles as i32;
    for handle in FIRST_SPLIT..handles {
        let raw = me.nvshmem_teams.team(handle as i32);
        if raw == predefined::TEAM_INVALID {
            continue;
        }
        let entry = strided(me, me.team(raw as shmem_team_t)?)?;
        words[2 + ENTRY_WORDS * handle..2 + ENTRY_WORDS * (handle + 1)].copy_from_slice(&entry);
    }
    Ok(words.iter().flat_map(|w| w.to_ne_bytes()).collect())
}

/// `team`'s first world PE, stride, size, this PE's number in it and its slot.
fn strided(me: &Pe, team: &rshmem::Team) -> Result<[c_int; ENTRY_WORDS], CallError> {
    let world = me.shmem.team_world();
    let n = team.n_pes()?;
    let mut pes = Vec::with_capacity(n as usize);
    for j in 0..n {
        pes.push(me.shmem.team_translate_pe(team, j, world)?.unwrap_or(0) as i64);
    }
    let start = pes.first().copied().unwrap_or(0);
    let stride = if n > 1 { pes[1] - start } else { 1 };
    if pes
        .iter()
        .enumerate()
        .any(|(j, &pe)| pe != start + j as i64 * stride)
    {
        return Err(CallError::Argument(format!(
            "a team of world PEs {pes:?} is not strided, and kernels on the GPU know strided \
             teams only; split it with nvshmem_team_split_strided or _2d"
        )));
    }
    Ok([
        start as c_int,
        stride as c_int,
        n as c_int,
        team.my_pe()? as c_int,
        team.slot() as c_int,
    ])
}
