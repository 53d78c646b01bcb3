//! MPI on the simulator: the MPI calls of a program built against Open MPI 4.1 (`mpicc`, or
//! `oshcc` with `-lmpi`), served for each simulated PE in simulated time.
//!
//! How a call gets here: the host puts a shim library first in the program's lookup order
//! (`preload.rs`), whose every name of `libmpi.so.40` jumps to a `rshmem_sim_MPI_*` function
//! here (`exports.rs`) or, for a call not served, to [`unserved`], which ends the run naming
//! it (`build_mpi_shim.rs` generates the shim). Handles are Open MPI's: the address of a
//! predefined object (`MPI_COMM_WORLD` is `&ompi_mpi_comm_world`), which each PE's copy may
//! hold a copy of (a copy relocation), so a handle is known by its contents, a tag and a
//! name, never by its address (`handles.rs`).
//!
//! Where the state is: in this module, for every PE, since every PE runs on the host's one
//! thread. A rank is a PE (`MPI_COMM_WORLD` is every PE, in order); `MPI_COMM_TYPE_SHARED`
//! splits by the simulated host. Point-to-point messages are matched by (communicator,
//! source, tag) in the order they were sent and the receives posted, as MPI's non-overtaking
//! rule says (`p2p.rs`); a collective is a meeting of the communicator's ranks, which the last
//! to arrive completes for all (`collectives.rs`).
//!
//! Time: a message arrives [`LATENCY_NS`] plus its bytes at [`BYTES_PER_NS`] after its send,
//! a collective completes that much per round of a binomial tree after its last rank
//! arrived: a host network's cost, not the simulated machine's links. A rank that waits
//! sleeps in simulated time and looks again, after a pause that doubles from [`FIRST_PAUSE_NS`]
//! to [`LAST_PAUSE_NS`] (the simulator wakes a PE only for its own events), so a wait ends up
//! to that late; one that waits [`WAIT_LIMIT_NS`] fails, naming what it waited for. The same
//! seed gives the same run, as for SHMEM calls.

mod collectives;
mod exports;
mod exports_collectives;
mod exports_p2p;
mod exports_poll;
mod handles;
mod p2p;
pub(crate) mod preload;
mod types;

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::ffi::c_int;

use crate::fail::{CallError, fail};
use crate::sim_host::copies::Copy;

/// The cost of a message or of a collective's round before its bytes.
const LATENCY_NS: u64 = 2_000;
/// The bandwidth of the host network messages cross.
const BYTES_PER_NS: u64 = 10;
/// A waiting rank's first pause before it looks again.
const FIRST_PAUSE_NS: u64 = 200;
/// A waiting rank's longest pause.
const LAST_PAUSE_NS: u64 = 100_000;
/// How long a rank waits in simulated time before the wait fails.
const WAIT_LIMIT_NS: u64 = 10_000_000_000;

/// Open MPI's `MPI_ANY_SOURCE` and `MPI_ANY_TAG`.
const ANY: c_int = -1;
/// Open MPI's `MPI_PROC_NULL`.
const PROC_NULL: c_int = -2;
/// Open MPI's `MPI_UNDEFINED`.
const UNDEFINED: c_int = -32766;
/// `MPI_SUCCESS`.
const SUCCESS: c_int = 0;

/// Why an MPI call cannot be served.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MpiError {
    #[error("MPI is not initialised on this rank; call MPI_Init (or MPI_Init_thread) first")]
    NotInitialized,
    #[error(
        "MPI was finalised on this rank; make MPI calls only between MPI_Init and MPI_Finalize"
    )]
    Finalized,
    #[error("MPI_Init was called twice; a program initialises MPI once")]
    InitTwice,
    #[error("{0}")]
    Handle(String),
    #[error("rank {rank} is out of range for a communicator of {size} ranks")]
    RankRange { rank: c_int, size: usize },
    #[error("{op} is not defined on {datatype}")]
    Reduction {
        op: &'static str,
        datatype: &'static str,
    },
    #[error("{0}")]
    Mismatch(String),
    #[error("a negative count or size ({0})")]
    Negative(c_int),
    #[error(
        "waited {} s of simulated time for {what}, which never came; the run is stuck",
        WAIT_LIMIT_NS / 1_000_000_000
    )]
    Stuck { what: String },
    #[error(
        "is not served on the simulator; the simulator serves MPI's setup, communicators \
         (dup, split, split_type, free), point-to-point (send, receive, wait, test, probe) \
         and the common collectives (docs/c-api.md, \"MPI programs on the simulator\"): run the program as \
         processes under mpirun for the rest"
    )]
    Unserved,
    #[error("{0}")]
    Host(String),
}

/// A communicator's ranks: the PE of each.
#[derive(Debug)]
struct CommInfo {
    members: Vec<u32>,
}

/// One PE's MPI life.
#[derive(Debug, Default)]
struct PeState {
    initialized: bool,
    finalized: bool,
    thread_level: c_int,
    /// The communicators this PE freed.
    freed: Vec<u64>,
    /// How many collectives this PE entered on each communicator.
    collectives: HashMap<u64, u64>,
    /// Messages sent to this PE that no receive took yet, in the order they were sent.
    unexpected: VecDeque<p2p::Message>,
    /// This PE's receives that no message matched yet, in the order they were posted.
    posted: VecDeque<u64>,
    /// Since when this PE's tests and probes (`MPI_Test`, `MPI_Iprobe`) found nothing, and
    /// how many did in a row: their pause grows, and a loop of them has a deadline.
    polling: Option<(u64, u32)>,
    /// The simulated host it runs on.
    host: u32,
    /// Where its program sees `MPI_COMM_NULL` and `MPI_REQUEST_NULL`.
    comm_null: usize,
    request_null: usize,
}

/// Every PE's MPI state.
#[derive(Debug, Default)]
struct World {
    comms: Vec<CommInfo>,
    pes: Vec<PeState>,
    requests: HashMap<u64, p2p::Request>,
    next_request: u64,
    meetings: HashMap<(u64, u64), collectives::Meeting>,
}

thread_local! {
    /// The run's MPI state; only the host's thread runs PEs.
    static WORLD: RefCell<World> = RefCell::new(World::default());
}

/// Sets MPI up for the PEs of a run, one per copy, each on the simulated host `host_of` says.
pub(crate) fn install(copies: &[Copy], host_of: impl Fn(u32) -> u32) {
    let n_pes = copies.len() as u32;
    WORLD.with_borrow_mut(|world| {
        // Communicator 0 is MPI_COMM_WORLD, 1 + p is PE p's MPI_COMM_SELF.
        world.comms.push(CommInfo {
            members: (0..n_pes).collect(),
        });
        for pe in 0..n_pes {
            world.comms.push(CommInfo { members: vec![pe] });
        }
        world.pes = copies
            .iter()
            .enumerate()
            .map(|(pe, copy)| PeState {
                host: host_of(pe as u32),
                comm_null: copy.program_symbol(c"ompi_mpi_comm_null"),
                request_null: copy.program_symbol(c"ompi_request_null"),
                ..PeState::default()
            })
            .collect();
    });
}

/// The running PE, or the end of the run when MPI is called outside a simulated PE.
fn running_pe(call: &str) -> u32 {
    crate::sim_host::exit::running_pe().unwrap_or_else(|| {
        fail(
            call,
            None,
            &CallError::Argument("an MPI call outside a simulated PE's program".into()),
        )
    })
}

/// Runs `body` on the world for the running PE's call `call`; an error ends the run naming
/// the call and the PE.
fn serve<R>(call: &str, body: impl FnOnce(&mut World, u32) -> Result<R, MpiError>) -> R {
    let pe = running_pe(call);
    match WORLD.with_borrow_mut(|world| body(world, pe)) {
        Ok(value) => value,
        Err(err) => refuse(call, pe, &err),
    }
}

/// Ends the run for the running PE's call `call`, saying why.
fn refuse(call: &str, pe: u32, err: &MpiError) -> ! {
    fail(call, Some(pe), &CallError::Argument(err.to_string()))
}

/// The running PE's simulated clock.
fn now_ns() -> u64 {
    sim::threads::now_ns().unwrap_or(0)
}

/// The cost of moving `bytes` once.
fn transfer_ns(bytes: usize) -> u64 {
    LATENCY_NS + bytes as u64 / BYTES_PER_NS
}

/// Waits in simulated time until `ready` gives a value and the time it is ready at, for the
/// running PE's call `call`; `what` names what it waits for, for the deadlock report and the
/// failure at [`WAIT_LIMIT_NS`]. `ready` runs with the world borrowed, never across a pause.
fn wait_for<R>(
    call: &str,
    what: impl Fn() -> String,
    mut ready: impl FnMut(&mut World, u32) -> Result<Option<(R, u64)>, MpiError>,
) -> R {
    let pe = running_pe(call);
    let start = now_ns();
    let mut pause = FIRST_PAUSE_NS;
    loop {
        let found = WORLD.with_borrow_mut(|world| ready(world, pe));
        let now = now_ns();
        let (value, until) = match found {
            Err(err) => refuse(call, pe, &err),
            Ok(Some((value, at))) => (Some(value), at),
            Ok(None) if now - start >= WAIT_LIMIT_NS => {
                refuse(call, pe, &MpiError::Stuck { what: what() })
            }
            Ok(None) => (None, now + pause),
        };
        sleep_until(call, pe, until, &what);
        if let Some(value) = value {
            return value;
        }
        pause = (pause * 2).min(LAST_PAUSE_NS);
    }
}

/// Sleeps the running PE `pe` until its clock reaches `until_ns`.
fn sleep_until(call: &str, pe: u32, until_ns: u64, what: &dyn Fn() -> String) {
    // Why a loop: a parked thread may come back early, woken for something else.
    while now_ns() < until_ns {
        let why = format!("{call} waits for {}", what());
        let slept = crate::sim_host::threads::waiting(call, || {
            sim::threads::park(why, Some(until_ns)).map(|_| ())
        });
        if let Err(err) = slept {
            refuse(call, pe, &MpiError::Host(err.to_string()));
        }
    }
}

/// Ends the run for a call the shim has but this module does not serve.
pub(crate) fn unserved(name: &str) -> ! {
    let pe = running_pe(name);
    refuse(name, pe, &MpiError::Unserved)
}

impl World {
    fn pe(&mut self, pe: u32) -> &mut PeState {
        &mut self.pes[pe as usize]
    }

    /// The running PE's state, checked to be between `MPI_Init` and `MPI_Finalize`.
    fn live(&mut self, pe: u32) -> Result<&mut PeState, MpiError> {
        let state = self.pe(pe);
        match (state.initialized, state.finalized) {
            (false, _) => Err(MpiError::NotInitialized),
            (true, true) => Err(MpiError::Finalized),
            (true, false) => Ok(state),
        }
    }
}

/// A communicator as one of its ranks uses it.
#[derive(Clone, Copy, Debug)]
struct Comm {
    id: u64,
    /// The caller's rank in it.
    rank: usize,
    size: usize,
}

impl World {
    /// The communicator `handle` names, as PE `pe` uses it.
    fn comm(&mut self, pe: u32, handle: *const std::ffi::c_void) -> Result<Comm, MpiError> {
        let id = match handles::read(handle, "communicator")? {
            handles::Handle::Predefined(name) if name == "ompi_mpi_comm_world" => 0,
            handles::Handle::Predefined(name) if name == "ompi_mpi_comm_self" => 1 + u64::from(pe),
            handles::Handle::Comm(id) if (id as usize) < self.comms.len() => id,
            other => {
                return Err(MpiError::Handle(format!(
                    "the communicator argument names {other:?}, not a communicator; pass \
                     MPI_COMM_WORLD, MPI_COMM_SELF or one from MPI_Comm_dup or MPI_Comm_split"
                )));
            }
        };
        if self.live(pe)?.freed.contains(&id) {
            return Err(MpiError::Handle(
                "the communicator was freed (MPI_Comm_free) on this rank".into(),
            ));
        }
        let members = &self.comms[id as usize].members;
        let rank = members.iter().position(|&m| m == pe).ok_or_else(|| {
            MpiError::Handle(format!(
                "the communicator is not one of PE {pe}'s (its ranks are PEs {members:?})"
            ))
        })?;
        Ok(Comm {
            id,
            rank,
            size: members.len(),
        })
    }
}

/// The bytes of `count` elements of `datatype`, checked.
fn count_bytes(count: c_int, datatype: types::Datatype) -> Result<usize, MpiError> {
    usize::try_from(count)
        .map(|count| count * datatype.size_bytes())
        .map_err(|_| MpiError::Negative(count))
}

/// A rank of `comm` from C, checked to be in range.
fn rank_in(rank: c_int, comm: Comm) -> Result<usize, MpiError> {
    usize::try_from(rank)
        .ok()
        .filter(|&r| r < comm.size)
        .ok_or(MpiError::RankRange {
            rank,
            size: comm.size,
        })
}
