//! `rshmem topo`: describe a topology and draw it, as a text summary (`text`), Graphviz DOT
//! (`dot`), or an SVG drawn by our own layout code so that no Graphviz install is needed
//! (`svg`). This module holds the command and what the three renderings share: the graph
//! with plain indices, link statistics, numbers as text, and the colours of each kind.

mod dot;
mod svg;
#[cfg(test)]
mod tests;
mod text;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use hw::topology::{Link, LinkKind, Node, NodeKind, Topology};

pub use dot::to_dot;
pub use svg::to_svg;
pub use text::describe;

/// The arguments of `rshmem topo`.
#[derive(Args, Debug)]
pub(crate) struct TopoArgs {
    /// A preset name or a path to a topology file.
    pub(crate) topology: String,
    /// Write the topology as Graphviz DOT to this file.
    #[arg(long, value_name = "FILE")]
    dot: Option<PathBuf>,
    /// Write a drawing of the topology as SVG to this file.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
}

/// Prints the text summary of the topology, and writes the DOT and SVG files asked for.
pub(crate) fn main(args: TopoArgs) -> anyhow::Result<ExitCode> {
    let machine = sim::topology::load(&args.topology)?;
    let topology = &machine.topology;
    print!("{}", describe(&machine));
    if let Some(path) = args.dot {
        std::fs::write(&path, to_dot(topology))
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    }
    if let Some(path) = args.svg {
        std::fs::write(&path, to_svg(topology))
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The link kinds in the order every rendering lists them.
const LINK_KINDS: [LinkKind; 3] = [LinkKind::NvLink, LinkKind::Pcie, LinkKind::Ib];

/// The node-kind words in the order every rendering lists them.
const NODE_KIND_WORDS: [&str; 5] = ["gpu", "nvswitch", "pcie-switch", "nic", "ib-switch"];

/// The topology's nodes and links, indexed by petgraph's node index: plain indices, so that
/// no petgraph type is named in the renderings.
struct Graph<'t> {
    nodes: Vec<&'t Node>,
    /// (end a, end b, link) in link-id order.
    edges: Vec<(usize, usize, Link)>,
    /// Neighbours of each node.
    adjacent: Vec<Vec<usize>>,
}

impl<'t> Graph<'t> {
    fn of(t: &'t Topology) -> Self {
        let graph = t.graph();
        let nodes: Vec<&Node> = graph.node_weights().collect();
        let mut adjacent = vec![Vec::new(); nodes.len()];
        let mut edges = Vec::with_capacity(graph.edge_count());
        for edge in graph.edge_indices() {
            if let Some((a, b)) = graph.edge_endpoints(edge) {
                let (a, b) = (a.index(), b.index());
                edges.push((a, b, graph[edge]));
                adjacent[a].push(b);
                adjacent[b].push(a);
            }
        }
        Graph {
            nodes,
            edges,
            adjacent,
        }
    }
}

/// How many links of one kind there are and the range of their numbers.
struct LinkStats {
    count: usize,
    bandwidth_bytes_per_s: (u64, u64),
    latency_ns: (u64, u64),
}

impl LinkStats {
    fn of(g: &Graph<'_>, kind: LinkKind) -> Option<Self> {
        let links: Vec<&Link> = g
            .edges
            .iter()
            .map(|(_, _, l)| l)
            .filter(|l| l.kind == kind)
            .collect();
        let bandwidth: Vec<u64> = links.iter().map(|l| l.bandwidth_bytes_per_s).collect();
        let latency: Vec<u64> = links.iter().map(|l| l.latency_ns).collect();
        Some(LinkStats {
            count: links.len(),
            bandwidth_bytes_per_s: (*bandwidth.iter().min()?, *bandwidth.iter().max()?),
            latency_ns: (*latency.iter().min()?, *latency.iter().max()?),
        })
    }

    fn bandwidth_text(&self) -> String {
        let (lo, hi) = self.bandwidth_bytes_per_s;
        if lo == hi {
            gbps(lo)
        } else {
            format!("{}-{}", gbps(lo), gbps(hi))
        }
    }

    fn latency_text(&self) -> String {
        let (lo, hi) = self.latency_ns;
        if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}-{hi}")
        }
    }
}

fn host_of(node: &Node) -> Option<u32> {
    match node.kind {
        NodeKind::Gpu { host }
        | NodeKind::NvSwitch { host }
        | NodeKind::PcieSwitch { host }
        | NodeKind::Nic { host } => Some(host),
        NodeKind::IbSwitch { .. } => None,
    }
}

/// Bytes per second as GB/s (1e9 bytes/s) with at most three decimals and no trailing zeros.
fn gbps(bytes_per_s: u64) -> String {
    let text = format!("{:.3}", bytes_per_s as f64 / 1e9);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

struct LinkStyle {
    color: &'static str,
    width: f64,
}

fn link_style(kind: LinkKind) -> LinkStyle {
    match kind {
        // NVIDIA green for NVLink; widths follow the bandwidth order of the technologies.
        LinkKind::NvLink => LinkStyle {
            color: "#5f9600",
            width: 2.5,
        },
        LinkKind::Pcie => LinkStyle {
            color: "#1f77b4",
            width: 1.6,
        },
        LinkKind::Ib => LinkStyle {
            color: "#d95f02",
            width: 1.2,
        },
    }
}

struct NodeStyle {
    fill: &'static str,
    stroke: &'static str,
    dot_shape: &'static str,
}

fn node_style(kind: NodeKind) -> NodeStyle {
    let (fill, stroke, dot_shape) = match kind {
        NodeKind::Gpu { .. } => ("#dff0c4", "#4d7c00", "box"),
        NodeKind::NvSwitch { .. } => ("#a9d66b", "#3d6300", "box3d"),
        NodeKind::PcieSwitch { .. } => ("#d4e5f5", "#1f77b4", "trapezium"),
        NodeKind::Nic { .. } => ("#fde2cc", "#d95f02", "ellipse"),
        NodeKind::IbSwitch { .. } => ("#f6b887", "#a34a00", "octagon"),
    };
    NodeStyle {
        fill,
        stroke,
        dot_shape,
    }
}
