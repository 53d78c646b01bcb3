//! Lowest-latency routes between PEs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use petgraph::graph::{EdgeIndex, NodeIndex, UnGraph};
use petgraph::visit::EdgeRef;

use super::composed::Composed;
use super::{Link, LinkId, LinkKind, Node, NodeKind, Topology};
use crate::types::Pe;

/// Which ordering and visibility rules a path follows (docs/ordering.md).
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

/// Dijkstra's queue of (distance, node): a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan,
/// 1990), which a simulator computing one tree per PE needs: with a binary heap, trees for
/// thousands of PEs took seconds. It pops exactly what a binary heap of `Reverse((distance,
/// node))` pops, in the same order (the order decides ties between equal routes), given what
/// Dijkstra guarantees: pushes never go below the current distance (latencies are not
/// negative), and a node is never pushed twice at one distance (only a shorter distance
/// pushes it again). The entries at the current distance are popped smallest node first,
/// from `ties` (a set of nodes, filled when the distance is reached: fat trees put thousands
/// of nodes at one distance, which sorting took a fifth of a tree's time for) or `late`
/// (pushed at the current distance afterwards, which only zero-latency links do).
#[derive(Debug)]
struct Frontier {
    /// The current distance; every entry outside `ties` and `late` is farther.
    last: u64,
    /// The nodes at `last`: bit `node % 64` of word `node / 64`.
    ties: Vec<u64>,
    /// No word of `ties` below this one has a bit set.
    first_tie_word: usize,
    n_ties: usize,
    late: BinaryHeap<Reverse<u32>>,
    /// Bucket `i` holds entries whose distance differs from `last` first (from the top) in
    /// bit `i - 1`; bucket 0 is unused.
    buckets: [Vec<(u64, u32)>; 65],
}

impl Frontier {
    /// An empty queue for nodes below `n_nodes`.
    fn new(n_nodes: usize) -> Self {
        Frontier {
            last: 0,
            ties: vec![0; n_nodes.div_ceil(64)],
            first_tie_word: 0,
            n_ties: 0,
            late: BinaryHeap::new(),
            buckets: std::array::from_fn(|_| Vec::new()),
        }
    }

    fn bucket(&self, d: u64) -> usize {
        (u64::BITS - (self.last ^ d).leading_zeros()) as usize
    }

    fn push(&mut self, d: u64, node: u32) {
        debug_assert!(
            d >= self.last,
            "Dijkstra never pushes below the current distance"
        );
        if d == self.last {
            self.late.push(Reverse(node));
        } else {
            let i = self.bucket(d);
            self.buckets[i].push((d, node));
        }
    }

    /// The smallest node of `ties`.
    fn first_tie(&mut self) -> Option<u32> {
        if self.n_ties == 0 {
            return None;
        }
        while self.ties[self.first_tie_word] == 0 {
            self.first_tie_word += 1;
        }
        let word = self.first_tie_word;
        Some(word as u32 * 64 + self.ties[word].trailing_zeros())
    }

    fn pop(&mut self) -> Option<(u64, u32)> {
        if self.n_ties == 0 && self.late.is_empty() {
            let i = (1..self.buckets.len()).find(|&i| !self.buckets[i].is_empty())?;
            let moving = std::mem::take(&mut self.buckets[i]);
            self.last = moving.iter().map(|&(d, _)| d).min().expect("not empty");
            self.first_tie_word = self.ties.len();
            for &(d, node) in &moving {
                if d == self.last {
                    let word = node as usize / 64;
                    debug_assert_eq!(self.ties[word] >> (node % 64) & 1, 0, "pushed twice");
                    self.ties[word] |= 1 << (node % 64);
                    self.first_tie_word = self.first_tie_word.min(word);
                    self.n_ties += 1;
                } else {
                    let j = self.bucket(d);
                    self.buckets[j].push((d, node));
                }
            }
        }
        let node = match (self.first_tie(), self.late.peek()) {
            (Some(tie), Some(&Reverse(late))) if late < tie => self.late.pop().map(|r| r.0),
            (Some(tie), _) => {
                self.ties[tie as usize / 64] &= !(1 << (tie % 64));
                self.n_ties -= 1;
                Some(tie)
            }
            (None, _) => self.late.pop().map(|r| r.0),
        };
        node.map(|node| (self.last, node))
    }
}

/// Marks a node no tree edge reaches (the source itself).
pub(super) const NO_EDGE: u32 = u32::MAX;

/// The graph's edges from each node in one array, in the order `graph.edges(node)` yields
/// them (which decides between parallel links). Why: Dijkstra walks the whole graph once per
/// PE, and petgraph keeps a node's edges as a linked list whose reads scatter.
#[derive(Debug)]
pub(super) struct Adjacency {
    /// The steps from node `v` are `steps[first[v]..first[v + 1]]`.
    first: Vec<u32>,
    steps: Vec<Step>,
    /// Each node's index among the InfiniBand switches, or `u32::MAX`: where PEs' routes
    /// are composed from trees shared per switch (`composed.rs`).
    switch: Vec<u32>,
    n_switches: usize,
    /// Whether every link has a latency above zero, which composing routes needs.
    positive: bool,
}

/// One edge as seen from one of its ends.
#[derive(Clone, Copy, Debug)]
pub(super) struct Step {
    /// The node at the other end.
    pub(super) next: u32,
    /// The edge's index.
    pub(super) edge: u32,
    pub(super) latency_ns: u64,
    /// Whether `next` is a GPU, which routes never cross.
    pub(super) next_is_gpu: bool,
}

impl Adjacency {
    pub(super) fn of(graph: &UnGraph<Node, Link>) -> Adjacency {
        let mut first = Vec::with_capacity(graph.node_count() + 1);
        let mut steps = Vec::with_capacity(2 * graph.edge_count());
        for node in graph.node_indices() {
            first.push(steps.len() as u32);
            steps.extend(graph.edges(node).map(|edge| {
                let next = if edge.source() == node {
                    edge.target()
                } else {
                    edge.source()
                };
                Step {
                    next: next.index() as u32,
                    edge: edge.id().index() as u32,
                    latency_ns: edge.weight().latency_ns,
                    next_is_gpu: matches!(graph[next].kind, NodeKind::Gpu { .. }),
                }
            }));
        }
        first.push(steps.len() as u32);
        let mut n_switches = 0;
        let switch = graph
            .node_weights()
            .map(|node| match node.kind {
                NodeKind::IbSwitch { .. } => {
                    n_switches += 1;
                    n_switches as u32 - 1
                }
                _ => u32::MAX,
            })
            .collect();
        let positive = graph.edge_weights().all(|link| link.latency_ns > 0);
        Adjacency {
            first,
            steps,
            switch,
            n_switches,
            positive,
        }
    }

    pub(super) fn from(&self, node: usize) -> &[Step] {
        &self.steps[self.first[node] as usize..self.first[node + 1] as usize]
    }

    /// The node's index among the InfiniBand switches, if it is one.
    pub(super) fn switch_of(&self, node: usize) -> Option<usize> {
        let switch = self.switch[node];
        (switch != u32::MAX).then_some(switch as usize)
    }

    pub(super) fn n_switches(&self) -> usize {
        self.n_switches
    }

    /// Whether PEs' routes are composed from the switches' trees (`composed.rs`).
    fn composes(&self) -> bool {
        self.positive && self.n_switches > 0
    }
}

/// Dijkstra by latency from `start` over the whole graph: each node's distance and the edge
/// that reaches it ([`NO_EDGE`] for `start` and nodes it cannot reach). GPUs other than
/// `start` are never expanded, so they are never transit nodes; ties go to the node popped
/// first, the lower index at one distance, so trees are the same on every run.
pub(super) fn dijkstra(topology: &Topology, start: usize) -> (Vec<u64>, Vec<u32>) {
    let n_nodes = topology.graph.node_count();
    let mut dist = vec![u64::MAX; n_nodes];
    let mut via = vec![NO_EDGE; n_nodes];
    let mut frontier = Frontier::new(n_nodes);
    dist[start] = 0;
    frontier.push(0, start as u32);
    while let Some((d, n)) = frontier.pop() {
        if d > dist[n as usize] {
            continue;
        }
        for step in topology.adjacency.from(n as usize) {
            let next = step.next as usize;
            let nd = d + step.latency_ns;
            if nd < dist[next] {
                dist[next] = nd;
                via[next] = step.edge;
                // A GPU is a leaf: it would only be popped to be skipped.
                if !step.next_is_gpu {
                    frontier.push(nd, step.next);
                }
            }
        }
    }
    (dist, via)
}

/// The shortest-path tree from one PE.
#[derive(Clone, Debug)]
pub struct Routes {
    source: Pe,
    tree: Tree,
}

#[derive(Clone, Debug)]
enum Tree {
    /// For each node, the index of the edge that reaches it on the tree, or [`NO_EDGE`].
    /// A plain `u32` rather than `Option<EdgeIndex>` halves the table.
    Whole(Vec<u32>),
    /// Composed from the switches' shared trees (`composed.rs`): the same tree, in memory
    /// and time of the PE's neighbourhood rather than of the whole graph.
    Composed(Composed),
}

impl Routes {
    /// Dijkstra by latency ([`dijkstra`]); other GPUs are never expanded, so they are never
    /// transit nodes. Ties go to the lower node index, so routes are the same on every run.
    pub(super) fn compute(topology: &Topology, source: Pe) -> Routes {
        let start = topology.gpu_node(source).index();
        let tree = if topology.adjacency.composes() {
            Tree::Composed(Composed::new(topology, start))
        } else {
            Tree::Whole(dijkstra(topology, start).1)
        };
        Routes { source, tree }
    }

    /// The edge that reaches `node` on the tree, or [`NO_EDGE`].
    fn parent_edge(&self, topology: &Topology, node: usize) -> u32 {
        match &self.tree {
            Tree::Whole(via) => via[node],
            Tree::Composed(composed) => composed.parent_edge(topology, node),
        }
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
        let mut path = Path {
            hops: Vec::new(),
            latency_ns: 0,
            bandwidth_bytes_per_s: 0,
            class: PathClass::Local,
            nics: 0,
        };
        self.path_into(topology, target, &mut path);
        path
    }

    /// Calls `each` with every PE and its route (the source too, with its local route), in no
    /// particular order: the routes [`Routes::path_to`] returns, found in one walk down the
    /// tree instead of one walk up it per PE, for callers that need most of them.
    pub fn for_each_path(&self, topology: &Topology, mut each: impl FnMut(Pe, &Path)) {
        let Tree::Whole(via) = &self.tree else {
            // A composed tree finds each route in a few steps: no walk of the whole graph.
            let mut path = self.path_to(topology, self.source);
            for pe in 0..topology.n_gpus() {
                self.path_into(topology, Pe(pe), &mut path);
                each(Pe(pe), &path);
            }
            return;
        };
        let graph = &topology.graph;
        let n = graph.node_count();
        let parent = |node: usize| -> Option<(usize, EdgeIndex)> {
            let edge = via[node];
            (edge != NO_EDGE).then(|| {
                let edge = EdgeIndex::new(edge as usize);
                let (a, b) = graph.edge_endpoints(edge).expect("edge exists");
                let up = if b.index() == node { a } else { b };
                (up.index(), edge)
            })
        };
        // The tree's children of node `v` are `children[first[v]..first[v + 1]]`.
        let mut first = vec![0usize; n + 1];
        for node in 0..n {
            if let Some((up, _)) = parent(node) {
                first[up + 1] += 1;
            }
        }
        for v in 0..n {
            first[v + 1] += first[v];
        }
        let mut children = vec![(0, EdgeIndex::new(0)); first[n]];
        let mut next_free = first.clone();
        for node in 0..n {
            if let Some((up, edge)) = parent(node) {
                children[next_free[up]] = (node, edge);
                next_free[up] += 1;
            }
        }
        let mut pe_of = vec![None; n];
        for (pe, node) in topology.gpus.iter().enumerate() {
            pe_of[node.index()] = Some(Pe(pe as u32));
        }
        let mut path = Path {
            hops: Vec::new(),
            latency_ns: 0,
            bandwidth_bytes_per_s: topology.local_bytes_per_s,
            class: PathClass::Local,
            nics: 0,
        };
        each(self.source, &path);
        // Depth first; a frame is a node, its next child to visit, and the route to it.
        struct Frame {
            node: usize,
            child: usize,
            latency_ns: u64,
            bandwidth: u64,
            rdma: bool,
            nics: u32,
        }
        let start = topology.gpu_node(self.source).index();
        let mut stack = vec![Frame {
            node: start,
            child: first[start],
            latency_ns: 0,
            bandwidth: u64::MAX,
            rdma: false,
            nics: 0,
        }];
        while let Some(top) = stack.last_mut() {
            if top.child == first[top.node + 1] {
                stack.pop();
                path.hops.pop();
                continue;
            }
            let (node, edge) = children[top.child];
            top.child += 1;
            let link = graph[edge];
            let (_, b) = graph.edge_endpoints(edge).expect("edge exists");
            let from_nic = matches!(graph[NodeIndex::new(top.node)].kind, NodeKind::Nic { .. });
            let frame = Frame {
                node,
                child: first[node],
                latency_ns: top.latency_ns + link.latency_ns,
                bandwidth: top.bandwidth.min(link.bandwidth_bytes_per_s),
                rdma: top.rdma || link.kind == LinkKind::Ib,
                nics: top.nics + u32::from(from_nic),
            };
            path.hops.push(Hop {
                link: LinkId(edge.index() as u32),
                forward: b.index() == node,
            });
            if let Some(pe) = pe_of[node] {
                path.latency_ns = frame.latency_ns;
                path.bandwidth_bytes_per_s = frame.bandwidth;
                path.class = if frame.rdma {
                    PathClass::Rdma
                } else {
                    PathClass::LoadStore
                };
                path.nics = frame.nics;
                each(pe, &path);
            }
            stack.push(frame);
        }
    }

    /// Like [`Routes::path_to`], but overwrites `path`, reusing its hop buffer: for callers
    /// that route every operation and should not allocate for it.
    ///
    /// # Panics
    /// If `target` is unreachable, which [`super::TopologyBuilder::build`] rules out.
    pub fn path_into(&self, topology: &Topology, target: Pe, path: &mut Path) {
        path.hops.clear();
        if target == self.source {
            path.latency_ns = 0;
            path.bandwidth_bytes_per_s = topology.local_bytes_per_s;
            path.class = PathClass::Local;
            path.nics = 0;
            return;
        }
        let graph = &topology.graph;
        let start = topology.gpu_node(self.source);
        let mut node = topology.gpu_node(target);
        let (mut latency_ns, mut bandwidth, mut rdma, mut nics) = (0, u64::MAX, false, 0);
        while node != start {
            let edge = self.parent_edge(topology, node.index());
            assert_ne!(edge, NO_EDGE, "build() checked that every PE is reachable");
            let edge = EdgeIndex::new(edge as usize);
            let (a, b) = graph.edge_endpoints(edge).expect("edge exists");
            let link = graph[edge];
            // We walk backwards: the hop goes from the other end towards `node`.
            let from = if b == node { a } else { b };
            path.hops.push(Hop {
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
        path.hops.reverse();
        path.latency_ns = latency_ns;
        path.bandwidth_bytes_per_s = bandwidth;
        path.class = if rdma {
            PathClass::Rdma
        } else {
            PathClass::LoadStore
        };
        path.nics = nics;
    }
}

#[cfg(test)]
mod tests;
