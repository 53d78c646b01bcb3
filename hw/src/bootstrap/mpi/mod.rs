//! The MPI-communicator bootstrap, NVSHMEM's `NVSHMEMX_INIT_WITH_MPI_COMM` (and
//! `RSHMEM_BOOTSTRAP=mpi` over `MPI_COMM_WORLD`): the program initialised MPI, and the job's
//! ranks are the communicator's, in its order. The bootstrap works on a duplicate of the
//! communicator, as NVSHMEM does, so that its collectives never match the program's.
//!
//! MPI calls block until every rank of the communicator makes them: they take no deadline. A
//! rank that dies is the MPI library's business: Open MPI's and MPICH's launchers end the job
//! when a process exits without `MPI_Finalize`, so the others do not wait forever.

mod abi;

use std::ffi::{c_int, c_void};
use std::time::Instant;

use super::job::{Bootstrap, NodeIdentity};
use super::{BootstrapError, hosts};
use abi::{Api, Handle};

const NAME: &str = "mpi";

/// Which communicator the job's ranks are.
#[derive(Clone, Copy, Debug)]
pub enum Communicator {
    /// `MPI_COMM_WORLD`.
    World,
    /// The program's variable at this address: an `MPI_Comm *`, as `attr.mpi_comm` holds.
    At(*const c_void),
}

/// This rank's MPI-communicator bootstrap.
#[derive(Debug)]
pub struct Mpi {
    api: Api,
    /// The bootstrap's duplicate of the program's communicator.
    comm: Handle,
    rank: u32,
    size: u32,
    node: NodeIdentity,
}

/// The MPI library and the handle of `comm`.
///
/// # Safety
/// A [`Communicator::At`] points to a live `MPI_Comm` of the program's MPI library.
unsafe fn resolve(comm: Communicator) -> Result<(Api, Handle), BootstrapError> {
    let api = Api::find()?;
    let handle = match comm {
        Communicator::World => api.world,
        Communicator::At(at) if at.is_null() => {
            return Err(BootstrapError::InvalidArgument(
                "attr.mpi_comm is NULL: point it at the program's MPI_Comm with \
                 nvshmemx_set_attr_mpi_comm_args(&comm, &attr)"
                    .to_string(),
            ));
        }
        // SAFETY: the caller's promise.
        Communicator::At(at) => unsafe { api.read_comm(at) },
    };
    Ok((api, handle))
}

fn rank_and_size(api: &Api, comm: Handle) -> Result<(u32, u32), BootstrapError> {
    let (mut rank, mut size): (c_int, c_int) = (0, 0);
    // SAFETY: comm is a communicator of the library; each writes one int.
    api.check("MPI_Comm_rank", unsafe { (api.comm_rank)(comm, &mut rank) })?;
    // SAFETY: as above.
    api.check("MPI_Comm_size", unsafe { (api.comm_size)(comm, &mut size) })?;
    Ok((rank as u32, size as u32))
}

/// This process's rank in `comm` and the communicator's size (`MPI_Comm_rank`,
/// `MPI_Comm_size`), for a caller that checks them against another bootstrap's identity.
///
/// # Safety
/// As [`open`].
///
/// # Errors
/// As [`open`], before the communicator is duplicated.
pub unsafe fn rank_and_size_of(comm: Communicator) -> Result<(u32, u32), BootstrapError> {
    // SAFETY: the caller's promise.
    let (api, handle) = unsafe { resolve(comm) }?;
    rank_and_size(&api, handle)
}

/// Joins the job whose ranks are `comm`'s: duplicates it, learns this rank and the size, and
/// each rank's node by host name. Collective over the communicator.
///
/// # Safety
/// A [`Communicator::At`] points to a live `MPI_Comm` of the program's MPI library, and no
/// other thread makes MPI calls on it meanwhile unless MPI was initialised for that.
///
/// # Errors
/// [`BootstrapError::Launcher`] when the process has no MPI library, MPI is not initialised,
/// or a call fails (in MPI's words); [`BootstrapError::InvalidArgument`] for a null
/// communicator pointer.
pub unsafe fn open(
    comm: Communicator,
    deadline: Instant,
) -> Result<Box<dyn Bootstrap>, BootstrapError> {
    // SAFETY: the caller's promise.
    let (api, program_comm) = unsafe { resolve(comm) }?;
    let mut dup: Handle = 0;
    // SAFETY: a communicator of the library; MPI writes the new handle into `dup` (an int's
    // bytes, the low ones of the zeroed word, in MPICH's ABI).
    api.check("MPI_Comm_dup", unsafe {
        (api.comm_dup)(program_comm, &mut dup)
    })?;
    let (rank, size) = rank_and_size(&api, dup)?;
    let mut mpi = Mpi {
        api,
        comm: dup,
        rank,
        size,
        node: NodeIdentity {
            node_id: 0,
            local_rank: rank,
            local_size: size,
        },
    };
    mpi.node = hosts::learn_node(rank, size, |mine, by| mpi.allgather(mine, by), deadline)?;
    tracing::debug!(rank, size, node = ?mpi.node, "MPI bootstrap joined");
    Ok(Box::new(mpi))
}

impl Bootstrap for Mpi {
    fn name(&self) -> &'static str {
        NAME
    }

    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.size
    }

    fn node(&self) -> NodeIdentity {
        self.node
    }

    /// Sizes by `MPI_Allgather`, then the bytes by `MPI_Allgatherv`. Blocks without a
    /// deadline, as MPI does.
    fn allgather(
        &mut self,
        mine: &[u8],
        _deadline: Instant,
    ) -> Result<Vec<Vec<u8>>, BootstrapError> {
        BootstrapError::check_len(mine)?;
        let api = &self.api;
        let len = mine.len() as c_int;
        let mut lens = vec![0 as c_int; self.size as usize];
        // SAFETY: one int sent, one received per rank, into `lens` of `size` ints.
        api.check("MPI_Allgather", unsafe {
            (api.allgather)(
                std::ptr::from_ref(&len).cast(),
                std::mem::size_of::<c_int>() as c_int,
                api.byte,
                lens.as_mut_ptr().cast(),
                std::mem::size_of::<c_int>() as c_int,
                api.byte,
                self.comm,
            )
        })?;
        let mut displs = Vec::with_capacity(lens.len());
        let mut total: c_int = 0;
        for &n in &lens {
            displs.push(total);
            total = total.checked_add(n).ok_or_else(|| {
                BootstrapError::InvalidArgument(format!(
                    "the ranks' messages add up to more than {} bytes, MPI's limit for one \
                     MPI_Allgatherv; exchange keys and addresses through the bootstrap, not data",
                    c_int::MAX
                ))
            })?;
        }
        if total == 0 {
            // Nothing to move (a barrier): and an empty buffer's pointer would be 1, which is
            // `MPI_IN_PLACE` to Open MPI.
            return Ok(vec![Vec::new(); lens.len()]);
        }
        let mut all = vec![0u8; total as usize];
        // Why not `mine.as_ptr()` when it is empty: that pointer is 1 (`MPI_IN_PLACE` to Open
        // MPI, which then refuses the call); MPI reads none of this byte.
        let nothing = [0u8; 1];
        let send = if mine.is_empty() {
            nothing.as_ptr()
        } else {
            mine.as_ptr()
        };
        // SAFETY: `all` holds the sum of `lens`, at `displs`; MPI reads `len` bytes of `send`.
        api.check("MPI_Allgatherv", unsafe {
            (api.allgatherv)(
                send.cast(),
                len,
                api.byte,
                all.as_mut_ptr().cast(),
                lens.as_ptr(),
                displs.as_ptr(),
                api.byte,
                self.comm,
            )
        })?;
        Ok(displs
            .iter()
            .zip(&lens)
            .map(|(&at, &n)| all[at as usize..(at + n) as usize].to_vec())
            .collect())
    }

    fn barrier(&mut self, _deadline: Instant) -> Result<(), BootstrapError> {
        // SAFETY: the bootstrap's own communicator.
        self.api
            .check("MPI_Barrier", unsafe { (self.api.barrier)(self.comm) })
    }

    /// `MPI_Abort`, which ends every rank of the job (and does not return in the MPI
    /// libraries rshmem knows).
    fn global_exit(&self, status: i32) -> Result<(), BootstrapError> {
        // SAFETY: the bootstrap's own communicator.
        self.api
            .check("MPI_Abort", unsafe { (self.api.abort)(self.comm, status) })
    }
}

impl Drop for Mpi {
    fn drop(&mut self) {
        let mut finalized = 0;
        // SAFETY: MPI_Finalized may be called at any time; the duplicate is ours to free
        // while MPI runs.
        unsafe {
            (self.api.finalized)(&mut finalized);
            if finalized == 0 {
                (self.api.comm_free)(&mut self.comm);
            }
        }
    }
}
