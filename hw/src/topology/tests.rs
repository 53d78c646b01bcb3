use super::*;

fn nvlink(latency_ns: u64) -> Link {
    Link {
        kind: LinkKind::NvLink,
        latency_ns,
        bandwidth_bytes_per_s: 100,
    }
}

#[test]
fn two_gpus_with_a_direct_link_route_over_it() {
    let t = Topology::pair(nvlink(7)).unwrap();
    let path = t.routes_from(Pe(0)).path_to(&t, Pe(1));
    assert_eq!(path.latency_ns, 7);
    assert_eq!(path.class, PathClass::LoadStore);
    assert_eq!(
        path.hops,
        vec![Hop {
            link: LinkId(0),
            forward: true
        }]
    );
    let back = t.routes_from(Pe(1)).path_to(&t, Pe(0));
    assert_eq!(
        back.hops,
        vec![Hop {
            link: LinkId(0),
            forward: false
        }]
    );
    assert_eq!(
        t.routes_from(Pe(1)).path_to(&t, Pe(1)).class,
        PathClass::Local
    );
}

#[test]
fn gpus_are_not_transit_nodes() {
    let mut b = TopologyBuilder::new("chain");
    let g0 = b.node("g0", NodeKind::Gpu { host: 0 });
    let g1 = b.node("g1", NodeKind::Gpu { host: 0 });
    let g2 = b.node("g2", NodeKind::Gpu { host: 0 });
    b.link(g0, g1, nvlink(1));
    b.link(g1, g2, nvlink(1));
    let err = b.build().unwrap_err();
    assert_eq!(
        err,
        TopologyError::Unreachable {
            a: "g0".into(),
            b: "g2".into()
        }
    );
}

#[test]
fn a_path_through_a_nic_is_rdma() {
    let mut b = TopologyBuilder::new("ib");
    let g0 = b.node("g0", NodeKind::Gpu { host: 0 });
    let n0 = b.node("n0", NodeKind::Nic { host: 0 });
    let g1 = b.node("g1", NodeKind::Gpu { host: 1 });
    let n1 = b.node("n1", NodeKind::Nic { host: 1 });
    let sw = b.node("sw", NodeKind::IbSwitch { tier: 0 });
    let pcie = Link {
        kind: LinkKind::Pcie,
        latency_ns: 100,
        bandwidth_bytes_per_s: 64,
    };
    let ib = Link {
        kind: LinkKind::Ib,
        latency_ns: 200,
        bandwidth_bytes_per_s: 50,
    };
    b.link(g0, n0, pcie);
    b.link(g1, n1, pcie);
    b.link(n0, sw, ib);
    b.link(n1, sw, ib);
    let t = b.build().unwrap();
    let path = t.routes_from(Pe(0)).path_to(&t, Pe(1));
    assert_eq!(path.class, PathClass::Rdma);
    assert_eq!(path.latency_ns, 600);
    assert_eq!(path.bandwidth_bytes_per_s, 50);
    assert_eq!(path.nics, 2);
    assert_eq!(path.hops.len(), 4);
}

#[test]
fn bad_topologies_are_rejected_with_the_reason() {
    assert_eq!(
        TopologyBuilder::new("empty").build().unwrap_err(),
        TopologyError::NoGpu
    );
    let mut b = TopologyBuilder::new("dup");
    b.node("x", NodeKind::Gpu { host: 0 });
    b.node("x", NodeKind::Gpu { host: 0 });
    assert_eq!(
        b.build().unwrap_err(),
        TopologyError::DuplicateName("x".into())
    );
    let zero_bandwidth = Link {
        kind: LinkKind::NvLink,
        latency_ns: 1,
        bandwidth_bytes_per_s: 0,
    };
    assert!(matches!(
        Topology::pair(zero_bandwidth).unwrap_err(),
        TopologyError::BadLink { .. }
    ));
}

#[test]
fn the_pairs_have_the_path_class_they_promise() {
    let link = |kind| Link {
        kind,
        latency_ns: 10,
        bandwidth_bytes_per_s: 1_000_000_000,
    };
    let pair = Topology::pair(link(LinkKind::NvLink)).unwrap();
    let ib = Topology::ib_pair(link(LinkKind::Pcie), link(LinkKind::Ib)).unwrap();
    assert_eq!((pair.n_gpus(), ib.n_gpus()), (2, 2));
    let class = |t: &Topology| t.routes_from(Pe(0)).path_to(t, Pe(1)).class;
    assert_eq!(class(&pair), PathClass::LoadStore);
    assert_eq!(class(&ib), PathClass::Rdma);
    assert_ne!(pair.host_of(Pe(1)), ib.host_of(Pe(1)));
}
