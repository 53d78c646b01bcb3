//! Agreement on a collective call: one team gather, after which every member has the same
//! verdict on the call's arguments and the same inputs to the plan.
//!
//! Each member contributes two words: a digest of the arguments every member must pass alike
//! (which collective, element type, operator, root, strides, buffers), and its element count
//! with two flags, whether its own checks passed and whether it reaches every member with
//! loads and stores. A member whose checks failed returns its own error and every other member
//! [`ShmemError::CollectiveFailedOnPeer`]; differing digests or counts fail every member with
//! [`ShmemError::CollectiveMismatch`]. Either way no data has moved and no counter was
//! touched, so the team is usable for the next call.

use hw::{Backend, Device, Pe, Topology};

use crate::TRACING_TARGET;
use crate::collectives::Kind;
use crate::collectives::call::Call;
use crate::collectives::plan::Reach;
use crate::error::ShmemError;
use crate::memory::call_agreement::{by_pe, pe_list};
use crate::shmem::Shmem;
use crate::team::{Members, Team, fingerprint};

/// The largest element count the gather carries: the word's top 62 bits.
const MAX_COUNT: u64 = u64::MAX >> 2;
const CHECKS_PASSED: u64 = 1 << 1;
const LOAD_STORE: u64 = 1;

/// What one member brings to the agreement.
pub(crate) struct Proposal<V> {
    pub(crate) kind: Kind,
    /// The arguments every member must pass alike, as words.
    pub(crate) shared: Vec<u64>,
    /// This member's element count; every member's must be equal unless `kind` is collect.
    pub(crate) nelems: u64,
    /// The member's own checks: what the call needs from them, or why it cannot run.
    pub(crate) checked: Result<V, ShmemError>,
}

impl<B: Backend> Shmem<B> {
    /// Agrees on `proposal` with every member of `team`, and returns the call and what the
    /// member's checks gave.
    ///
    /// # Errors
    /// [`ShmemError::TeamDestroyed`]; this member's check error, or
    /// [`ShmemError::CollectiveFailedOnPeer`] if another member's checks failed;
    /// [`ShmemError::CollectiveMismatch`] if the members' arguments or counts differ;
    /// [`ShmemError::Queue`] if a member does not arrive.
    pub(crate) fn agree_collective<'a, V>(
        &'a self,
        team: &'a Team,
        proposal: Proposal<V>,
    ) -> Result<(Call<'a, B>, V), ShmemError> {
        let members = team.members()?;
        let me = team.my_pe()?;
        let (name, arguments, counts) = proposal.kind.names();
        // Why a quiet: peers may read this member's source, which it may have just stored
        // into; its stores are visible to peers only after a quiet (docs/ordering.md).
        self.quiet()?;
        let mut words = vec![proposal.kind as u64];
        words.extend(&proposal.shared);
        let flags = if proposal.checked.is_ok() {
            CHECKS_PASSED
        } else {
            0
        } | if self.reaches_by_load_store(members)? {
            LOAD_STORE
        } else {
            0
        };
        let mine = [
            fingerprint(&words),
            proposal.nelems.min(MAX_COUNT) << 2 | flags,
        ];
        let all = self.team_gather(team, mine)?;
        let refused = members_where(&all, |cell| cell[1] & CHECKS_PASSED == 0);
        if !refused.is_empty() {
            return Err(proposal.checked.err().unwrap_or_else(|| {
                ShmemError::CollectiveFailedOnPeer {
                    op: name,
                    pes: pe_list(&refused),
                }
            }));
        }
        let value = proposal.checked?;
        let differing = members_where(&all, |cell| cell[0] != all[0][0]);
        if !differing.is_empty() {
            return Err(ShmemError::CollectiveMismatch {
                what: arguments,
                values: format!(
                    "team {} passed arguments (element type, operator, root, strides or \
                     buffers) other than team PE 0's",
                    pe_list(&differing)
                ),
            });
        }
        let lens: Vec<u64> = all.iter().map(|cell| cell[1] >> 2).collect();
        if proposal.kind != Kind::Collect && lens.iter().any(|&len| len != lens[0]) {
            return Err(ShmemError::CollectiveMismatch {
                what: counts,
                values: format!(
                    "in team numbering, {}",
                    by_pe(lens.iter().map(|len| format!("{len} elements")))
                ),
            });
        }
        let reach = if all.iter().all(|cell| cell[1] & LOAD_STORE != 0) {
            Reach::LoadStore
        } else {
            Reach::Network
        };
        let call = Call {
            shmem: self,
            team,
            members,
            kind: proposal.kind,
            me,
            n: members.len(),
            reach,
            node_run: node_run(self.device.topology(), members),
            lens,
        };
        tracing::debug!(
            target: TRACING_TARGET,
            pe = self.my_pe,
            op = name,
            team = ?team.kind(),
            n_pes = call.n,
            ?reach,
            node_run = call.node_run,
            "collective agreed"
        );
        Ok((call, value))
    }

    /// Whether this PE reaches every member with loads and stores: whether all of them are
    /// in its shared team.
    fn reaches_by_load_store(&self, members: &Members) -> Result<bool, ShmemError> {
        let shared = self.team_shared().members()?;
        Ok(members.len() <= shared.len()
            && (0..members.len()).all(|i| shared.index_of(members.world_pe(i)).is_some()))
    }
}

/// How many consecutive members, from team PE 0 on, share team PE 0's host. Every member
/// computes the same from the topology they share.
fn node_run(topology: &Topology, members: &Members) -> u32 {
    let host = |i| topology.host_of(Pe(members.world_pe(i)));
    let first = host(0);
    (1..members.len())
        .find(|&i| host(i) != first)
        .unwrap_or(members.len())
}

/// The team indices whose gathered cell satisfies `pred`.
fn members_where(all: &[[u64; 2]], pred: impl Fn(&[u64; 2]) -> bool) -> Vec<u32> {
    (0..)
        .zip(all)
        .filter(|(_, c)| pred(c))
        .map(|(i, _)| i)
        .collect()
}

/// A word that names type `T`, for the digest: members that pass different element types
/// (or operators) disagree.
pub(crate) fn type_word<T: ?Sized>() -> u64 {
    let name: Vec<u64> = std::any::type_name::<T>().bytes().map(u64::from).collect();
    fingerprint(&name)
}
