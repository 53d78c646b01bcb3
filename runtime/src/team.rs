//! Teams: ordered subsets of the run's PEs that collectives, contexts and PE numbers refer
//! to (OpenSHMEM 1.5 §9.4).
//!
//! [`Team`] is a handle shared by reference counting; every operation on it checks that it
//! was not destroyed. The predefined teams (world, shared, node) exist from init to
//! finalize; the others come from splitting a parent (`split.rs`), which picks a free slot
//! of the heap's team areas (`area.rs`) that all new members agree on; `among.rs` makes a
//! team that only its members call for (OpenSHMEM's active sets). `barrier.rs` has the
//! team barrier and the small gather every other team collective is built on.

mod among;
mod area;
mod barrier;
mod members;
mod predefined;
mod split;

use std::cell::Cell;
use std::fmt;
use std::rc::Rc;

pub use among::TEAM_CREATE_SCRATCH_WORDS;
pub(crate) use area::{COLLECTIVE_COUNTERS, GATHER_WORDS, SlotArea, SlotLayout};
pub(crate) use barrier::{name_team_counters, rounds};
pub(crate) use members::Members;
pub(crate) use predefined::{Predefined, free_slots_at_init};
pub(crate) use split::fingerprint;

use crate::error::ShmemError;

/// What a team is asked to support (`shmem_team_config_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TeamConfig {
    /// How many contexts at most may be created on the team at once
    /// ([`crate::Shmem::team_create_ctx`]).
    pub num_contexts: u32,
}

impl Default for TeamConfig {
    fn default() -> Self {
        TeamConfig { num_contexts: 8 }
    }
}

/// Which kind of team a handle is, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TeamKind {
    /// `SHMEM_TEAM_WORLD`: every PE.
    World,
    /// `SHMEM_TEAM_SHARED`: the PEs whose memory this PE reaches with loads and stores.
    Shared,
    /// `SHMEMX_TEAM_NODE`: the PEs on this PE's host.
    Node,
    /// A team split from another.
    Split,
}

impl TeamKind {
    /// The team's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            TeamKind::World => "TEAM_WORLD",
            TeamKind::Shared => "TEAM_SHARED",
            TeamKind::Node => "TEAM_NODE",
            TeamKind::Split => "a split team",
        }
    }
}

/// A team this PE belongs to. Cloning shares the handle; [`crate::Shmem::team_destroy`]
/// ends it for every clone.
#[derive(Clone)]
pub struct Team {
    inner: Rc<TeamInner>,
}

struct TeamInner {
    kind: TeamKind,
    slot: u32,
    members: Members,
    my_index: u32,
    config: TeamConfig,
    area: SlotArea,
    sync_epoch: Cell<u64>,
    gather_epoch: Cell<u64>,
    /// Per collective counter, the arrivals reserved so far (`Team::reserve_arrivals`).
    collective_arrivals: [Cell<u64>; COLLECTIVE_COUNTERS as usize],
    live_contexts: Cell<u32>,
    destroyed: Cell<bool>,
}

impl fmt::Debug for Team {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Team")
            .field("kind", &self.inner.kind)
            .field("slot", &self.inner.slot)
            .field("members", &self.inner.members)
            .field("my_pe", &self.inner.my_index)
            .field("destroyed", &self.inner.destroyed.get())
            .finish()
    }
}

impl Team {
    pub(crate) fn new(
        kind: TeamKind,
        slot: u32,
        members: Members,
        my_index: u32,
        config: TeamConfig,
        layout: SlotLayout,
    ) -> Team {
        Team {
            inner: Rc::new(TeamInner {
                kind,
                slot,
                members,
                my_index,
                config,
                area: layout.area(slot),
                sync_epoch: Cell::new(0),
                gather_epoch: Cell::new(0),
                collective_arrivals: Default::default(),
                live_contexts: Cell::new(0),
                destroyed: Cell::new(false),
            }),
        }
    }

    /// This PE's number in the team (`shmem_team_my_pe`).
    ///
    /// # Errors
    /// [`ShmemError::TeamDestroyed`] after [`crate::Shmem::team_destroy`].
    pub fn my_pe(&self) -> Result<u32, ShmemError> {
        Ok(self.live()?.my_index)
    }

    /// The number of PEs in the team (`shmem_team_n_pes`).
    ///
    /// # Errors
    /// [`ShmemError::TeamDestroyed`] after [`crate::Shmem::team_destroy`].
    pub fn n_pes(&self) -> Result<u32, ShmemError> {
        Ok(self.live()?.members.len())
    }

    /// The configuration the team was created with (`shmem_team_get_config`).
    ///
    /// # Errors
    /// [`ShmemError::TeamDestroyed`] after [`crate::Shmem::team_destroy`].
    pub fn config(&self) -> Result<TeamConfig, ShmemError> {
        Ok(self.live()?.config)
    }

    /// Which kind of team this is.
    pub fn kind(&self) -> TeamKind {
        self.inner.kind
    }

    /// The world PE of this team's PE `pe`.
    ///
    /// # Errors
    /// [`ShmemError::TeamDestroyed`]; [`ShmemError::PeNotInTeam`] if `pe` is not below
    /// [`Team::n_pes`] ([`ShmemError::PeOutOfRange`] on the world team).
    pub(crate) fn to_world(&self, pe: u32) -> Result<u32, ShmemError> {
        let inner = self.live()?;
        if pe < inner.members.len() {
            Ok(inner.members.world_pe(pe))
        } else if inner.kind == TeamKind::World {
            Err(ShmemError::PeOutOfRange {
                pe,
                n_pes: inner.members.len(),
            })
        } else {
            Err(ShmemError::PeNotInTeam {
                pe,
                team: inner.kind.name(),
                n_pes: inner.members.len(),
            })
        }
    }

    /// The team's members; errors as [`Team::my_pe`].
    pub(crate) fn members(&self) -> Result<&Members, ShmemError> {
        Ok(&self.live()?.members)
    }

    /// The team's slot: the same on every member, below 64, and shared only by teams that
    /// have no PE in common (`team/area.rs`), so device code can keep a team's words by it.
    pub fn slot(&self) -> u32 {
        self.inner.slot
    }

    pub(crate) fn area(&self) -> SlotArea {
        self.inner.area
    }

    /// Reserves `arrivals` more arrivals on this PE's collective counter `index` for the
    /// collective call starting now, and returns how many earlier calls reserved: the
    /// counter holds that base plus `k` once this call's `k`-th arrival is in.
    ///
    /// Why counts rather than epochs: a call may bring a PE several arrivals on one counter
    /// (a ring step each), or none (the root of a broadcast), and counters only grow.
    pub(crate) fn reserve_arrivals(&self, index: u32, arrivals: u64) -> u64 {
        let reserved = &self.inner.collective_arrivals[index as usize];
        let base = reserved.get();
        reserved.set(base + arrivals);
        base
    }

    pub(crate) fn next_sync_epoch(&self) -> u64 {
        next(&self.inner.sync_epoch)
    }

    pub(crate) fn next_gather_epoch(&self) -> u64 {
        next(&self.inner.gather_epoch)
    }

    /// Counts a context created on the team; errors when it has
    /// [`TeamConfig::num_contexts`] already.
    pub(crate) fn add_context(&self) -> Result<(), ShmemError> {
        let inner = self.live()?;
        let live = inner.live_contexts.get();
        if live >= inner.config.num_contexts {
            return Err(ShmemError::ContextsExhausted {
                team: inner.kind.name(),
                max: inner.config.num_contexts,
            });
        }
        inner.live_contexts.set(live + 1);
        Ok(())
    }

    /// Forgets a context of the team.
    pub(crate) fn remove_context(&self) {
        let live = &self.inner.live_contexts;
        live.set(live.get().saturating_sub(1));
    }

    pub(crate) fn mark_destroyed(&self) {
        self.inner.destroyed.set(true);
    }

    /// Whether two handles are the same team.
    pub fn same_as(&self, other: &Team) -> bool {
        Rc::ptr_eq(&self.inner, &other.inner)
    }

    fn live(&self) -> Result<&TeamInner, ShmemError> {
        if self.inner.destroyed.get() {
            Err(ShmemError::TeamDestroyed {
                team: self.inner.kind.name(),
            })
        } else {
            Ok(&self.inner)
        }
    }
}

fn next(epoch: &Cell<u64>) -> u64 {
    let value = epoch.get() + 1;
    epoch.set(value);
    value
}
