//! Direct access to a peer's memory (`shmem_ptr`, `shmem_team_ptr`): where a peer's part of a
//! symmetric object can be reached with plain loads and stores, and at which address.
//!
//! Two facts decide the answer, and the API keeps them apart. Whether the peer is load/store
//! reachable is a fact of the topology: it is in `TEAM_SHARED` (NVLink or PCIe peer-to-peer on
//! this host; a route through a NIC is not). The address is a fact of the backend
//! ([`hw::Device::load_store_addr`]): the CUDA backend maps peers' memory and has one; the
//! simulator models reachability but gives no address for a peer's memory, which changes
//! only through simulated operations.

use hw::{Backend, Device, MemKind};

use crate::error::ShmemError;
use crate::memory::sym::{Element, Sym};
use crate::shmem::Shmem;
use crate::team::Team;

/// A peer's part of a symmetric object that this PE reaches with loads and stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PeerPtr {
    /// The peer, as a PE of the world team.
    pub world_pe: u32,
    /// The heap the object is in.
    pub heap: MemKind,
    /// The object's length in bytes.
    pub len_bytes: u64,
    /// The address this PE's code loads and stores the object's first byte at: with the CUDA
    /// backend, for an object of the device heap a GPU virtual address valid in kernels on
    /// this PE's GPU, for one of the host heap a host address (also valid in kernels, the
    /// memory being device-mapped). `None` where the backend has no address to give: the
    /// simulator, and the host backend, whose memory is atomic words.
    pub addr: Option<u64>,
}

impl<B: Backend> Shmem<B> {
    /// Where this PE reaches PE `pe`'s part of `sym` with loads and stores (`shmem_ptr`):
    /// `Some` for itself and for the PEs of [`Shmem::team_shared`], `None` for a PE reached
    /// only through a NIC.
    ///
    /// # Errors
    /// [`ShmemError::PeOutOfRange`]; an address error if `sym` is not a live symmetric object
    /// ([`ShmemError::NotInHeap`], `OutsideAllocation`, `Misaligned`, `FreedAllocation`).
    pub fn ptr<T: Element>(&self, sym: Sym<T>, pe: u32) -> Result<Option<PeerPtr>, ShmemError> {
        self.team_ptr(self.team_world(), sym, pe)
    }

    /// As [`Shmem::ptr`] with `pe` numbered in `team` (`shmem_team_ptr`).
    ///
    /// # Errors
    /// As [`Shmem::ptr`]; [`ShmemError::PeNotInTeam`] if `pe` is not below the team's size;
    /// [`ShmemError::TeamDestroyed`].
    pub fn team_ptr<T: Element>(
        &self,
        team: &Team,
        sym: Sym<T>,
        pe: u32,
    ) -> Result<Option<PeerPtr>, ShmemError> {
        let world_pe = team.to_world(pe)?;
        let range = self.remote_range(sym.access(), world_pe)?;
        if self.team_shared().members()?.index_of(world_pe).is_none() {
            return Ok(None);
        }
        Ok(Some(PeerPtr {
            world_pe,
            heap: range.kind,
            len_bytes: range.len,
            addr: self.device.load_store_addr(range),
        }))
    }
}
