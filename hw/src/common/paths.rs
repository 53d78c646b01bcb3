//! The path from a PE to each peer: which node every rank runs on (from the bootstrap), and
//! whether a peer is reached through memory this process maps or through the network
//! (`RSHMEM_TRANSPORT`, docs/multi-node.md). The process and CUDA backends both choose by it.

use crate::types::Pe;

/// The variable that chooses the path to peers.
pub(crate) const TRANSPORT_VAR: &str = "RSHMEM_TRANSPORT";

/// Every rank's node id, in rank order: where the job spans nodes, a collective (none of its
/// nodes has every rank, so every rank sees it spans them); else all zero, with no exchange.
///
/// # Errors
/// The bootstrap's, from [`crate::bootstrap::Bootstrap::node_ids`].
pub fn nodes_of(
    bootstrap: &mut dyn crate::bootstrap::Bootstrap,
    deadline: std::time::Instant,
) -> Result<Vec<u32>, crate::bootstrap::BootstrapError> {
    let n_ranks = bootstrap.size();
    if bootstrap.node().local_size < n_ranks {
        bootstrap.node_ids(deadline)
    } else {
        Ok(vec![0; n_ranks as usize])
    }
}

/// "PE 1" or "PEs 1, 2".
pub(crate) fn list(pes: &[Pe]) -> String {
    let numbers: Vec<String> = pes.iter().map(|pe| pe.0.to_string()).collect();
    match numbers.len() {
        1 => format!("PE {}", numbers[0]),
        _ => format!("PEs {}", numbers.join(", ")),
    }
}

/// How a PE reaches a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerPath {
    /// Its memory is mapped in this process (shared memory): copies and CPU atomics.
    SharedMemory,
    /// Through libfabric.
    Network,
}

/// How PE `me` reaches each PE of a run whose PEs are on `nodes` (node ids, in PE order), as
/// `RSHMEM_TRANSPORT` asks: by default shared memory to the PEs of its node and the network
/// to the others; `ofi` puts every PE on the network, `shm` refuses PEs on other nodes.
/// Once any peer is on the network, every atomic goes through it too (docs/multi-node.md).
///
/// # Errors
/// A message naming the variable: a value it does not take, or `shm` with PEs on other
/// nodes.
#[cfg(feature = "process")]
pub fn peer_paths(nodes: &[u32], me: Pe) -> Result<Vec<PeerPath>, String> {
    paths(transport()?, nodes, me)
}

/// What `RSHMEM_TRANSPORT` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transport {
    /// Shared memory to the peers of this node, the network to the others (the default).
    Auto,
    /// Shared memory only: a run that spans nodes is refused.
    Shm,
    /// The network to every peer, this PE itself included (for tests).
    Ofi,
}

/// What `RSHMEM_TRANSPORT` asks for.
///
/// # Errors
/// A message naming the variable and its values, for any other value.
pub(crate) fn transport() -> Result<Transport, String> {
    transport_of(std::env::var(TRANSPORT_VAR).ok().as_deref())
}

/// [`transport`] for the variable's value, `None` when it is not set.
fn transport_of(value: Option<&str>) -> Result<Transport, String> {
    match value {
        None | Some("" | "auto") => Ok(Transport::Auto),
        Some("shm") => Ok(Transport::Shm),
        Some("ofi") => Ok(Transport::Ofi),
        Some(other) => Err(format!(
            "{TRANSPORT_VAR}={other}: the values are `auto` (the default: shared memory to the \
             peers of this node, libfabric to the others), `shm` (shared memory only, one node) \
             and `ofi` (every peer through libfabric, docs/multi-node.md)"
        )),
    }
}

/// How PE `me` reaches each PE of `nodes` (node ids, in PE order) under `transport`.
///
/// # Errors
/// For [`Transport::Shm`] with PEs on other nodes, naming them.
pub(crate) fn paths(transport: Transport, nodes: &[u32], me: Pe) -> Result<Vec<PeerPath>, String> {
    let mine = nodes[me.idx()];
    let remote: Vec<Pe> = (0..)
        .zip(nodes)
        .filter(|&(_, &node)| node != mine)
        .map(|(pe, _)| Pe(pe))
        .collect();
    if transport == Transport::Shm && !remote.is_empty() {
        return Err(format!(
            "{TRANSPORT_VAR}=shm, but {} run on other nodes than this one, which shared memory \
             does not reach: unset it (or set `auto`) to reach them through libfabric",
            list(&remote)
        ));
    }
    Ok(nodes
        .iter()
        .map(|&node| match transport == Transport::Ofi || node != mine {
            true => PeerPath::Network,
            false => PeerPath::SharedMemory,
        })
        .collect())
}

/// The topology a run declares by default: one host per node id of `nodes` (a PE's), its PEs
/// joined by load/store links, each behind a NIC when there are several hosts. The costs are
/// placeholders; only the shape is real.
pub(crate) fn nodes_topology(
    nodes: &[u32],
) -> Result<crate::topology::Topology, crate::topology::TopologyError> {
    let n_nodes = nodes
        .iter()
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    if n_nodes <= 1 {
        return crate::topology::Topology::single_host(nodes.len() as u32);
    }
    let link = |kind| crate::topology::Link {
        kind,
        latency_ns: 1_000,
        bandwidth_bytes_per_s: 10_000_000_000,
    };
    let links = crate::topology::ClusterLinks {
        nvlink: link(crate::topology::LinkKind::NvLink),
        pcie: link(crate::topology::LinkKind::Pcie),
        ib: link(crate::topology::LinkKind::Ib),
    };
    crate::topology::Topology::hosts_with_nics(format!("nodes-{n_nodes}"), nodes, links)
}

#[cfg(test)]
mod tests {
    use super::{PeerPath, Transport, paths, transport_of};
    use crate::types::Pe;

    /// Unset and `auto` choose per peer, `shm` and `ofi` force one path; anything else is
    /// an error that names the variable and every value.
    #[test]
    fn rshmem_transport_is_read_strictly() {
        for value in [None, Some(""), Some("auto")] {
            assert_eq!(transport_of(value), Ok(Transport::Auto), "{value:?}");
        }
        assert_eq!(transport_of(Some("shm")), Ok(Transport::Shm));
        assert_eq!(transport_of(Some("ofi")), Ok(Transport::Ofi));
        let err = transport_of(Some("verbs")).expect_err("not a value");
        assert!(
            err.contains("RSHMEM_TRANSPORT=verbs")
                && err.contains("`auto`")
                && err.contains("`shm`")
                && err.contains("`ofi`"),
            "{err}"
        );
    }

    /// By default a PE reaches the PEs of its node through shared memory and the others
    /// through the network; `ofi` puts every PE on the network; `shm` refuses PEs on other
    /// nodes, naming them, and is the default's equal on one node.
    #[test]
    fn each_peer_gets_the_path_its_node_allows() {
        use PeerPath::{Network, SharedMemory};
        let nodes = [0, 0, 1, 1];
        assert_eq!(
            paths(Transport::Auto, &nodes, Pe(1)),
            Ok(vec![SharedMemory, SharedMemory, Network, Network])
        );
        assert_eq!(
            paths(Transport::Auto, &nodes, Pe(2)),
            Ok(vec![Network, Network, SharedMemory, SharedMemory])
        );
        assert_eq!(paths(Transport::Ofi, &nodes, Pe(0)), Ok(vec![Network; 4]));
        let err = paths(Transport::Shm, &nodes, Pe(0)).expect_err("PEs 2 and 3 are remote");
        assert!(
            err.contains("RSHMEM_TRANSPORT=shm") && err.contains("PEs 2, 3"),
            "{err}"
        );
        assert_eq!(
            paths(Transport::Shm, &[0, 0], Pe(0)),
            Ok(vec![SharedMemory; 2])
        );
    }
}
