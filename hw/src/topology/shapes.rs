//! The machine shapes tests, litmus configurations and real backends share: two GPUs on one
//! load/store link, two hosts of one GPU behind an InfiniBand switch, one host of GPUs on an
//! NVSwitch, and hosts of GPUs with a NIC each on one switch.
//!
//! Why here: every backend and every suite needs a small machine to stand for, and a shape
//! written once cannot drift between them. The simulator's presets (the machines it models
//! with measured costs) are richer and live in `sim`.

use super::{Link, LinkKind, NodeKind, Topology, TopologyBuilder, TopologyError};

/// NV18 between the two H200s of the 2×H200 test machine: 18 links of 25 GB/s per direction,
/// of which a copy-engine peer copy of 256 MiB measured 394.8 GB/s; one way, half the measured
/// remote `atomic_fetch_add` round trip of 0.915 µs, rounded to 450 ns (docs/targets.md).
pub const NV18: Link = Link {
    kind: LinkKind::NvLink,
    latency_ns: 450,
    bandwidth_bytes_per_s: 394_800_000_000,
};

/// The links of a [`Topology::hosts_with_nics`] machine.
#[derive(Clone, Copy, Debug)]
pub struct ClusterLinks {
    /// Between two GPUs of one host.
    pub nvlink: Link,
    /// Between a GPU and its NIC.
    pub pcie: Link,
    /// Between a NIC and the switch.
    pub ib: Link,
}

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

    /// One host with `n_gpus` GPUs `g{i}` on one NVSwitch (named "host-{n_gpus}"): the machine a
    /// run of the host backend stands for, and the CUDA backend's when it has more than two
    /// GPUs.
    ///
    /// # Errors
    /// [`TopologyError`] if `n_gpus` is zero.
    pub fn single_host(n_gpus: u32) -> Result<Topology, TopologyError> {
        let mut b = TopologyBuilder::new(format!("host-{n_gpus}"));
        let switch = b.node("nvswitch", NodeKind::NvSwitch { host: 0 });
        let link = Link {
            kind: LinkKind::NvLink,
            latency_ns: 500,
            bandwidth_bytes_per_s: 450_000_000_000,
        };
        for g in 0..n_gpus {
            let gpu = b.node(format!("g{g}"), NodeKind::Gpu { host: 0 });
            b.link(gpu, switch, link);
        }
        b.build()
    }

    /// One GPU `g{pe}` per entry of `hosts`, in that host, named `name`: the GPUs of a host
    /// joined pairwise by `links.nvlink`, and, when there are several hosts, each GPU joined by
    /// `links.pcie` to a NIC `n{pe}` of its own, every NIC on one InfiniBand switch `ib`. Routes
    /// within a host are therefore load/store and routes between hosts cross two NICs (RDMA).
    ///
    /// # Errors
    /// [`TopologyError`] if `hosts` is empty or a link is malformed.
    pub fn hosts_with_nics(
        name: impl Into<String>,
        hosts: &[u32],
        links: ClusterLinks,
    ) -> Result<Topology, TopologyError> {
        let mut b = TopologyBuilder::new(name);
        // GPUs first, in PE order: PE numbers are the order GPUs are added.
        let gpus: Vec<_> = hosts
            .iter()
            .enumerate()
            .map(|(pe, &host)| b.node(format!("g{pe}"), NodeKind::Gpu { host }))
            .collect();
        for a in 0..gpus.len() {
            for c in a + 1..gpus.len() {
                if hosts[a] == hosts[c] {
                    b.link(gpus[a], gpus[c], links.nvlink);
                }
            }
        }
        if hosts.iter().any(|&h| h != hosts[0]) {
            let switch = b.node("ib", NodeKind::IbSwitch { tier: 0 });
            for (pe, (&gpu, &host)) in gpus.iter().zip(hosts).enumerate() {
                let nic = b.node(format!("n{pe}"), NodeKind::Nic { host });
                b.link(gpu, nic, links.pcie);
                b.link(nic, switch, links.ib);
            }
        }
        b.build()
    }
}
