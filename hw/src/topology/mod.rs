//! The machine a run happens on: GPUs, switches, NICs and the links between them.
//!
//! A [`Topology`] is an undirected graph. Each GPU is one PE; PEs are numbered in the order
//! their GPUs were added. Links are full duplex: each direction has the link's bandwidth.
//! Routes between PEs never pass through a third GPU (GPUs do not forward traffic).

mod composed;
mod route;
mod shapes;

use std::sync::{Arc, OnceLock};

use petgraph::graph::{EdgeIndex, NodeIndex, UnGraph};

use crate::types::Pe;

pub use route::{Hop, Path, PathClass, Routes};
pub use shapes::{ClusterLinks, NV18};

/// What a vertex of the topology is.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum NodeKind {
    /// A GPU; each GPU is one PE.
    Gpu {
        /// The host (node) the GPU is in.
        host: u32,
    },
    /// An NVSwitch (or the set of NVSwitches of one host, modelled as one crossbar).
    NvSwitch {
        /// The host the switch is in.
        host: u32,
    },
    /// A PCIe switch or root complex.
    PcieSwitch {
        /// The host the switch is in.
        host: u32,
    },
    /// An RDMA network adapter.
    Nic {
        /// The host the adapter is in.
        host: u32,
    },
    /// An InfiniBand switch.
    IbSwitch {
        /// Its tier in the fat tree: 0 for leaves.
        tier: u32,
    },
}

impl NodeKind {
    /// A lower-case word naming the kind, as used in topology files.
    pub fn word(self) -> &'static str {
        match self {
            NodeKind::Gpu { .. } => "gpu",
            NodeKind::NvSwitch { .. } => "nvswitch",
            NodeKind::PcieSwitch { .. } => "pcie-switch",
            NodeKind::Nic { .. } => "nic",
            NodeKind::IbSwitch { .. } => "ib-switch",
        }
    }
}

/// A vertex of the topology.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Node {
    /// A unique name ("gpu3", "node2.nic1", "spine0").
    pub name: String,
    /// What it is.
    pub kind: NodeKind,
}

/// The technology of a link; it decides the ordering rules of paths that use it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum LinkKind {
    /// NVLink, GPU to GPU or GPU to NVSwitch.
    NvLink,
    /// PCIe.
    Pcie,
    /// InfiniBand.
    Ib,
}

impl LinkKind {
    /// A lower-case word naming the kind, as used in topology files.
    pub fn word(self) -> &'static str {
        match self {
            LinkKind::NvLink => "nvlink",
            LinkKind::Pcie => "pcie",
            LinkKind::Ib => "ib",
        }
    }
}

/// An edge of the topology.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Link {
    /// The technology.
    pub kind: LinkKind,
    /// One-way latency of the link in nanoseconds.
    pub latency_ns: u64,
    /// Bandwidth of each direction in bytes per second.
    pub bandwidth_bytes_per_s: u64,
}

/// A Hopper-class GPU's copy rate within its own memory when a topology names none, in bytes
/// per second; the presets give the H200's measured rate (docs/targets.md).
pub const DEFAULT_LOCAL_BYTES_PER_S: u64 = 3_000_000_000_000;

/// The identifier of a link: stable for the life of a topology.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct LinkId(pub u32);

/// An invalid topology.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    /// Two nodes share a name.
    #[error("two nodes are named {0:?}; give each node its own name")]
    DuplicateName(String),
    /// No GPU, so no PE.
    #[error("the topology has no GPU; add at least one node of kind \"gpu\"")]
    NoGpu,
    /// A link with zero bandwidth or joining a node to itself.
    #[error("link {a:?} - {b:?} is invalid: {reason}")]
    BadLink {
        /// One end.
        a: String,
        /// The other end.
        b: String,
        /// What is wrong.
        reason: String,
    },
    /// Two GPUs with no route between them that avoids other GPUs.
    #[error(
        "no route from {a:?} to {b:?} (routes may not pass through another GPU); \
         link them directly or through a switch"
    )]
    Unreachable {
        /// One GPU.
        a: String,
        /// The other GPU.
        b: String,
    },
}

/// The machine a run happens on.
#[derive(Clone, Debug)]
pub struct Topology {
    name: String,
    graph: UnGraph<Node, Link>,
    gpus: Vec<NodeIndex>,
    local_bytes_per_s: u64,
    /// Each PE's routes, computed on first use and shared by whoever asks again (the
    /// runtime's teams and the simulator's network ask for the same ones): the graph never
    /// changes after [`TopologyBuilder::build`], and a tree is a walk of the whole graph.
    routes: Arc<[OnceLock<Arc<Routes>>]>,
    /// The tree from each InfiniBand switch, computed on first use: PEs' routes are composed
    /// from them (`composed.rs`), so a run walks the graph once per switch, not once per PE.
    switch_trees: Arc<[OnceLock<Arc<composed::SwitchTree>>]>,
    /// The graph's edges laid out for those walks.
    adjacency: Arc<route::Adjacency>,
    /// Every PE as (its host, itself), sorted: the PEs of one host without a look at all.
    by_host: Arc<[(u32, u32)]>,
}

/// Builds a [`Topology`].
#[derive(Clone, Debug)]
pub struct TopologyBuilder {
    name: String,
    graph: UnGraph<Node, Link>,
    local_bytes_per_s: u64,
}

impl TopologyBuilder {
    /// Starts an empty topology called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        TopologyBuilder {
            name: name.into(),
            graph: UnGraph::default(),
            local_bytes_per_s: DEFAULT_LOCAL_BYTES_PER_S,
        }
    }

    /// Adds a node and returns its index.
    pub fn node(&mut self, name: impl Into<String>, kind: NodeKind) -> NodeIndex {
        self.graph.add_node(Node {
            name: name.into(),
            kind,
        })
    }

    /// Adds a link between two nodes.
    pub fn link(&mut self, a: NodeIndex, b: NodeIndex, link: Link) -> LinkId {
        LinkId(self.graph.add_edge(a, b, link).index() as u32)
    }

    /// Sets how fast each GPU copies within its own memory, in bytes per second.
    pub fn local_bytes_per_s(&mut self, bytes_per_s: u64) -> &mut Self {
        self.local_bytes_per_s = bytes_per_s;
        self
    }

    /// Checks the topology and finishes it.
    ///
    /// # Errors
    /// [`TopologyError`] naming the first problem found.
    pub fn build(self) -> Result<Topology, TopologyError> {
        let graph = self.graph;
        let mut names = std::collections::BTreeSet::new();
        for node in graph.node_weights() {
            if !names.insert(node.name.as_str()) {
                return Err(TopologyError::DuplicateName(node.name.clone()));
            }
        }
        for edge in graph.edge_indices() {
            let (a, b) = graph.edge_endpoints(edge).expect("edge exists");
            let link = graph[edge];
            let bad = |reason: &str| TopologyError::BadLink {
                a: graph[a].name.clone(),
                b: graph[b].name.clone(),
                reason: reason.to_string(),
            };
            if a == b {
                return Err(bad("it joins a node to itself"));
            }
            if link.bandwidth_bytes_per_s == 0 {
                return Err(bad("its bandwidth is zero"));
            }
        }
        let gpus: Vec<NodeIndex> = graph
            .node_indices()
            .filter(|&n| matches!(graph[n].kind, NodeKind::Gpu { .. }))
            .collect();
        if gpus.is_empty() {
            return Err(TopologyError::NoGpu);
        }
        let adjacency = Arc::new(route::Adjacency::of(&graph));
        let mut by_host: Vec<(u32, u32)> = (0..)
            .zip(&gpus)
            .map(|(pe, &node)| match graph[node].kind {
                NodeKind::Gpu { host } => (host, pe),
                _ => unreachable!("gpus holds only GPU nodes"),
            })
            .collect();
        by_host.sort_unstable();
        let topology = Topology {
            name: self.name,
            graph,
            routes: gpus.iter().map(|_| OnceLock::new()).collect(),
            switch_trees: (0..adjacency.n_switches())
                .map(|_| OnceLock::new())
                .collect(),
            adjacency,
            by_host: by_host.into(),
            gpus,
            local_bytes_per_s: self.local_bytes_per_s,
        };
        topology.check_reachable()?;
        Ok(topology)
    }
}

impl Topology {
    /// The topology's name ("h200x2", "hgx8", "ib-4", or the one a file gives).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many GPUs, and so how many PEs at most.
    pub fn n_gpus(&self) -> u32 {
        self.gpus.len() as u32
    }

    /// How fast each GPU copies within its own memory, in bytes per second: the bandwidth of
    /// a PE's route to itself.
    pub fn local_bytes_per_s(&self) -> u64 {
        self.local_bytes_per_s
    }

    /// The underlying graph, for drawing and inspection.
    pub fn graph(&self) -> &UnGraph<Node, Link> {
        &self.graph
    }

    /// The node of `pe`'s GPU.
    ///
    /// # Panics
    /// If `pe` is not a GPU of this topology.
    pub fn gpu_node(&self, pe: Pe) -> NodeIndex {
        self.gpus[pe.idx()]
    }

    /// The host `pe`'s GPU is in.
    pub fn host_of(&self, pe: Pe) -> u32 {
        match self.graph[self.gpu_node(pe)].kind {
            NodeKind::Gpu { host } => host,
            _ => unreachable!("gpus holds only GPU nodes"),
        }
    }

    /// The PEs whose GPUs are in `host`, in increasing order.
    pub fn pes_of_host(&self, host: u32) -> impl Iterator<Item = Pe> + '_ {
        let first = self.by_host.partition_point(|&(h, _)| h < host);
        self.by_host[first..]
            .iter()
            .take_while(move |&&(h, _)| h == host)
            .map(|&(_, pe)| Pe(pe))
    }

    /// A link by id.
    pub fn link(&self, id: LinkId) -> Link {
        self.graph[EdgeIndex::new(id.0 as usize)]
    }

    /// The number of links.
    pub fn n_links(&self) -> u32 {
        self.graph.edge_count() as u32
    }

    /// The names of a link's two ends.
    pub fn link_ends(&self, id: LinkId) -> (&str, &str) {
        let (a, b) = self
            .graph
            .edge_endpoints(EdgeIndex::new(id.0 as usize))
            .expect("link exists");
        (&self.graph[a].name, &self.graph[b].name)
    }

    /// The lowest-latency routes from `source` to every other PE, computed once per PE.
    ///
    /// # Panics
    /// If `source` is not a GPU of this topology.
    pub fn routes_from(&self, source: Pe) -> Arc<Routes> {
        Arc::clone(
            self.routes[source.idx()].get_or_init(|| Arc::new(Routes::compute(self, source))),
        )
    }

    /// The tree from switch number `switch`, node `node`, computed once.
    fn switch_tree(&self, switch: usize, node: usize) -> Arc<composed::SwitchTree> {
        Arc::clone(
            self.switch_trees[switch]
                .get_or_init(|| Arc::new(composed::SwitchTree::compute(self, node))),
        )
    }

    /// Two PEs can reach each other iff they are linked directly or both touch the same
    /// connected component of the graph without GPUs.
    fn check_reachable(&self) -> Result<(), TopologyError> {
        let n = self.graph.node_count();
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(parent: &mut [usize], mut x: usize) -> usize {
            while parent[x] != x {
                parent[x] = parent[parent[x]];
                x = parent[x];
            }
            x
        }
        let is_gpu = |i: NodeIndex| matches!(self.graph[i].kind, NodeKind::Gpu { .. });
        for edge in self.graph.edge_indices() {
            let (a, b) = self.graph.edge_endpoints(edge).expect("edge exists");
            if !is_gpu(a) && !is_gpu(b) {
                let (ra, rb) = (find(&mut parent, a.index()), find(&mut parent, b.index()));
                parent[ra] = rb;
            }
        }
        let touched: Vec<Vec<usize>> = self
            .gpus
            .iter()
            .map(|&g| {
                let mut roots: Vec<usize> = self
                    .graph
                    .neighbors(g)
                    .filter(|&m| !is_gpu(m))
                    .map(|m| find(&mut parent, m.index()))
                    .collect();
                roots.sort_unstable();
                roots.dedup();
                roots
            })
            .collect();
        // Why first: where one component touches every GPU (any machine with one fabric)
        // every pair shares it, and the pair loop below is quadratic in the GPUs.
        let shared_by_all = touched.first().is_some_and(|first| {
            first
                .iter()
                .any(|root| touched.iter().all(|t| t.binary_search(root).is_ok()))
        });
        if shared_by_all {
            return Ok(());
        }
        for (i, &a) in self.gpus.iter().enumerate() {
            for (j, &b) in self.gpus.iter().enumerate().skip(i + 1) {
                let direct = self.graph.find_edge(a, b).is_some();
                let shared = touched[i]
                    .iter()
                    .any(|r| touched[j].binary_search(r).is_ok());
                if !direct && !shared {
                    return Err(TopologyError::Unreachable {
                        a: self.graph[a].name.clone(),
                        b: self.graph[b].name.clone(),
                    });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
