//! The predefined teams, made at init from the topology alone (no communication): every PE
//! computes the same membership for the same team.

use hw::{Device, PathClass, Pe, Topology};

use crate::team::{Members, SlotLayout, Team, TeamConfig, TeamKind};

/// The teams every PE has from init to finalize, in slots 0, 1 and 2.
#[derive(Debug)]
pub(crate) struct Predefined {
    pub(crate) world: Team,
    pub(crate) shared: Team,
    pub(crate) node: Team,
}

/// The slots the predefined teams hold.
const PREDEFINED_SLOTS: u32 = 3;

/// The slots free on a PE at init, one bit each: slots below `teams_max` (at most 64, which
/// init checks) that no predefined team holds.
pub(crate) fn free_slots_at_init(teams_max: u32) -> u64 {
    let all = u64::MAX >> (64 - teams_max.min(64));
    all & !((1 << PREDEFINED_SLOTS) - 1)
}

impl Predefined {
    pub(crate) fn new<D: Device>(device: &D, layout: SlotLayout, config: TeamConfig) -> Predefined {
        let me = device.pe().0;
        let n_pes = device.n_pes();
        let topology = device.topology();
        let world = Members::Strided {
            start: 0,
            stride: 1,
            size: n_pes,
        };
        // Why not a look at every PE: this runs on every PE, `n²` looks per run.
        let node: Vec<u32> = topology
            .pes_of_host(topology.host_of(Pe(me)))
            .map(|pe| pe.0)
            .filter(|&pe| pe < n_pes)
            .collect();
        let shared = load_store_peers(topology, me, &node);
        let team = |kind, slot, members: Members| {
            let index = members
                .index_of(me)
                .expect("a predefined team holds the PE that makes it");
            Team::new(kind, slot, members, index, config, layout)
        };
        Predefined {
            world: team(TeamKind::World, 0, world),
            shared: team(TeamKind::Shared, 1, Members::from_list(shared)),
            node: team(TeamKind::Node, 2, Members::from_list(node)),
        }
    }
}

/// The PEs of `node` (this PE's host) whose memory `me` reaches with loads and stores.
fn load_store_peers(topology: &Topology, me: u32, node: &[u32]) -> Vec<u32> {
    let routes = topology.routes_from(Pe(me));
    node.iter()
        .copied()
        .filter(|&pe| {
            matches!(
                routes.path_to(topology, Pe(pe)).class,
                PathClass::Local | PathClass::LoadStore
            )
        })
        .collect()
}
