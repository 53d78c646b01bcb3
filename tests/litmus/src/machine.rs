//! The machine a litmus configuration names, as a topology: the PEs of one host joined
//! pairwise by NVLink, and, when there are several hosts, one NIC per GPU behind a single
//! InfiniBand switch. Routes between hosts therefore cross two NICs (class `Rdma`) and routes
//! within a host stay on NVLink. Under `os-net` every PE is a host of its own, so every route
//! between PEs crosses two NICs, as the libfabric transport between nodes does; what the
//! transport does with an operation is the simulator's `network_transport` switch
//! (`on_sim.rs`).

use hw::Topology;
use hw::topology::{ClusterLinks, Link, LinkKind, TopologyError};
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
    let links = ClusterLinks {
        nvlink: NVLINK,
        pcie: PCIE,
        ib: INFINIBAND,
    };
    Topology::hosts_with_nics(format!("litmus-{config}"), &hosts, links)
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
        let nvl = topology(&Config::NV_NVL, 3).unwrap();
        assert_eq!(class(&nvl, 0, 2), PathClass::LoadStore);
        let ib = topology(&Config::NV_IB, 3).unwrap();
        assert_eq!(class(&ib, 0, 2), PathClass::Rdma);
        assert_eq!(class(&ib, 1, 2), PathClass::Rdma);
        let mix = topology(&Config::nv_mix(vec![0, 1, 1]), 3).unwrap();
        assert_eq!(class(&mix, 0, 2), PathClass::Rdma);
        assert_eq!(class(&mix, 1, 2), PathClass::LoadStore);
        assert_eq!(class(&mix, 2, 1), PathClass::LoadStore);
        let net = topology(&Config::OS_NET, 3).unwrap();
        assert_eq!(class(&net, 0, 1), PathClass::Rdma);
        assert_eq!(class(&net, 2, 0), PathClass::Rdma);
    }
}
