//! The text summary of `rshmem topo`: counts of nodes and links by kind, hosts, per-kind
//! bandwidth and latency, the per-operation timing, and the route from PE 0 to a few PEs.

use std::collections::{BTreeMap, BTreeSet};

use hw::Pe;
use hw::topology::{NodeKind, PathClass, Topology};
use sim::Machine;
use sim::costs::Timing;

use super::{Graph, LINK_KINDS, LinkStats, NODE_KIND_WORDS, gbps, plural};
use crate::svg::put;

/// A text summary: counts of nodes and links by kind, hosts, per-kind bandwidth and latency,
/// the per-operation timing, and the route from PE 0 to a few sample PEs.
pub fn describe(machine: &Machine) -> String {
    let Machine {
        topology: t,
        timing,
    } = machine;
    let g = Graph::of(t);
    let mut out = String::new();
    let n_gpus = t.n_gpus();
    let hosts: BTreeSet<u32> = (0..n_gpus).map(|pe| t.host_of(Pe(pe))).collect();
    put!(
        out,
        "topology {:?}: {} on {}\n",
        t.name(),
        plural(n_gpus as usize, "GPU"),
        plural(hosts.len(), "host")
    );
    put!(
        out,
        "PEs 0..{}: one per GPU, in the order the GPUs are listed (host-major in presets)\n",
        n_gpus - 1
    );

    let mut node_counts = Vec::new();
    for word in NODE_KIND_WORDS {
        let count = g.nodes.iter().filter(|n| n.kind.word() == word).count();
        if count > 0 {
            node_counts.push(format!("{count} {word}"));
        }
    }
    let mut tiers: BTreeMap<u32, usize> = BTreeMap::new();
    for node in &g.nodes {
        if let NodeKind::IbSwitch { tier } = node.kind {
            *tiers.entry(tier).or_default() += 1;
        }
    }
    put!(out, "nodes: {}", node_counts.join(", "));
    if tiers.len() > 1 {
        let per_tier: Vec<String> = tiers
            .iter()
            .map(|(tier, count)| format!("tier {tier}: {count}"))
            .collect();
        put!(out, " (ib-switch {})", per_tier.join(", "));
    }
    out.push('\n');

    put!(
        out,
        "links: {} in all, bandwidth per direction\n",
        g.edges.len()
    );
    for kind in LINK_KINDS {
        if let Some(stats) = LinkStats::of(&g, kind) {
            put!(
                out,
                "  {:<7}{:>6}  {} GB/s, {} ns\n",
                kind.word(),
                plural(stats.count, "link"),
                stats.bandwidth_text(),
                stats.latency_text()
            );
        }
    }

    put!(
        out,
        "timing: issue {} ns, {} ns per NIC crossed, poll {} ns, fence {} ns, release {} ns, \
         transfer start-up {} ns, local memory {} GB/s\n",
        timing.issue_ns,
        timing.nic_ns,
        timing.poll_ns,
        timing.fence_ns,
        timing.release_ns,
        timing.transfer_ns,
        gbps(t.local_bytes_per_s())
    );
    out.push_str(&calibrated_costs(timing));

    let samples = sample_targets(t);
    if !samples.is_empty() {
        out.push_str("sample routes (lowest latency; bandwidth of the narrowest link):\n");
        let routes = t.routes_from(Pe(0));
        for (target, why) in samples {
            let path = routes.path_to(t, target);
            let via: Vec<&str> = path
                .hops
                .iter()
                .take(path.hops.len().saturating_sub(1))
                .map(|hop| {
                    let (a, b) = t.link_ends(hop.link);
                    if hop.forward { b } else { a }
                })
                .collect();
            put!(
                out,
                "  PE 0 -> PE {} ({}, {} -> {}): {}, {} ns, {} GB/s",
                target.0,
                why,
                g.nodes[t.gpu_node(Pe(0)).index()].name,
                g.nodes[t.gpu_node(target).index()].name,
                class_word(path.class),
                path.latency_ns,
                gbps(path.bandwidth_bytes_per_s)
            );
            if path.nics > 0 {
                put!(out, ", {}", plural(path.nics as usize, "NIC"));
            }
            if via.is_empty() {
                out.push_str(", direct link\n");
            } else {
                put!(out, ", via {}\n", via.join(" > "));
            }
        }
    }
    out
}

/// The costs only a calibration gives a topology (docs/calibration.md), as lines of
/// [`describe`]; nothing when they are all free.
fn calibrated_costs(timing: &Timing) -> String {
    let mut out = String::new();
    let curves = timing.copy.named();
    let costs = [
        timing.launch_ns,
        timing.local_access_ns,
        timing.startup_ns,
        timing.map_bytes_per_s,
    ];
    if costs.iter().all(|&c| c == 0) && curves.iter().all(|(_, c)| c.is_free()) {
        return out;
    }
    put!(
        out,
        "calibrated: launch {} ns, local access {} ns, start-up {:.3} ms, mapping {}\n",
        timing.launch_ns,
        timing.local_access_ns,
        timing.startup_ns as f64 / 1e6,
        match timing.map_bytes_per_s {
            0 => "free".to_string(),
            rate => format!("{} GB/s", gbps(rate)),
        }
    );
    out.push_str("copy curves (bytes: ns per put):\n");
    for (mover, curve) in curves {
        let points: Vec<String> = curve
            .points()
            .iter()
            .map(|&(bytes, ns)| format!("{bytes}: {ns}"))
            .collect();
        let text = if points.is_empty() {
            "free".to_string()
        } else {
            points.join(", ")
        };
        put!(out, "  {mover:<7}{text}\n");
    }
    out
}

/// The PEs `describe` routes to from PE 0, each with why it was picked.
fn sample_targets(t: &Topology) -> Vec<(Pe, String)> {
    let n_gpus = t.n_gpus();
    let mut samples: Vec<(Pe, String)> = Vec::new();
    let mut add = |pe: u32, why: String| {
        if pe != 0 && pe < n_gpus && samples.iter().all(|(p, _)| p.0 != pe) {
            samples.push((Pe(pe), why));
        }
    };
    add(1, "next PE".to_string());
    let home = t.host_of(Pe(0));
    if let Some(pe) = (0..n_gpus).find(|&pe| t.host_of(Pe(pe)) != home) {
        let host = t.host_of(Pe(pe));
        add(pe, format!("first GPU of host {host}"));
    }
    add(n_gpus.saturating_sub(1), "last PE".to_string());
    samples
}

fn class_word(class: PathClass) -> &'static str {
    match class {
        PathClass::Local => "local",
        PathClass::LoadStore => "load/store",
        PathClass::Rdma => "RDMA",
    }
}
