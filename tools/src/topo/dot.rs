//! The Graphviz DOT rendering of `rshmem topo --dot`.

use std::collections::BTreeMap;

use hw::topology::{Node, NodeKind, Topology};

use super::{Graph, gbps, host_of, link_style, node_style, plural};
use crate::svg::put;

/// A Graphviz DOT rendering (`dot -Tsvg`): hosts as clusters, IB switches ranked by tier,
/// nodes shaped and coloured by kind, edges coloured by kind and labelled with kind, GB/s and
/// ns.
pub fn to_dot(t: &Topology) -> String {
    let g = Graph::of(t);
    let mut out = String::new();
    put!(out, "graph {} {{\n", dot_quote(t.name()));
    put!(
        out,
        "  label={}; labelloc=t; fontname=\"Helvetica\"; fontsize=16;\n",
        dot_quote(&format!(
            "{}: {}",
            t.name(),
            plural(t.n_gpus() as usize, "GPU")
        ))
    );
    out.push_str("  node [fontname=\"Helvetica\", fontsize=10, style=\"filled\"];\n");
    out.push_str("  edge [fontname=\"Helvetica\", fontsize=8];\n");

    let mut hosts: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    let mut tiers: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, node) in g.nodes.iter().enumerate() {
        match host_of(node) {
            Some(host) => hosts.entry(host).or_default().push(i),
            None => {
                let tier = match node.kind {
                    NodeKind::IbSwitch { tier } => tier,
                    _ => 0,
                };
                tiers.entry(tier).or_default().push(i);
            }
        }
    }
    for (host, members) in &hosts {
        put!(
            out,
            "  subgraph {} {{\n",
            dot_quote(&format!("cluster_host_{host}"))
        );
        put!(
            out,
            "    label=\"host {host}\"; style=\"rounded\"; color=\"#999999\";\n"
        );
        for &i in members {
            put!(out, "    {}\n", dot_node(g.nodes[i]));
        }
        out.push_str("  }\n");
    }
    // Highest tier first so that spines are drawn above leaves.
    for members in tiers.values().rev() {
        out.push_str("  { rank=same;\n");
        for &i in members {
            put!(out, "    {}\n", dot_node(g.nodes[i]));
        }
        out.push_str("  }\n");
    }
    for &(a, b, link) in &g.edges {
        let style = link_style(link.kind);
        put!(
            out,
            "  {} -- {} [label=\"{}\\n{} GB/s\\n{} ns\", color=\"{}\", fontcolor=\"{}\", penwidth={}];\n",
            dot_quote(&g.nodes[a].name),
            dot_quote(&g.nodes[b].name),
            link.kind.word(),
            gbps(link.bandwidth_bytes_per_s),
            link.latency_ns,
            style.color,
            style.color,
            style.width
        );
    }
    out.push_str("}\n");
    out
}

fn dot_node(node: &Node) -> String {
    let style = node_style(node.kind);
    format!(
        "{} [shape={}, fillcolor=\"{}\", color=\"{}\"];",
        dot_quote(&node.name),
        style.dot_shape,
        style.fill,
        style.stroke
    )
}

/// A DOT double-quoted string.
pub(super) fn dot_quote(text: &str) -> String {
    let escaped = text
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n");
    format!("\"{escaped}\"")
}
