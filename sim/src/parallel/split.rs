//! Which PEs each partition of a parallel run owns, and the checks that make the split sound:
//! partitions hold whole hosts, and the links that operations through a NIC take (which the
//! network world reserves) are never taken by operations over NVLink (which partitions
//! reserve themselves).

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};
use std::ops::Range;

use hw::topology::{LinkKind, NodeKind};
use hw::{Path, PathClass, Pe, Topology};
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;

/// Consecutive ranges of PEs, one per partition, each of whole hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Split {
    /// Partition `p` owns PEs `bounds[p]..bounds[p + 1]`.
    bounds: Vec<u32>,
}

impl Split {
    /// Splits the first `n_pes` PEs of `topology` into `parts` partitions of whole hosts with
    /// about as many PEs each.
    ///
    /// # Errors
    /// If PEs of one host are not numbered together, if there are fewer hosts than
    /// partitions, or if the split is not sound for this topology ([`Split::check`]).
    pub(crate) fn by_hosts(topology: &Topology, n_pes: u32, parts: u32) -> Result<Split, String> {
        let hosts: Vec<u32> = (0..n_pes).map(|pe| topology.host_of(Pe(pe))).collect();
        // Where each host's PEs begin.
        let mut starts = vec![0];
        for pe in 1..n_pes {
            if hosts[pe as usize] != hosts[pe as usize - 1] {
                starts.push(pe);
            }
        }
        let n_hosts = starts.len() as u32;
        let distinct: BTreeSet<u32> = hosts.iter().copied().collect();
        if distinct.len() != starts.len() {
            return Err(format!(
                "a parallel run splits PEs by hosts, and {} numbers the PEs of a host apart",
                topology.name()
            ));
        }
        if parts > n_hosts {
            return Err(format!(
                "{parts} partitions need at least {parts} hosts, and these {n_pes} PEs of {} \
                 are on {n_hosts}: use fewer partitions or more PEs",
                topology.name()
            ));
        }
        let mut bounds = vec![0];
        for p in 1..parts {
            // The first host that starts at or after an even share, leaving a host for each
            // partition still to come.
            let share = u64::from(n_pes) * u64::from(p) / u64::from(parts);
            let min_host = bounds.len();
            let max_host = starts.len() - (parts - p) as usize;
            let host = starts
                .iter()
                .position(|&s| u64::from(s) >= share)
                .unwrap_or(max_host)
                .clamp(min_host, max_host);
            bounds.push(starts[host]);
        }
        bounds.push(n_pes);
        let split = Split { bounds };
        split.check(topology, &starts)?;
        Ok(split)
    }

    pub(crate) fn parts(&self) -> u32 {
        (self.bounds.len() - 1) as u32
    }

    /// The partition that owns `pe`.
    pub(crate) fn part_of(&self, pe: u32) -> u32 {
        (self.bounds.partition_point(|&b| b <= pe) - 1) as u32
    }

    /// The PEs partition `part` owns.
    pub(crate) fn pes_of(&self, part: u32) -> Range<u32> {
        self.bounds[part as usize]..self.bounds[part as usize + 1]
    }

    /// The PEs partition `part` owns; none for the network (`part` past the last).
    pub(crate) fn pes_of_part_or_none(&self, part: u32) -> Range<u32> {
        if part < self.parts() {
            self.pes_of(part)
        } else {
            0..0
        }
    }

    /// Checks that the split is sound: operations between partitions go through a NIC, and
    /// no link carries both operations through a NIC and operations that do not. Looks at
    /// every host's paths among its own PEs, and at paths through a NIC from each of its
    /// PEs to a PE of another host and back.
    fn check(&self, topology: &Topology, starts: &[u32]) -> Result<(), String> {
        let n_pes = *self.bounds.last().expect("bounds");
        let host_end = |h: usize| starts.get(h + 1).copied().unwrap_or(n_pes);
        // The links of paths through a NIC, and of paths not.
        let mut near = BTreeSet::new();
        let mut far = BTreeSet::new();
        let mut sort = |path: &Path| {
            let links = path.hops.iter().map(|hop| hop.link);
            match path.class {
                PathClass::Rdma => far.extend(links),
                PathClass::LoadStore | PathClass::Local => near.extend(links),
            }
        };
        for (h, &start) in starts.iter().enumerate() {
            let other = starts[(h + 1) % starts.len()];
            for pe in start..host_end(h) {
                let routes = topology.routes_from(Pe(pe));
                for peer in start..host_end(h) {
                    sort(&routes.path_to(topology, Pe(peer)));
                }
                if other != start {
                    for (from, to) in [(pe, other), (other, pe)] {
                        let path = topology.routes_from(Pe(from)).path_to(topology, Pe(to));
                        let crosses = self.part_of(from) != self.part_of(to);
                        if crosses && path.class != PathClass::Rdma {
                            return Err(format!(
                                "PEs {from} and {to} of {} reach each other without a NIC, and \
                                 a parallel run puts them in different partitions: use fewer \
                                 partitions, or none",
                                topology.name()
                            ));
                        }
                        sort(&path);
                    }
                }
            }
        }
        if let Some(link) = near.intersection(&far).next() {
            let (a, b) = topology.link_ends(*link);
            return Err(format!(
                "the link {a}-{b} of {} carries both operations through a NIC and operations \
                 that are not, which one partition and the network of a parallel run would \
                 both take: run it without partitions",
                topology.name()
            ));
        }
        Ok(())
    }
}

/// The least time between an operation through a NIC entering the network and its arrival,
/// or between a response starting back and its arrival: what partitions send each other
/// during a window of this length can only arrive after it.
///
/// Either trip costs at least its route's latency plus `nic_ns` per hop out of a NIC
/// (`World::enter_network`, `World::return_trip`), and a route goes through a NIC when it
/// crosses an InfiniBand link (`Path::class`). So the least cost of any walk from a GPU to a
/// GPU that crosses such a link is a bound for every route, found by a shortest-path search
/// from every GPU at once over (node, crossed yet) states. Any GPU reached counts, the one
/// it started from too, which can only lower the bound.
pub(crate) fn lookahead_ns(topology: &Topology, nic_ns: u64) -> u64 {
    let graph = topology.graph();
    let n = graph.node_count();
    // `best[2 * node + crossed]`: the least cost found to reach `node`, having crossed an
    // InfiniBand link or not.
    let mut best = vec![u64::MAX; 2 * n];
    let mut frontier = BinaryHeap::new();
    for node in graph.node_indices() {
        if matches!(graph[node].kind, NodeKind::Gpu { .. }) {
            best[2 * node.index()] = 0;
            frontier.push(Reverse((0, node.index(), false)));
        }
    }
    while let Some(Reverse((cost, at, crossed))) = frontier.pop() {
        if cost > best[2 * at + usize::from(crossed)] {
            continue;
        }
        let here = NodeIndex::new(at);
        if crossed && matches!(graph[here].kind, NodeKind::Gpu { .. }) {
            return cost.max(1);
        }
        let leaving_nic = matches!(graph[here].kind, NodeKind::Nic { .. });
        for edge in graph.edges(here) {
            let link = edge.weight();
            let next = if edge.source() == here {
                edge.target()
            } else {
                edge.source()
            };
            let next_cost = cost + link.latency_ns + if leaving_nic { nic_ns } else { 0 };
            let next_crossed = crossed || link.kind == LinkKind::Ib;
            let slot = &mut best[2 * next.index() + usize::from(next_crossed)];
            if next_cost < *slot {
                *slot = next_cost;
                frontier.push(Reverse((next_cost, next.index(), next_crossed)));
            }
        }
    }
    // No route crosses InfiniBand: nothing ever leaves a partition, and windows only pace
    // the partitions.
    u64::MAX / 4
}

#[cfg(test)]
mod tests {
    use super::Split;

    #[test]
    fn hosts_are_split_evenly_and_whole() {
        let topology = crate::topology::presets::preset("ib-4")
            .expect("preset")
            .topology;
        let split = Split::by_hosts(&topology, 32, 2).expect("split");
        assert_eq!(split.pes_of(0), 0..16);
        assert_eq!(split.pes_of(1), 16..32);
        assert_eq!(split.part_of(15), 0);
        assert_eq!(split.part_of(16), 1);
        let split = Split::by_hosts(&topology, 32, 3).expect("split");
        assert_eq!(split.parts(), 3);
        assert!((0..3).all(|p| split.pes_of(p).start.is_multiple_of(8)));
        let err = Split::by_hosts(&topology, 32, 5).expect_err("five partitions of four hosts");
        assert!(err.contains("at least 5 hosts"), "{err}");
    }

    /// On the presets: PCIe to the NIC, the NIC, InfiniBand to a leaf and back to a NIC of
    /// another host, and PCIe to its GPU (150 + 300 + 600 + 600 + 300 + 150 ns).
    #[test]
    fn the_lookahead_is_the_cheapest_route_through_a_nic() {
        let topology = crate::topology::presets::preset("ib-4")
            .expect("preset")
            .topology;
        assert_eq!(super::lookahead_ns(&topology, 300), 2_100);
        assert_eq!(super::lookahead_ns(&topology, 0), 1_500);
    }

    #[test]
    fn one_host_cannot_be_split() {
        let topology = crate::topology::presets::preset("hgx8")
            .expect("preset")
            .topology;
        let err = Split::by_hosts(&topology, 8, 2).expect_err("one host");
        assert!(err.contains("at least 2 hosts"), "{err}");
    }
}
