//! [`Bootstrap`]: what a job's processes need from whatever started them, whichever launcher
//! that was (`rshmem run`, `mpirun` through PMIx, `srun` through PMIx or PMI-2, Hydra through
//! PMI-1 or PMI-2). It is the shape of NVSHMEM's bootstrap handle and of SOS's runtime layer:
//! identity, one allgather of opaque bytes, a barrier, and an end for the whole job.

use std::time::Instant;

use super::{BootstrapClient, BootstrapError};

/// Where a rank runs, as its launcher tells it: the node, and its place among that node's
/// ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeIdentity {
    /// The node's number in the job, `0..` the number of nodes.
    pub node_id: u32,
    /// This rank's place among the ranks of its node, `0..local_size`.
    pub local_rank: u32,
    /// How many ranks of the job run on this node.
    pub local_size: u32,
}

/// A job's bootstrap as one rank sees it. Dropping it finalizes it (tells the launcher that
/// this rank takes part in no further exchange).
pub trait Bootstrap: Send + std::fmt::Debug {
    /// Which bootstrap this is, as `RSHMEM_BOOTSTRAP` names it (`rshmem`, `pmix`, `pmi2`,
    /// `pmi1`).
    fn name(&self) -> &'static str;

    /// This process's rank, `0..size`.
    fn rank(&self) -> u32;

    /// How many ranks (processes) the job has.
    fn size(&self) -> u32;

    /// Where this rank runs.
    fn node(&self) -> NodeIdentity;

    /// Every rank's node id ([`NodeIdentity::node_id`]), in rank order. A collective: an
    /// allgather of [`node`](Self::node)'s ids.
    ///
    /// # Errors
    /// As [`allgather`](Self::allgather); [`BootstrapError::Protocol`] for an id that is not
    /// four bytes.
    fn node_ids(&mut self, deadline: Instant) -> Result<Vec<u32>, BootstrapError> {
        let all = self.allgather(&self.node().node_id.to_le_bytes(), deadline)?;
        all.iter()
            .enumerate()
            .map(|(rank, id)| {
                let id: [u8; 4] = id.as_slice().try_into().map_err(|_| {
                    BootstrapError::Protocol(format!(
                        "rank {rank} sent a node id of {} bytes, not 4",
                        id.len()
                    ))
                })?;
                Ok(u32::from_le_bytes(id))
            })
            .collect()
    }

    /// Gives `mine` to every rank and returns every rank's bytes in rank order, this rank's
    /// own included. A collective: every rank calls it the same number of times.
    ///
    /// Blocks until every rank has called it, or until `deadline`.
    ///
    /// # Errors
    /// [`BootstrapError::Deadline`] when `deadline` passes first, naming the ranks waited for
    /// where the launcher says; [`BootstrapError::PeerLost`] when a rank left;
    /// [`BootstrapError::GlobalExit`] when a rank ended the job; [`BootstrapError::TooLarge`]
    /// for a message over the bootstrap's limit; [`BootstrapError::Launcher`],
    /// [`BootstrapError::Io`] or [`BootstrapError::Protocol`] when the launcher refused or the
    /// connection broke. After any error but `TooLarge` the bootstrap is unusable.
    fn allgather(&mut self, mine: &[u8], deadline: Instant)
    -> Result<Vec<Vec<u8>>, BootstrapError>;

    /// Returns when every rank has called it. A collective, like
    /// [`allgather`](Self::allgather), and blocks the same way.
    ///
    /// # Errors
    /// As [`allgather`](Self::allgather).
    fn barrier(&mut self, deadline: Instant) -> Result<(), BootstrapError> {
        self.allgather(&[], deadline).map(drop)
    }

    /// Ends every rank of the job with `status` (`shmem_global_exit`, or a failure that must
    /// not leave the others waiting): the launcher ends the other processes. Returns once the
    /// launcher was told, within about a second; the caller then exits its own process with
    /// `status`, without further bootstrap calls.
    ///
    /// # Errors
    /// [`BootstrapError::Io`], [`BootstrapError::Protocol`] or [`BootstrapError::Launcher`]
    /// when the launcher cannot be told (it is gone, or an earlier call broke the
    /// connection). The caller should exit anyway: the launcher sees the exit status.
    fn global_exit(&self, status: i32) -> Result<(), BootstrapError>;
}

impl Bootstrap for BootstrapClient {
    fn name(&self) -> &'static str {
        "rshmem"
    }

    fn rank(&self) -> u32 {
        BootstrapClient::rank(self)
    }

    fn size(&self) -> u32 {
        self.n_ranks()
    }

    /// `rshmem run` starts every rank on the node it runs on itself.
    fn node(&self) -> NodeIdentity {
        NodeIdentity {
            node_id: 0,
            local_rank: BootstrapClient::rank(self),
            local_size: self.n_ranks(),
        }
    }

    fn allgather(
        &mut self,
        mine: &[u8],
        deadline: Instant,
    ) -> Result<Vec<Vec<u8>>, BootstrapError> {
        BootstrapClient::allgather(self, mine, deadline)
    }

    fn global_exit(&self, status: i32) -> Result<(), BootstrapError> {
        BootstrapClient::global_exit(self, status)
    }
}
