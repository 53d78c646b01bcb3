//! The machine a litmus configuration names, as a topology: the PEs of one host joined
//! pairwise by NVLink, and, when there are several hosts, one NIC per GPU behind a single
//! InfiniBand switch. Routes between hosts therefore cross two NICs (class `Rdma`) and routes
//! within a host stay on NVLink.

use hw::Topology;
use hw::topology::{Link, LinkKind, NodeKind, TopologyBuilder, TopologyError};
use model::litmus::Config;

/// NVLink as on the `h200x2` preset, rounded: what matters to a litmus test is only which
/// path class a pair uses, not the timing.
const NVLINK: Link = Link {
    kind: LinkKind::NvLink,
    latency_ns: 500,
    bandwidth_bytes_per_s: 400_000_000_000,
};
const PCIE: Link = Link {
    kind: LinkKind::Pcie,
    latency_ns: 100,
    bandwidth_bytes_per_s: 64_000_000_000,
};
const INFINIBAND: Link = Link {
    kind: LinkKind::Ib,
    latency_ns: 600,
    bandwidth_bytes_per_s: 50_000_000_000,
};

/// The topology of `n_pes` PEs under `config`.
///
/// # Errors
/// If the configuration's host grouping does not describe `n_pes` PEs.
pub fn topology(config: &Config, n_pes: u32) -> Result<Topology, TopologyError> {
    let hosts: Vec<u32> = (0..n_pes).map(|pe| config.host_of(pe)).collect();
    let mut b = TopologyBuilder::new(format!("litmus-{config}"));
    // GPUs first, in PE order: PE numbers are the order GPUs are added.
    let gpus: Vec<_> = hosts
        .iter()
        .enumerate()
        .map(|(pe, &host)| b.node(format!("g{pe}"), NodeKind::Gpu { host }))
        .collect();
    for a in 0..gpus.len() {
        for c in a + 1..gpus.len() {
            if hosts[a] == hosts[c] {
                b.link(gpus[a], gpus[c], NVLINK);
            }
        }
    }
    let several_hosts = hosts.iter().any(|&h| h != hosts[0]);
    if several_hosts {
        let switch = b.node("ib", NodeKind::IbSwitch { tier: 0 });
        for (pe, (&gpu, &host)) in gpus.iter().zip(&hosts).enumerate() {
            let nic = b.node(format!("n{pe}"), NodeKind::Nic { host });
            b.link(gpu, nic, PCIE);
            b.link(nic, switch, INFINIBAND);
        }
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hw::Pe;
    use hw::topology::PathClass;

    fn class(t: &Topology, a: u32, b: u32) -> PathClass {
        t.routes_from(Pe(a)).path_to(t, Pe(b)).class
    }

    #[test]
    fn each_configuration_gives_the_path_classes_it_names() {
        let nvl = topology(&Config::NvNvl, 3).unwrap();
        assert_eq!(class(&nvl, 0, 2), PathClass::LoadStore);
        let ib = topology(&Config::NvIb, 3).unwrap();
        assert_eq!(class(&ib, 0, 2), PathClass::Rdma);
        assert_eq!(class(&ib, 1, 2), PathClass::Rdma);
        let mix = topology(
            &Config::NvMix {
                hosts: vec![0, 1, 1],
            },
            3,
        )
        .unwrap();
        assert_eq!(class(&mix, 0, 2), PathClass::Rdma);
        assert_eq!(class(&mix, 1, 2), PathClass::LoadStore);
        assert_eq!(class(&mix, 2, 1), PathClass::LoadStore);
    }
}
