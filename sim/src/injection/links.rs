//! Link selectors: which links of a machine `link=` and `stall=` change.
//!
//! A selector is `all`; a link kind (`nvlink`, `pcie`, `ib`): every link of that kind; an
//! end: every link that touches it; or `A-B`: every link between an end matching `A` and one
//! matching `B`. An end is a node's name (`node0.nic2`, `spine0`), `peN` (the GPU of PE `N`)
//! or a node kind (`gpu`, `nvswitch`, `nic`, `pcie-switch`, `ib-switch`). Node names may hold
//! dashes, so the whole selector is tried as one end before it is split at a dash.

use hw::topology::{LinkId, LinkKind};
use hw::{Pe, Topology};
use petgraph::graph::{EdgeIndex, NodeIndex};

const LINK_KINDS: [LinkKind; 3] = [LinkKind::NvLink, LinkKind::Pcie, LinkKind::Ib];

/// One end of a link, as a selector names it.
enum End {
    Node(NodeIndex),
    Kind(&'static str),
}

impl End {
    fn matches(&self, topology: &Topology, node: NodeIndex) -> bool {
        match self {
            End::Node(n) => *n == node,
            End::Kind(word) => topology.graph()[node].kind.word() == *word,
        }
    }
}

/// The links `selector` names on `topology`, in id order.
///
/// # Errors
/// What the selector does not match, with what it could have said.
pub(super) fn select(topology: &Topology, selector: &str) -> Result<Vec<LinkId>, String> {
    let all = (0..topology.n_links()).map(LinkId);
    let found: Vec<LinkId> = if selector == "all" {
        all.collect()
    } else if let Some(kind) = LINK_KINDS.into_iter().find(|k| k.word() == selector) {
        all.filter(|&l| topology.link(l).kind == kind).collect()
    } else if let Some(end) = parse_end(topology, selector)? {
        all.filter(|&l| {
            let (a, b) = ends(topology, l);
            end.matches(topology, a) || end.matches(topology, b)
        })
        .collect()
    } else {
        let (x, y) = split_pair(topology, selector)?;
        all.filter(|&l| {
            let (a, b) = ends(topology, l);
            (x.matches(topology, a) && y.matches(topology, b))
                || (x.matches(topology, b) && y.matches(topology, a))
        })
        .collect()
    };
    if found.is_empty() {
        return Err(format!(
            "{selector:?} matches no link of topology {:?}; `rshmem topo {}` lists its nodes \
             and links",
            topology.name(),
            topology.name()
        ));
    }
    Ok(found)
}

/// How the report names one link: its two ends, `node0.gpu2-node0.nic2`.
pub(super) fn label(topology: &Topology, link: LinkId) -> String {
    let (a, b) = topology.link_ends(link);
    format!("{a}-{b}")
}

fn ends(topology: &Topology, link: LinkId) -> (NodeIndex, NodeIndex) {
    topology
        .graph()
        .edge_endpoints(EdgeIndex::new(link.0 as usize))
        .expect("the link exists")
}

/// `word` as one end, if it names one; an error for `peN` past the machine's GPUs.
fn parse_end(topology: &Topology, word: &str) -> Result<Option<End>, String> {
    if let Some(n) = word.strip_prefix("pe").and_then(|n| n.parse::<u32>().ok()) {
        if n >= topology.n_gpus() {
            return Err(format!(
                "{word:?}: topology {:?} has GPUs for PEs 0 to {}",
                topology.name(),
                topology.n_gpus() - 1
            ));
        }
        return Ok(Some(End::Node(topology.gpu_node(Pe(n)))));
    }
    let graph = topology.graph();
    if let Some(node) = graph.node_indices().find(|&n| graph[n].name == word) {
        return Ok(Some(End::Node(node)));
    }
    let kinds = graph.node_weights().map(|n| n.kind.word());
    Ok(kinds.into_iter().find(|&k| k == word).map(End::Kind))
}

/// `A-B` split at the first dash where both sides name an end.
fn split_pair(topology: &Topology, selector: &str) -> Result<(End, End), String> {
    for (i, _) in selector.match_indices('-') {
        let (a, b) = (&selector[..i], &selector[i + 1..]);
        if let (Some(x), Some(y)) = (parse_end(topology, a)?, parse_end(topology, b)?) {
            return Ok((x, y));
        }
    }
    Err(unknown(topology, selector))
}

fn unknown(topology: &Topology, selector: &str) -> String {
    let graph = topology.graph();
    let names: Vec<&str> = graph.node_weights().map(|n| n.name.as_str()).collect();
    let sample = names.iter().take(4).copied().collect::<Vec<_>>().join(", ");
    let mut kinds: Vec<&str> = graph.node_weights().map(|n| n.kind.word()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    format!(
        "no link or node {selector:?} in topology {:?}; write `all`, a link kind (nvlink, pcie, \
         ib), a node kind ({}), peN for PE N's GPU, a node name ({sample}, ...; `rshmem topo {}` \
         lists them), or A-B for the links between two of those (pe2-nic)",
        topology.name(),
        kinds.join(", "),
        topology.name()
    )
}
