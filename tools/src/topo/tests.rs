//! Tests of the three renderings: what each must contain, well-formed SVG, escaping.

use hw::Pe;
use hw::topology::{Link, LinkKind, NodeKind, Topology};
use sim::Machine;

use super::dot::dot_quote;
use super::{describe, gbps, to_dot, to_svg};

fn preset(name: &str) -> Topology {
    machine(name).topology
}

fn machine(name: &str) -> Machine {
    sim::topology::presets::preset(name).expect("preset exists")
}

fn gpu_names(t: &Topology) -> Vec<String> {
    (0..t.n_gpus())
        .map(|pe| t.graph()[t.gpu_node(Pe(pe))].name.clone())
        .collect()
}

/// Checks that every tag is closed in order and that no text holds a raw `<` or `&`
/// outside an entity: enough XML well-formedness to catch a broken writer.
fn assert_well_formed(svg: &str) {
    assert!(svg.starts_with("<svg"), "{}", &svg[..40.min(svg.len())]);
    assert!(svg.trim_end().ends_with("</svg>"));
    let mut open: Vec<&str> = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find('<') {
        let text = &rest[..start];
        for (i, _) in text.match_indices('&') {
            let entity = &text[i..];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]
                    .iter()
                    .any(|e| entity.starts_with(e)),
                "raw & in {text:?}"
            );
        }
        let end = rest[start..].find('>').expect("tag is closed") + start;
        let tag = &rest[start + 1..end];
        assert!(!tag.contains('<'), "< inside tag {tag:?}");
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(open.pop(), Some(name.trim()), "mismatched </{name}>");
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().expect("tag has a name");
            open.push(name);
        }
        rest = &rest[end + 1..];
    }
    assert!(open.is_empty(), "unclosed tags {open:?}");
}

#[test]
fn the_text_lists_calibrated_costs_only_where_a_calibration_set_them() {
    let h200x2 = describe(&machine("h200x2"));
    assert!(h200x2.contains("calibrated: launch "), "{h200x2}");
    assert!(h200x2.contains("  warp   1024: "), "{h200x2}");
    assert!(!describe(&machine("hgx8")).contains("calibrated"));
}

#[test]
fn dot_has_every_node_and_edge() {
    for name in ["h200x2", "hgx8", "ib-2"] {
        let t = preset(name);
        let dot = to_dot(&t);
        assert!(dot.starts_with("graph \""), "{name}");
        assert_eq!(dot.matches('{').count(), dot.matches('}').count(), "{name}");
        for node in t.graph().node_weights() {
            assert!(
                dot.contains(&format!("\"{}\" [shape=", node.name)),
                "{name}: {}",
                node.name
            );
        }
        for id in 0..t.n_links() {
            let (a, b) = t.link_ends(hw::topology::LinkId(id));
            assert!(
                dot.contains(&format!("\"{a}\" -- \"{b}\" [label=")),
                "{name}: {a} -- {b}"
            );
        }
        assert_eq!(dot.matches(" -- ").count(), t.n_links() as usize, "{name}");
    }
    // The edge's label is its kind, bandwidth and latency (whatever a calibration set).
    let h200x2 = preset("h200x2");
    let link = h200x2.link(hw::topology::LinkId(0));
    let label = format!(
        "nvlink\\n{} GB/s\\n{} ns",
        gbps(link.bandwidth_bytes_per_s),
        link.latency_ns
    );
    assert!(to_dot(&h200x2).contains(&label), "{label}");
    assert!(to_dot(&preset("ib-2")).contains("subgraph \"cluster_host_1\""));
}

#[test]
fn dot_quotes_awkward_names() {
    assert_eq!(dot_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
}

#[test]
fn svg_is_well_formed_and_names_every_gpu() {
    for name in ["h200x2", "hgx8", "ib-2"] {
        let t = preset(name);
        let svg = to_svg(&t);
        assert_well_formed(&svg);
        for gpu in gpu_names(&t) {
            assert!(svg.contains(&gpu), "{name}: {gpu}");
        }
        assert!(svg.contains(name), "{name}: title");
        assert!(
            !svg.contains("NaN") && !svg.contains("inf"),
            "{name}: bad number"
        );
        // One path per link in the detailed layout.
        assert_eq!(
            svg.matches("<path ").count(),
            t.n_links() as usize,
            "{name}"
        );
    }
}

#[test]
fn svg_falls_back_to_host_boxes_beyond_sixteen_hosts() {
    let t = preset("ib-40");
    let svg = to_svg(&t);
    assert_well_formed(&svg);
    assert!(svg.contains("Note: 40 hosts is more than 16"));
    assert!(!svg.contains("node0.gpu0"), "GPUs are not drawn one by one");
    // Every host has a box, and rails reach both groups of hosts (32 + 8).
    assert!(svg.contains("host 39:"));
    assert!(svg.contains("hosts 0-31") && svg.contains("hosts 32-39"));
    let detailed = to_svg(&preset("ib-16"));
    assert_well_formed(&detailed);
    assert!(!detailed.contains("Note:"));
    assert!(detailed.contains("node15.gpu7"));
}

#[test]
fn svg_escapes_names() {
    let mut b = hw::topology::TopologyBuilder::new("a<b & \"c\"");
    let g0 = b.node("g<0>", NodeKind::Gpu { host: 0 });
    let g1 = b.node("g&1", NodeKind::Gpu { host: 0 });
    b.link(
        g0,
        g1,
        Link {
            kind: LinkKind::Pcie,
            latency_ns: 1,
            bandwidth_bytes_per_s: 1,
        },
    );
    let t = b.build().expect("valid");
    let svg = to_svg(&t);
    assert_well_formed(&svg);
    assert!(svg.contains("g&lt;0&gt;") && svg.contains("g&amp;1"));
}

#[test]
fn describe_summarises_counts_and_routes() {
    let text = describe(&machine("ib-2"));
    assert!(text.contains("16 GPUs on 2 hosts"), "{text}");
    assert!(
        text.contains("16 gpu, 2 nvswitch, 16 nic, 10 ib-switch"),
        "{text}"
    );
    assert!(text.contains("tier 0: 8, tier 1: 2"), "{text}");
    assert!(text.contains("nvlink"), "{text}");
    assert!(text.contains("394.8 GB/s, 225 ns"), "{text}");
    // Next PE over NVSwitch, first GPU of host 1 on the same rail, last PE across rails.
    assert!(
        text.contains("PE 0 -> PE 1 (next PE, node0.gpu0 -> node0.gpu1): load/store, 450 ns, 394.8 GB/s, via node0.nvswitch"),
        "{text}"
    );
    assert!(
        text.contains("PE 0 -> PE 8 (first GPU of host 1, node0.gpu0 -> node1.gpu0): RDMA, 1500 ns, 48.5 GB/s, 2 NICs"),
        "{text}"
    );
    assert!(text.contains("PE 0 -> PE 15 (last PE"), "{text}");

    let pair = describe(&machine("h200x2"));
    assert!(pair.contains("2 GPUs on 1 host"), "{pair}");
    assert!(pair.contains("direct link"), "{pair}");
    assert_eq!(pair.matches("PE 0 -> ").count(), 1, "{pair}");
}

#[test]
fn gbps_prints_short_numbers() {
    assert_eq!(gbps(394_800_000_000), "394.8");
    assert_eq!(gbps(63_000_000_000), "63");
    assert_eq!(gbps(48_500_000_000), "48.5");
    assert_eq!(gbps(1), "0");
}
