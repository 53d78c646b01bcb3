use super::super::Link;
use super::*;

/// One walk down the tree finds the routes that one walk up it per PE finds.
#[test]
fn every_path_at_once_matches_path_to() {
    let ib = |latency_ns| Link {
        kind: LinkKind::Ib,
        latency_ns,
        bandwidth_bytes_per_s: 50,
    };
    let pcie = |latency_ns| Link {
        kind: LinkKind::Pcie,
        latency_ns,
        bandwidth_bytes_per_s: 60,
    };
    let nvlink = |latency_ns| Link {
        kind: LinkKind::NvLink,
        latency_ns,
        bandwidth_bytes_per_s: 400,
    };
    let mut b = super::super::TopologyBuilder::new("two-hosts");
    let spines = [
        b.node("spine0", NodeKind::IbSwitch { tier: 1 }),
        b.node("spine1", NodeKind::IbSwitch { tier: 1 }),
    ];
    for host in 0..3 {
        let switch = b.node(format!("nvs{host}"), NodeKind::NvSwitch { host });
        let leaf = b.node(format!("leaf{host}"), NodeKind::IbSwitch { tier: 0 });
        for (i, &spine) in spines.iter().enumerate() {
            b.link(leaf, spine, ib(300 + i as u64));
        }
        for g in 0..3 {
            let gpu = b.node(format!("gpu{host}.{g}"), NodeKind::Gpu { host });
            let nic = b.node(format!("nic{host}.{g}"), NodeKind::Nic { host });
            b.link(gpu, switch, nvlink(200 + g));
            b.link(gpu, nic, pcie(150));
            b.link(nic, leaf, ib(600));
        }
    }
    let t = b.build().unwrap();
    for src in 0..t.n_gpus() {
        let routes = t.routes_from(Pe(src));
        let mut seen = vec![false; t.n_gpus() as usize];
        routes.for_each_path(&t, |pe, path| {
            assert!(!seen[pe.idx()], "PE {pe:?} twice");
            seen[pe.idx()] = true;
            assert_eq!(*path, routes.path_to(&t, pe), "{src} to {pe:?}");
        });
        assert!(seen.iter().all(|&s| s));
    }
}

/// Routes composed from the switches' trees are the routes of one Dijkstra from the PE,
/// on fat trees with many equal routes, parallel links, NICs on two leaves and GPUs
/// linked directly, where ties decide most routes.
#[test]
fn composed_routes_match_one_search_per_pe() {
    let mut x: u64 = 11;
    let mut draw = |n: u64| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % n
    };
    let mut composed_checked = 0;
    for _case in 0..40 {
        let link = |kind, latency_ns| Link {
            kind,
            latency_ns,
            bandwidth_bytes_per_s: 10 + latency_ns,
        };
        let mut b = super::super::TopologyBuilder::new("random");
        let n_spines = 1 + draw(3);
        let spines: Vec<_> = (0..n_spines)
            .map(|i| b.node(format!("spine{i}"), NodeKind::IbSwitch { tier: 1 }))
            .collect();
        let leaves: Vec<_> = (0..2 + draw(3))
            .map(|i| b.node(format!("leaf{i}"), NodeKind::IbSwitch { tier: 0 }))
            .collect();
        for &leaf in &leaves {
            for &spine in &spines {
                for _ in 0..1 + draw(2) {
                    b.link(leaf, spine, link(LinkKind::Ib, 1 + draw(3)));
                }
            }
        }
        for host in 0..2 + draw(3) as u32 {
            let switch = b.node(format!("nvs{host}"), NodeKind::NvSwitch { host });
            let mut previous = None;
            for g in 0..1 + draw(3) {
                let gpu = b.node(format!("gpu{host}.{g}"), NodeKind::Gpu { host });
                let nic = b.node(format!("nic{host}.{g}"), NodeKind::Nic { host });
                b.link(gpu, switch, link(LinkKind::NvLink, 1 + draw(3)));
                b.link(gpu, nic, link(LinkKind::Pcie, 1 + draw(2)));
                for _ in 0..1 + draw(2) {
                    let leaf = leaves[draw(leaves.len() as u64) as usize];
                    b.link(nic, leaf, link(LinkKind::Ib, 1 + draw(3)));
                }
                if let Some(other) = previous.filter(|_| draw(3) == 0) {
                    b.link(gpu, other, link(LinkKind::NvLink, 1 + draw(4)));
                }
                previous = Some(gpu);
            }
        }
        let Ok(t) = b.build() else { continue };
        for src in 0..t.n_gpus() {
            let composed = Routes::compute(&t, Pe(src));
            assert!(matches!(composed.tree, Tree::Composed(_)));
            let start = t.gpu_node(Pe(src)).index();
            let whole = Routes {
                source: Pe(src),
                tree: Tree::Whole(dijkstra(&t, start).1),
            };
            for dst in 0..t.n_gpus() {
                assert_eq!(
                    composed.path_to(&t, Pe(dst)),
                    whole.path_to(&t, Pe(dst)),
                    "{src} to {dst}"
                );
                composed_checked += 1;
            }
            let mut walked = 0;
            composed.for_each_path(&t, |pe, path| {
                assert_eq!(*path, whole.path_to(&t, pe));
                walked += 1;
            });
            assert_eq!(walked, t.n_gpus());
        }
    }
    assert!(
        composed_checked > 500,
        "only {composed_checked} routes checked"
    );
}

/// The frontier pops what a binary heap of `Reverse((distance, node))` pops, including
/// the order of ties and pushes at the current distance (zero-latency links).
#[test]
fn frontier_pops_like_a_binary_heap() {
    let mut frontier = Frontier::new(64);
    let mut reference = BinaryHeap::new();
    // Dijkstra never pushes a node twice at one distance; neither does this test.
    let mut pushed = std::collections::HashSet::new();
    let mut x: u64 = 7;
    let mut popped = 0u64;
    for round in 0..5000u32 {
        for _ in 0..(round % 4) {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let d = popped
                + match x >> 62 {
                    0 => 0,
                    1 => (x >> 20) % 4,
                    _ => (x >> 20) % 3000,
                };
            let node = ((x >> 40) % 64) as u32;
            if !pushed.insert((d, node)) {
                continue;
            }
            frontier.push(d, node);
            reference.push(Reverse((d, node)));
        }
        if round % 2 == 0 {
            let want = reference.pop().map(|Reverse(e)| e);
            assert_eq!(frontier.pop(), want);
            popped = want.map_or(popped, |(d, _)| d);
        }
    }
    while let Some(Reverse(e)) = reference.pop() {
        assert_eq!(frontier.pop(), Some(e));
    }
    assert_eq!(frontier.pop(), None);
}
