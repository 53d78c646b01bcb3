//! NVSHMEM's initialisation by attributes: `nvshmemx_get_uniqueid` and `nvshmemx_init_attr`
//! of `nvshmem.h` call these. The flags name the job's bootstrap: the program's MPI
//! communicator (`NVSHMEMX_INIT_WITH_MPI_COMM`) or a unique id rank 0 made
//! (`NVSHMEMX_INIT_WITH_UNIQUEID`); without either, the environment's, as `shmem_init`.
//!
//! On the simulator the simulator is the bootstrap, and under `oshrun` or `rshmem run` the
//! launcher is: a unique id opens nothing on the simulator, and the program's ranks (the
//! unique id's, or the communicator's) must be the PE's own.

use std::ffi::{c_int, c_uint, c_void};
use std::time::{Duration, Instant};

use hw::bootstrap::{mpi, uid};

use crate::fail::{CallError, fail};
use crate::start::{Request, with_request};
use crate::state;

/// `NVSHMEMX_INIT_WITH_MPI_COMM`.
const WITH_MPI_COMM: c_uint = 1 << 1;
/// `NVSHMEMX_INIT_WITH_UNIQUEID`.
const WITH_UNIQUEID: c_uint = 1 << 3;

/// Who gave this process its PE before the program's own bootstrap could: the simulator, or
/// `oshrun` and `rshmem run`, whose ranks must join the launcher's socket.
fn identity_given() -> Option<&'static str> {
    if state::simulated() {
        Some("the simulator")
    } else if matches!(hw::bootstrap::BootstrapEnv::from_env(), Ok(Some(_))) {
        Some("the launcher (oshrun, rshmem run)")
    } else {
        None
    }
}

/// How long the ranks of a unique id wait for each other, as the launchers' bootstraps do.
const JOIN_TIMEOUT: Duration = Duration::from_secs(120);

/// Writes a unique id into the `uid::UNIQUE_ID_BYTES` bytes at `internal`
/// (`nvshmemx_get_uniqueid`): outside the simulator this process, which must become rank 0,
/// starts listening for the job's ranks. Returns 0.
///
/// # Safety
/// `internal` points to `uid::UNIQUE_ID_BYTES` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmemx_get_uniqueid(internal: *mut u8) -> c_int {
    const CALL: &str = "nvshmemx_get_uniqueid";
    // Checked first: a NULL id must not leave a listener open behind the failure.
    if internal.is_null() {
        fail(
            CALL,
            None,
            &CallError::Argument(
                "the id is NULL: pass the address of an nvshmemx_uniqueid_t".into(),
            ),
        );
    }
    let id = if state::simulated() {
        uid::simulated_unique_id()
    } else {
        uid::get_unique_id()
            .unwrap_or_else(|e| fail(CALL, None, &CallError::Argument(e.to_string())))
    };
    // SAFETY: the caller passes UNIQUE_ID_BYTES writable bytes.
    unsafe { internal.copy_from_nonoverlapping(id.as_ptr(), id.len()) };
    0
}

/// Sets the library up with the bootstrap `flags` name (`nvshmemx_init_attr`): the
/// communicator at `mpi_comm` (an `MPI_Comm *`), or the unique id at `uid_internal` with this
/// process as `myrank` of `nranks`. `gpu_program` says nvcc built the caller for GPUs, whose
/// PE then runs on the CUDA backend unless `RSHMEM_BACKEND` says otherwise. A failure ends
/// the process with a message naming the problem, as `shmem_init`'s do. Returns the thread
/// level granted for `requested`, as `shmem_init_thread`.
///
/// # Safety
/// With `NVSHMEMX_INIT_WITH_MPI_COMM`, `mpi_comm` is null or points to the program's live
/// `MPI_Comm`; with `NVSHMEMX_INIT_WITH_UNIQUEID`, `uid_internal` is null or points to
/// `uid::UNIQUE_ID_BYTES` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rshmemx_init_attr(
    flags: c_uint,
    myrank: c_int,
    nranks: c_int,
    uid_internal: *const u8,
    mpi_comm: *const c_void,
    gpu_program: c_int,
    requested: c_int,
) -> c_int {
    const CALL: &str = "nvshmemx_init_attr";
    let refuse = |e: String| -> ! { fail(CALL, None, &CallError::Argument(e)) };
    if state::is_running() {
        return state::init(CALL, requested);
    }
    let with_uid = flags & WITH_UNIQUEID != 0;
    let with_mpi = flags & WITH_MPI_COMM != 0 && !with_uid;
    let uid_ranks = || match (u32::try_from(myrank), u32::try_from(nranks)) {
        (Ok(rank), Ok(n)) => (rank, n),
        _ => refuse(format!(
            "the unique-id arguments say rank {myrank} of {nranks}: call \
             nvshmemx_set_attr_uniqueid_args with this process's rank (0 to nranks - 1) and \
             the number of ranks"
        )),
    };
    let id = || {
        if uid_internal.is_null() {
            refuse(
                "the unique-id arguments hold no id: call nvshmemx_set_attr_uniqueid_args \
                 with the id rank 0's nvshmemx_get_uniqueid made"
                    .to_string(),
            );
        }
        // SAFETY: the caller passes UNIQUE_ID_BYTES readable bytes.
        unsafe { std::slice::from_raw_parts(uid_internal, uid::UNIQUE_ID_BYTES) }
    };
    if let Some(who) = identity_given() {
        // The simulator or our launcher is the bootstrap: check the program's ranks against
        // the PE's. A communicator pointer that is NULL names no ranks to check.
        let program = if with_uid {
            Some((uid_ranks(), "the unique-id arguments"))
        } else if with_mpi && !mpi_comm.is_null() {
            // SAFETY: the caller's promise.
            let ranks = unsafe { mpi::rank_and_size_of(mpi::Communicator::At(mpi_comm)) }
                .unwrap_or_else(|e| refuse(e.to_string()));
            Some((ranks, "the MPI communicator"))
        } else {
            None
        };
        let level = state::init(CALL, requested);
        let pe = crate::setup::shmem_my_pe() as u32;
        let n_pes = crate::setup::shmem_n_pes() as u32;
        if let Some(((rank, size), whose)) = program
            && (rank, size) != (pe, n_pes)
        {
            fail(
                CALL,
                Some(pe),
                &CallError::Argument(format!(
                    "{whose} say rank {rank} of {size}, but {who} runs this program as PE {pe} \
                     of {n_pes}: give nvshmemx_init_attr the PE's own rank and size"
                )),
            );
        }
        return level;
    }
    let deadline = Instant::now() + JOIN_TIMEOUT;
    let opened = if with_uid {
        let (rank, n) = uid_ranks();
        Some(uid::open(id(), rank, n, deadline))
    } else if with_mpi {
        // SAFETY: the caller's promise.
        Some(unsafe { mpi::open(mpi::Communicator::At(mpi_comm), deadline) })
    } else {
        None
    };
    let bootstrap = opened.transpose().unwrap_or_else(|e| refuse(e.to_string()));
    let request = Request {
        bootstrap,
        gpu_program: gpu_program != 0,
    };
    with_request(request, || state::init(CALL, requested))
}
