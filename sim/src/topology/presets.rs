//! The built-in topologies: the machines docs/targets.md says the simulator must know.
//!
//! - `h200x2`: the 2×H200 test machine, two GPUs joined directly by NV18.
//! - `hgx8`: an 8-GPU HGX/DGX H100/H200 board, every GPU on one NVSwitch crossbar.
//! - `ib-N`: N such boards, one 400 Gb/s NIC per GPU, on a rail-optimised InfiniBand fat tree.
//!
//! Every number below names its source in docs/targets.md: measured on the test machine, or a
//! public figure. Numbers marked "prior" have no measurement behind them yet; `rshmem
//! calibrate` replaces them for a machine it has a bench run of.

use hw::topology::{Link, LinkKind, NV18, NodeKind, Topology, TopologyBuilder};
use petgraph::graph::NodeIndex;

use super::Machine;
use crate::costs::{CopyCurve, CopyTimes, Timing};

/// Effective NV18 bandwidth per direction, in bytes per second: the copy engine's 394.8 GB/s
/// of [`NV18`] (docs/targets.md). The NVSwitch boards' links use it; the `h200x2` preset
/// itself has its fitted bandwidth.
const NV18_BYTES_PER_S: u64 = NV18.bandwidth_bytes_per_s;

/// One-way NVLink latency between two GPUs in nanoseconds: [`NV18`]'s 450 ns, half the
/// measured remote `atomic_fetch_add` round trip rounded so that the NVSwitch model's two
/// equal hops (GPU to switch, switch to GPU) stay whole nanoseconds.
pub const NVLINK_PAIR_LATENCY_NS: u64 = NV18.latency_ns;

/// One GPU-to-NVSwitch hop in nanoseconds: a GPU pair through the switch costs the same as the
/// direct NV18 link, because an HGX pair can use all 18 links (docs/targets.md).
const NVSWITCH_HOP_LATENCY_NS: u64 = NVLINK_PAIR_LATENCY_NS / 2;

/// Per-GPU NVLink bandwidth to the NVSwitch, per direction. The raw rate is 18 × 25 = 450 GB/s
/// (docs/targets.md); we use the effective rate measured on NV18 because the protocol overhead is the same through a switch.
const NVSWITCH_LINK_BYTES_PER_S: u64 = NV18_BYTES_PER_S;

/// PCIe Gen5 x16 per direction: 32 GT/s × 16 lanes × 128/130 ÷ 8 ≈ 63 GB/s
/// (docs/targets.md).
const PCIE_GEN5_X16_BYTES_PER_S: u64 = 63_000_000_000;

/// GPU to NIC over PCIe, one way, in nanoseconds. Prior: no source gives it; calibration
/// (`rshmem calibrate`) replaces it.
const PCIE_LATENCY_NS: u64 = 150;

/// NDR InfiniBand per direction as a ConnectX-7 achieves it: 400 Gb/s is 50 GB/s on the wire,
/// and CX-7 reaches 48–49 GB/s (docs/targets.md).
const IB_NDR_BYTES_PER_S: u64 = 48_500_000_000;

/// NIC to leaf switch, one way, including the NIC's egress, in nanoseconds. Prior chosen so
/// that NIC → leaf → NIC (1.2 µs) falls in the 1–1.5 µs back-to-back `ib_write_lat` range of
/// docs/targets.md.
const IB_NIC_LEAF_LATENCY_NS: u64 = 600;

/// Leaf to spine switch, one way, in nanoseconds: the 0.1–0.2 µs per switch hop of
/// docs/targets.md plus cable time. Prior.
const IB_LEAF_SPINE_LATENCY_NS: u64 = 300;

/// An H200's copy rate within its own memory: a device-to-device copy measured 4.3 TB/s
/// counting read and write (docs/targets.md).
const H200_LOCAL_BYTES_PER_S: u64 = 4_300_000_000_000;

/// Per-operation costs of a Hopper GPU: the simulator's priors ([`Timing::PRIORS`]) until
/// `rshmem calibrate` fits them to a bench run of the machine (docs/calibration.md).
const H200_TIMING: Timing = Timing::PRIORS;

/// The `h200x2` link and per-operation costs as `rshmem calibrate` fitted them to a run of
/// `rshmem bench` on the two-H200 machine (2026-11-23, commit f203574; its lines are
/// `sim/topologies/h200x2.bench.raw`, and BENCHMARKS.md, "Simulator vs measured", has the
/// comparison). The fit sets the link's latency and bandwidth (the fastest put measured,
/// the copy engine's), poll_ns, fence_ns, release_ns, each mover's copy curve, the launch, a local
/// access, the start-up and the mapping rate; `transfer_ns` is 0, the curves holding every
/// put's start-up. The other boards keep the priors above (their GPUs meet through NVSwitch
/// or InfiniBand, which this run did not measure). `sim/topologies/h200x2.toml` holds the
/// same.
const H200X2_FITTED_LATENCY_NS: u64 = 366;
const H200X2_FITTED_BYTES_PER_S: u64 = 395_224_000_000;
const H200X2_FITTED_TIMING: Timing = Timing {
    poll_ns: 238,
    fence_ns: 894,
    release_ns: 1091,
    transfer_ns: 0,
    copy: CopyTimes {
        device: curve(&[
            (1 << 20, 3153),
            (4 << 20, 12_248),
            (16 << 20, 47_366),
            (64 << 20, 187_967),
            (256 << 20, 748_774),
        ]),
        block: curve(&[
            (1 << 10, 280),
            (4 << 10, 280),
            (16 << 10, 342),
            (64 << 10, 1319),
            (256 << 10, 6051),
            (1 << 20, 23_330),
        ]),
        warp: curve(&[
            (1 << 10, 190),
            (4 << 10, 197),
            (16 << 10, 473),
            (64 << 10, 1635),
            (256 << 10, 21_298),
            (1 << 20, 84_547),
        ]),
        thread: curve(&[(512, 1084), (32 << 10, 81_008)]),
        engine: curve(&[
            (4 << 10, 1072),
            (64 << 10, 1362),
            (1 << 20, 3917),
            (16 << 20, 45_027),
            (256 << 20, 672_900),
        ]),
    },
    launch_ns: 2801,
    local_access_ns: 384,
    startup_ns: 282_975_930,
    map_bytes_per_s: 56_658_635_031,
    ..H200_TIMING
};

/// A preset's copy curve; fixed data, so an invalid one is a bug in this file.
const fn curve(points: &[(u64, u64)]) -> CopyCurve {
    match CopyCurve::new(points) {
        Ok(curve) => curve,
        Err(_) => panic!("a preset's copy curve rises"),
    }
}

/// GPUs per HGX board (docs/targets.md).
const GPUS_PER_HOST: u32 = 8;

/// Hosts one leaf switch serves on each rail: a 64-port NDR switch split 32 ports down to
/// NICs and 32 up to spines, the usual non-blocking fat-tree leaf.
const HOSTS_PER_LEAF: u32 = 32;

/// Leaves one spine switch takes; see [`HOSTS_PER_LEAF`] for the port split.
const LEAVES_PER_SPINE: u32 = 32;

/// The largest `ib-N`: 16384 GPUs, as many as one rail of a two-tier fat tree of 64-port
/// switches reaches (64 leaves of 32 hosts). Bigger fabrics are a typo more often than a plan.
pub const MAX_IB_HOSTS: u32 = 2048;

/// The names [`preset`] accepts, for help text; `ib-N` stands for `ib-1`, `ib-2`, ...
pub fn names() -> &'static [&'static str] {
    &["h200x2", "hgx8", "ib-N"]
}

/// The built-in topology called `name`, or `None` when there is none.
///
/// `ib-N` takes a decimal host count from 1 to [`MAX_IB_HOSTS`].
pub fn preset(name: &str) -> Option<Machine> {
    let (topology, timing) = match name {
        "h200x2" => (h200x2(), H200X2_FITTED_TIMING),
        "hgx8" => (hgx8(), H200_TIMING),
        _ => (ib(parse_ib_hosts(name)?), H200_TIMING),
    };
    // Presets are fixed data: failing to build one is a bug in this file, not a user error.
    let topology = topology.unwrap_or_else(|e| panic!("preset {name:?} is invalid: {e}"));
    Some(Machine { topology, timing })
}

/// The host count of an `ib-N` name; digits only, so "ib-+3" and "ib- 3" are not presets.
fn parse_ib_hosts(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("ib-")?;
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits
        .parse::<u32>()
        .ok()
        .filter(|n| (1..=MAX_IB_HOSTS).contains(n))
}

fn link(kind: LinkKind, latency_ns: u64, bandwidth_bytes_per_s: u64) -> Link {
    Link {
        kind,
        latency_ns,
        bandwidth_bytes_per_s,
    }
}

fn h200x2() -> Result<Topology, hw::topology::TopologyError> {
    let mut b = TopologyBuilder::new("h200x2");
    b.local_bytes_per_s(H200_LOCAL_BYTES_PER_S);
    let g0 = b.node("gpu0", NodeKind::Gpu { host: 0 });
    let g1 = b.node("gpu1", NodeKind::Gpu { host: 0 });
    // One edge stands for all 18 links of NV18.
    b.link(
        g0,
        g1,
        link(
            LinkKind::NvLink,
            H200X2_FITTED_LATENCY_NS,
            H200X2_FITTED_BYTES_PER_S,
        ),
    );
    b.build()
}

fn hgx8() -> Result<Topology, hw::topology::TopologyError> {
    let mut b = TopologyBuilder::new("hgx8");
    b.local_bytes_per_s(H200_LOCAL_BYTES_PER_S);
    add_nvswitch_host(&mut b, 0, "");
    b.build()
}

/// Adds one HGX board: [`GPUS_PER_HOST`] GPUs named `{prefix}gpu{r}`, each linked to one node
/// `{prefix}nvswitch` that stands for the board's four NVSwitch chips. Returns the GPUs in
/// rank order.
fn add_nvswitch_host(b: &mut TopologyBuilder, host: u32, prefix: &str) -> Vec<NodeIndex> {
    // GPUs first, so PEs are numbered host-major whatever else a preset adds per host.
    let gpus: Vec<NodeIndex> = (0..GPUS_PER_HOST)
        .map(|r| b.node(format!("{prefix}gpu{r}"), NodeKind::Gpu { host }))
        .collect();
    let switch = b.node(format!("{prefix}nvswitch"), NodeKind::NvSwitch { host });
    for &gpu in &gpus {
        b.link(
            gpu,
            switch,
            link(
                LinkKind::NvLink,
                NVSWITCH_HOP_LATENCY_NS,
                NVSWITCH_LINK_BYTES_PER_S,
            ),
        );
    }
    gpus
}

/// `n_hosts` HGX boards on a rail-optimised fat tree: NIC `r` of every host sits on rail `r`,
/// whose leaves each serve [`HOSTS_PER_LEAF`] hosts; one spine layer joins every leaf of every
/// rail, so GPUs on different rails reach each other too (routes never transit a GPU).
fn ib(n_hosts: u32) -> Result<Topology, hw::topology::TopologyError> {
    let mut b = TopologyBuilder::new(format!("ib-{n_hosts}"));
    b.local_bytes_per_s(H200_LOCAL_BYTES_PER_S);
    let mut nics = Vec::with_capacity((n_hosts * GPUS_PER_HOST) as usize);
    for host in 0..n_hosts {
        let prefix = format!("node{host}.");
        let gpus = add_nvswitch_host(&mut b, host, &prefix);
        for (rail, &gpu) in gpus.iter().enumerate() {
            let nic = b.node(format!("{prefix}nic{rail}"), NodeKind::Nic { host });
            b.link(
                gpu,
                nic,
                link(LinkKind::Pcie, PCIE_LATENCY_NS, PCIE_GEN5_X16_BYTES_PER_S),
            );
            nics.push(nic);
        }
    }

    let leaves_per_rail = n_hosts.div_ceil(HOSTS_PER_LEAF);
    let mut leaves = Vec::with_capacity((GPUS_PER_HOST * leaves_per_rail) as usize);
    for rail in 0..GPUS_PER_HOST {
        for k in 0..leaves_per_rail {
            let leaf = b.node(
                format!("rail{rail}.leaf{k}"),
                NodeKind::IbSwitch { tier: 0 },
            );
            let hosts = k * HOSTS_PER_LEAF..((k + 1) * HOSTS_PER_LEAF).min(n_hosts);
            for host in hosts {
                let nic = nics[(host * GPUS_PER_HOST + rail) as usize];
                b.link(
                    nic,
                    leaf,
                    link(LinkKind::Ib, IB_NIC_LEAF_LATENCY_NS, IB_NDR_BYTES_PER_S),
                );
            }
            leaves.push(leaf);
        }
    }

    // There are always at least 8 leaves (one per rail), so always at least two spines: one
    // would be a single point of failure no real fabric has.
    let n_leaves = leaves.len() as u32;
    let n_spines = n_leaves.div_ceil(LEAVES_PER_SPINE).max(2);
    // Each leaf-spine edge is a trunk of parallel cables: a leaf's 32 uplink ports are shared
    // evenly among the spines, so the fabric is non-blocking like the real one instead of
    // funnelling a whole leaf through one 48.5 GB/s cable per spine.
    let cables_per_trunk = HOSTS_PER_LEAF.div_ceil(n_spines).max(1);
    let trunk_bytes_per_s = IB_NDR_BYTES_PER_S * u64::from(cables_per_trunk);
    for j in 0..n_spines {
        let spine = b.node(format!("spine{j}"), NodeKind::IbSwitch { tier: 1 });
        for &leaf in &leaves {
            b.link(
                leaf,
                spine,
                link(LinkKind::Ib, IB_LEAF_SPINE_LATENCY_NS, trunk_bytes_per_s),
            );
        }
    }
    b.build()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use hw::Pe;
    use hw::topology::PathClass;

    use super::*;

    fn count_kinds(t: &Topology) -> BTreeMap<&'static str, usize> {
        let mut counts = BTreeMap::new();
        for node in t.graph().node_weights() {
            *counts.entry(node.kind.word()).or_default() += 1;
        }
        counts
    }

    #[test]
    fn every_listed_name_builds() {
        for name in ["h200x2", "hgx8", "ib-1", "ib-2", "ib-33"] {
            let t = preset(name).expect(name).topology;
            assert_eq!(t.name(), name);
        }
    }

    #[test]
    fn bad_names_are_not_presets() {
        for name in [
            "", "h200", "ib-", "ib-0", "ib-x", "ib--1", "ib-+3", "ib-1.5", "ib-99999",
        ] {
            assert!(preset(name).is_none(), "{name:?}");
        }
    }

    #[test]
    fn h200x2_is_one_nv18_edge() {
        let t = preset("h200x2").unwrap().topology;
        assert_eq!(t.n_gpus(), 2);
        assert_eq!(t.n_links(), 1);
        let path = t.routes_from(Pe(0)).path_to(&t, Pe(1));
        assert_eq!(path.class, PathClass::LoadStore);
        assert_eq!(path.latency_ns, H200X2_FITTED_LATENCY_NS);
        assert_eq!(path.bandwidth_bytes_per_s, H200X2_FITTED_BYTES_PER_S);
        assert_eq!(t.local_bytes_per_s(), 4_300_000_000_000);
    }

    #[test]
    fn hgx8_pairs_cross_the_switch_at_nv18_cost() {
        let t = preset("hgx8").unwrap().topology;
        assert_eq!(t.n_gpus(), 8);
        let counts = count_kinds(&t);
        assert_eq!(counts["gpu"], 8);
        assert_eq!(counts["nvswitch"], 1);
        let routes = t.routes_from(Pe(3));
        for pe in (0..8).filter(|&p| p != 3) {
            let path = routes.path_to(&t, Pe(pe));
            assert_eq!(path.hops.len(), 2);
            assert_eq!(path.latency_ns, NVLINK_PAIR_LATENCY_NS);
            assert_eq!(path.bandwidth_bytes_per_s, NV18_BYTES_PER_S);
            assert_eq!(path.class, PathClass::LoadStore);
        }
    }

    #[test]
    fn ib_pes_are_host_major_and_cross_host_routes_use_rdma() {
        let t = preset("ib-2").unwrap().topology;
        assert_eq!(t.n_gpus(), 16);
        for pe in 0..16 {
            assert_eq!(t.host_of(Pe(pe)), pe / 8);
            let name = &t.graph()[t.gpu_node(Pe(pe))].name;
            assert_eq!(name, &format!("node{}.gpu{}", pe / 8, pe % 8));
        }
        let counts = count_kinds(&t);
        assert_eq!(counts["nic"], 16);
        assert_eq!(counts["nvswitch"], 2);
        assert_eq!(counts["ib-switch"], 8 + 2);

        let routes = t.routes_from(Pe(0));
        let same_host = routes.path_to(&t, Pe(5));
        assert_eq!(same_host.class, PathClass::LoadStore);
        assert_eq!(same_host.latency_ns, NVLINK_PAIR_LATENCY_NS);

        // Same rail: GPU, NIC, leaf, NIC, GPU.
        let same_rail = routes.path_to(&t, Pe(8));
        assert_eq!(same_rail.class, PathClass::Rdma);
        assert_eq!(same_rail.hops.len(), 4);
        assert_eq!(same_rail.nics, 2);
        assert_eq!(
            same_rail.latency_ns,
            2 * PCIE_LATENCY_NS + 2 * IB_NIC_LEAF_LATENCY_NS
        );
        assert_eq!(same_rail.bandwidth_bytes_per_s, IB_NDR_BYTES_PER_S);

        // Other rail: up through a spine and down the other rail's leaf.
        let other_rail = routes.path_to(&t, Pe(15));
        assert_eq!(other_rail.class, PathClass::Rdma);
        assert_eq!(other_rail.hops.len(), 6);
        assert_eq!(
            other_rail.latency_ns,
            2 * PCIE_LATENCY_NS + 2 * IB_NIC_LEAF_LATENCY_NS + 2 * IB_LEAF_SPINE_LATENCY_NS
        );
        assert_eq!(other_rail.bandwidth_bytes_per_s, IB_NDR_BYTES_PER_S);
    }

    #[test]
    fn ib_beyond_one_leaf_per_rail_goes_through_spines() {
        let t = preset("ib-33").unwrap().topology;
        let counts = count_kinds(&t);
        // Two leaves per rail, and 16 leaves still fit two spines.
        assert_eq!(counts["ib-switch"], 16 + 2);
        // Host 32 hangs off rail 0's second leaf, so reaching it needs a spine.
        let path = t.routes_from(Pe(0)).path_to(&t, Pe(32 * 8));
        assert_eq!(path.hops.len(), 6);
        assert_eq!(path.bandwidth_bytes_per_s, IB_NDR_BYTES_PER_S);
    }

    /// How long they take to build is a benchmark's business (BENCHMARKS.md), not a test's.
    #[test]
    fn large_ib_presets_build() {
        for (name, n_gpus) in [("ib-128", 1024), ("ib-512", 4096)] {
            let t = preset(name).unwrap().topology;
            assert_eq!(t.n_gpus(), n_gpus);
        }
    }
}
