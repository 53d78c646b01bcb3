//! Lowest-latency routes between PEs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use petgraph::graph::{EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;

use super::{LinkId, LinkKind, NodeKind, Topology};
use crate::types::Pe;

/// Which ordering and visibility rules a path follows (SPEC section 3).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum PathClass {
    /// A PE's own memory.
    Local,
    /// Load/store reachable over NVLink or PCIe peer-to-peer: writes become visible to
    /// everyone when they are delivered.
    LoadStore,
    /// Through a NIC: writes land in GPU memory through PCIe and may stay invisible to the
    /// GPU's SMs and NVLink peers until the owner runs a consistency step.
    Rdma,
}

/// One link crossed in one direction.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Hop {
    /// The link.
    pub link: LinkId,
    /// Whether the link is crossed from its first end to its second.
    pub forward: bool,
}

/// A route from one PE to another.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Path {
    /// The links crossed, in order; empty for a PE's own memory.
    pub hops: Vec<Hop>,
    /// The sum of the links' latencies in nanoseconds.
    pub latency_ns: u64,
    /// The smallest bandwidth along the path in bytes per second.
    pub bandwidth_bytes_per_s: u64,
    /// The rules the path follows.
    pub class: PathClass,
    /// How many NICs the path crosses.
    pub nics: u32,
}

/// The shortest-path tree from one PE.
#[derive(Clone, Debug)]
pub struct Routes {
    source: Pe,
    /// For each node, the edge that reaches it on the tree, if any.
    via: Vec<Option<EdgeIndex>>,
}

impl Routes {
    /// Dijkstra by latency; other GPUs are never expanded, so they are never transit nodes.
    /// Ties go to the lower node index, so routes are the same on every run.
    pub(super) fn compute(topology: &Topology, source: Pe) -> Routes {
        let graph = &topology.graph;
        let start = topology.gpu_node(source);
        let mut dist = vec![u64::MAX; graph.node_count()];
        let mut via = vec![None; graph.node_count()];
        let mut heap = BinaryHeap::new();
        dist[start.index()] = 0;
        heap.push(Reverse((0u64, start.index())));
        while let Some(Reverse((d, n))) = heap.pop() {
            if d > dist[n] {
                continue;
            }
            let node = NodeIndex::new(n);
            if node != start && matches!(graph[node].kind, NodeKind::Gpu { .. }) {
                continue;
            }
            for edge in graph.edges(node) {
                let next = if edge.source() == node {
                    edge.target()
                } else {
                    edge.source()
                };
                let nd = d + edge.weight().latency_ns;
                if nd < dist[next.index()] {
                    dist[next.index()] = nd;
                    via[next.index()] = Some(edge.id());
                    heap.push(Reverse((nd, next.index())));
                }
            }
        }
        Routes { source, via }
    }

    /// The PE these routes start from.
    pub fn source(&self) -> Pe {
        self.source
    }

    /// The route to `target`.
    ///
    /// # Panics
    /// If `target` is unreachable, which [`super::TopologyBuilder::build`] rules out.
    pub fn path_to(&self, topology: &Topology, target: Pe) -> Path {
        if target == self.source {
            return Path {
                hops: Vec::new(),
                latency_ns: 0,
                bandwidth_bytes_per_s: topology.timing.local_bytes_per_s,
                class: PathClass::Local,
                nics: 0,
            };
        }
        let graph = &topology.graph;
        let start = topology.gpu_node(self.source);
        let mut node = topology.gpu_node(target);
        let mut hops = Vec::new();
        let (mut latency_ns, mut bandwidth, mut rdma, mut nics) = (0, u64::MAX, false, 0);
        while node != start {
            let edge = self.via[node.index()].expect("build() checked that every PE is reachable");
            let (a, b) = graph.edge_endpoints(edge).expect("edge exists");
            let link = graph[edge];
            // We walk backwards: the hop goes from the other end towards `node`.
            let from = if b == node { a } else { b };
            hops.push(Hop {
                link: LinkId(edge.index() as u32),
                forward: b == node,
            });
            latency_ns += link.latency_ns;
            bandwidth = bandwidth.min(link.bandwidth_bytes_per_s);
            rdma |= link.kind == LinkKind::Ib;
            if matches!(graph[from].kind, NodeKind::Nic { .. }) {
                nics += 1;
            }
            node = from;
        }
        hops.reverse();
        let class = if rdma {
            PathClass::Rdma
        } else {
            PathClass::LoadStore
        };
        Path {
            hops,
            latency_ns,
            bandwidth_bytes_per_s: bandwidth,
            class,
            nics,
        }
    }
}
