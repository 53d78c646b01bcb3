//! The two smallest topologies with a path class each: two GPUs on one load/store link, and
//! two hosts of one GPU each behind an InfiniBand switch. Tests and litmus configurations are
//! written against these.

use super::{Link, NodeKind, Topology, TopologyBuilder, TopologyError};

impl Topology {
    /// GPUs `g0` and `g1` of host 0 joined by `link` (named "pair").
    ///
    /// # Errors
    /// What [`TopologyBuilder::build`] finds wrong with `link` (zero bandwidth, say).
    pub fn pair(link: Link) -> Result<Topology, TopologyError> {
        let mut b = TopologyBuilder::new("pair");
        let g0 = b.node("g0", NodeKind::Gpu { host: 0 });
        let g1 = b.node("g1", NodeKind::Gpu { host: 0 });
        b.link(g0, g1, link);
        b.build()
    }

    /// Hosts 0 and 1, each a GPU `g{host}` joined by `pcie` to a NIC `n{host}`, the NICs joined
    /// by `ib` links to switch `sw` (named "ib-pair"): every path between the PEs is RDMA.
    ///
    /// # Errors
    /// What [`TopologyBuilder::build`] finds wrong with the links.
    pub fn ib_pair(pcie: Link, ib: Link) -> Result<Topology, TopologyError> {
        let mut b = TopologyBuilder::new("ib-pair");
        let sw = b.node("sw", NodeKind::IbSwitch { tier: 0 });
        for host in 0..2 {
            let gpu = b.node(format!("g{host}"), NodeKind::Gpu { host });
            let nic = b.node(format!("n{host}"), NodeKind::Nic { host });
            b.link(gpu, nic, pcie);
            b.link(nic, sw, ib);
        }
        b.build()
    }
}
