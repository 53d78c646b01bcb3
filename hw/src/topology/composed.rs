//! A PE's routes composed from a small search around its GPU and trees from the fabric's
//! switches that every PE shares, instead of one walk of the whole graph per PE.
//!
//! Why: a simulator of thousands of PEs on a fat tree computed a tree over every node for
//! every sending PE, `n` walks of a graph of about `2n` nodes; the trees from the switches
//! are one per switch, and a PE's own search stops at the first switch.
//!
//! Why the routes are the same as one Dijkstra from the PE ([`super::route::dijkstra`]): with
//! every latency above zero, that search takes nodes in order of (distance, index), so the
//! edge that reaches a node is the first edge of least latency from its first tight
//! neighbour in that order (a neighbour whose distance plus the edge's latency is the node's
//! distance; GPUs other than the source never count, as they are not expanded). A path from
//! the source either stays in the search around it (`near`, which stops at switches) or
//! leaves it at a switch it reached (`entries`), so the distance to a node is the least of
//! `near`'s and each entry's distance plus the entry's tree's. Where exactly one of those
//! gives the least, every tight neighbour is tight in it too and in the same order, so its
//! edge is the answer; where several tie, [`Composed::tie_edge`] applies the rule itself.
//! A topology with a zero-latency link, or without switches, gets the whole search.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;

use super::Topology;
use super::route::{NO_EDGE, dijkstra};

/// The shortest-path tree from one switch over the whole graph, GPUs as leaves.
#[derive(Debug)]
pub(super) struct SwitchTree {
    /// Per node: its distance from the switch and the edge that reaches it. One array, not
    /// two: a route reads both for each of its hops, from trees of megabytes.
    nodes: Vec<(u64, u32)>,
}

impl SwitchTree {
    pub(super) fn compute(topology: &Topology, switch: usize) -> SwitchTree {
        let (dist, via) = dijkstra(topology, switch);
        SwitchTree {
            nodes: dist.into_iter().zip(via).collect(),
        }
    }

    fn dist(&self, node: usize) -> u64 {
        self.nodes[node].0
    }
}

/// The routes from one GPU, composed.
#[derive(Clone, Debug)]
pub(super) struct Composed {
    /// The GPU's node.
    start: u32,
    /// The search from the GPU that expands neither switches nor other GPUs: every node it
    /// reached, with its distance and the edge that reaches it, by node.
    near: Vec<(u32, u64, u32)>,
    /// The switches `near` reached, with their distance, and the tree from each.
    entries: Vec<(u64, Arc<SwitchTree>)>,
}

impl Composed {
    pub(super) fn new(topology: &Topology, start: usize) -> Composed {
        let adjacency = &topology.adjacency;
        let mut best: HashMap<u32, (u64, u32)> = HashMap::new();
        let mut frontier = BinaryHeap::new();
        best.insert(start as u32, (0, NO_EDGE));
        frontier.push(Reverse((0u64, start as u32)));
        while let Some(Reverse((d, n))) = frontier.pop() {
            if d > best[&n].0 {
                continue;
            }
            for step in adjacency.from(n as usize) {
                let nd = d + step.latency_ns;
                let known = best.get(&step.next).map_or(u64::MAX, |&(known, _)| known);
                if nd < known {
                    best.insert(step.next, (nd, step.edge));
                    if !step.next_is_gpu && adjacency.switch_of(step.next as usize).is_none() {
                        frontier.push(Reverse((nd, step.next)));
                    }
                }
            }
        }
        let mut near: Vec<(u32, u64, u32)> = best
            .into_iter()
            .map(|(node, (d, edge))| (node, d, edge))
            .collect();
        near.sort_unstable_by_key(|&(node, _, _)| node);
        let entries = near
            .iter()
            .filter_map(|&(node, d, _)| {
                let switch = adjacency.switch_of(node as usize)?;
                Some((d, topology.switch_tree(switch, node as usize)))
            })
            .collect();
        Composed {
            start: start as u32,
            near,
            entries,
        }
    }

    fn near(&self, node: usize) -> Option<(u64, u32)> {
        let at = self
            .near
            .binary_search_by_key(&(node as u32), |&(n, _, _)| n)
            .ok()?;
        let (_, d, edge) = self.near[at];
        Some((d, edge))
    }

    /// The distance from the GPU to `node`; `u64::MAX` if it cannot be reached.
    fn distance(&self, node: usize) -> u64 {
        let near = self.near(node).map_or(u64::MAX, |(d, _)| d);
        self.entries
            .iter()
            .map(|(offset, tree)| offset.saturating_add(tree.dist(node)))
            .fold(near, u64::min)
    }

    /// The edge that reaches `node` (not the GPU itself) on the GPU's tree, or [`NO_EDGE`].
    pub(super) fn parent_edge(&self, topology: &Topology, node: usize) -> u32 {
        let d = self.distance(node);
        if d == u64::MAX {
            return NO_EDGE;
        }
        let near = self.near(node).filter(|&(near_d, _)| near_d == d);
        let mut achievers = usize::from(near.is_some());
        let mut through = None;
        // An entry's own switch (distance 0 in its tree) is reached by `near`, never
        // through itself: every path through it to there is longer.
        for (offset, tree) in &self.entries {
            if tree.dist(node) != 0 && offset.saturating_add(tree.dist(node)) == d {
                achievers += 1;
                through = Some(tree);
            }
        }
        match (achievers, near, through) {
            (1, Some((_, edge)), _) => edge,
            (1, None, Some(tree)) => tree.nodes[node].1,
            _ => self.tie_edge(topology, node, d),
        }
    }

    /// The rule itself: the first least-latency edge to `node` from its tight neighbour of
    /// least (distance, index).
    fn tie_edge(&self, topology: &Topology, node: usize, d: u64) -> u32 {
        let adjacency = &topology.adjacency;
        let mut first: Option<(u64, u32)> = None;
        for step in adjacency.from(node) {
            if step.next_is_gpu && step.next != self.start {
                continue;
            }
            let du = self.distance(step.next as usize);
            let key = (du, step.next);
            if du != u64::MAX && du + step.latency_ns == d && first.is_none_or(|f| key < f) {
                first = Some(key);
            }
        }
        let Some((_, up)) = first else {
            return NO_EDGE;
        };
        let mut edge = (u64::MAX, NO_EDGE);
        for step in adjacency.from(up as usize) {
            if step.next as usize == node && step.latency_ns < edge.0 {
                edge = (step.latency_ns, step.edge);
            }
        }
        edge.1
    }
}
