//! The TOML topology file format (`docs/topology-format.md`).
//!
//! Every field is read as a [`toml::Spanned`] value so that a semantic error (an unknown node
//! name, a zero bandwidth) points at the line and column that caused it, just as a syntax
//! error does.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use hw::topology::{
    CopyCurve, CopyTimes, Link, LinkKind, NodeKind, Timing, Topology, TopologyBuilder,
    TopologyError,
};
use petgraph::graph::NodeIndex;
use serde::Deserialize;
use toml::Spanned;

/// A topology file that cannot be used, with the place that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}:{line}:{column}: {message}")]
pub struct FileError {
    /// Where the text came from: a path, or a label such as `<preset>`.
    pub origin: String,
    /// 1-based line of the offending text.
    pub line: usize,
    /// 1-based column of the offending text, counted in characters.
    pub column: usize,
    /// What is wrong and, where it helps, how to fix it.
    pub message: String,
}

/// The whole file. Field names are the file's keys.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSpec {
    name: Option<Spanned<String>>,
    timing: Option<TimingSpec>,
    #[serde(default)]
    node: Vec<NodeSpec>,
    #[serde(default)]
    link: Vec<LinkSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TimingSpec {
    issue_ns: Option<u64>,
    nic_ns: Option<u64>,
    poll_ns: Option<u64>,
    local_gbps: Option<Spanned<f64>>,
    fence_ns: Option<u64>,
    release_ns: Option<u64>,
    transfer_ns: Option<u64>,
    launch_ns: Option<u64>,
    local_access_ns: Option<u64>,
    startup_ns: Option<u64>,
    map_gbps: Option<Spanned<f64>>,
    copy: Option<CopySpec>,
}

/// `[timing.copy]`: each mover's curve as `[[bytes, ns], ...]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CopySpec {
    device: Option<Spanned<Vec<(u64, u64)>>>,
    block: Option<Spanned<Vec<(u64, u64)>>>,
    warp: Option<Spanned<Vec<(u64, u64)>>>,
    thread: Option<Spanned<Vec<(u64, u64)>>>,
    engine: Option<Spanned<Vec<(u64, u64)>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeSpec {
    name: Spanned<String>,
    kind: Spanned<String>,
    host: Option<Spanned<u32>>,
    tier: Option<Spanned<u32>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkSpec {
    a: Spanned<String>,
    b: Spanned<String>,
    kind: Spanned<String>,
    latency_ns: u64,
    gbps: Spanned<f64>,
}

/// Reads a topology from the text of a TOML topology file.
///
/// `origin` names the text in error messages (usually its path); when the file has no `name`
/// key, the topology is named after `origin`'s file stem.
///
/// # Errors
/// [`FileError`] at the first problem: TOML syntax, an unknown key, a missing or mistyped
/// value, an unknown node or kind, a non-positive bandwidth, a duplicate node or link, or a
/// machine the simulator cannot route (no GPU, GPUs that cannot reach each other).
pub fn parse(text: &str, origin: &str) -> Result<Topology, FileError> {
    let error = |span: Option<Range<usize>>, message: String| {
        let (line, column) = span.map_or((1, 1), |s| line_column(text, s.start));
        FileError {
            origin: origin.to_string(),
            line,
            column,
            message,
        }
    };
    let spec: FileSpec =
        toml::from_str(text).map_err(|e| error(e.span(), e.message().trim_end().to_string()))?;

    let name = match &spec.name {
        Some(name) => name.get_ref().clone(),
        None => Path::new(origin)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(origin)
            .to_string(),
    };
    let mut builder = TopologyBuilder::new(name);
    if let Some(timing) = &spec.timing {
        builder.timing(read_timing(timing).map_err(|(span, m)| error(Some(span), m))?);
    }

    // Node name -> (index, span of the name), to resolve links and to point at nodes in errors.
    let mut nodes: BTreeMap<&str, (NodeIndex, Range<usize>)> = BTreeMap::new();
    for node in &spec.node {
        let kind = node_kind(node).map_err(|(span, m)| error(Some(span), m))?;
        let name = node.name.get_ref().as_str();
        if let Some((_, first)) = nodes.get(name) {
            let (first_line, _) = line_column(text, first.start);
            return Err(error(
                Some(node.name.span()),
                format!(
                    "two nodes are named {name:?} (the first at line {first_line}); \
                     give each node its own name"
                ),
            ));
        }
        let index = builder.node(name, kind);
        nodes.insert(name, (index, node.name.span()));
    }

    // Unordered node pair -> span of the link's `a`, to reject a second link between them.
    let mut pairs: BTreeMap<(NodeIndex, NodeIndex), Range<usize>> = BTreeMap::new();
    for link in &spec.link {
        let end = |end: &Spanned<String>| {
            nodes
                .get(end.get_ref().as_str())
                .map(|(i, _)| *i)
                .ok_or_else(|| {
                    error(
                        Some(end.span()),
                        format!(
                            "unknown node {:?} in link; nodes are named in [[node]] tables",
                            end.get_ref()
                        ),
                    )
                })
        };
        let (a, b) = (end(&link.a)?, end(&link.b)?);
        if a == b {
            return Err(error(
                Some(link.b.span()),
                format!(
                    "link joins {:?} to itself; a link needs two different nodes",
                    link.a.get_ref()
                ),
            ));
        }
        let pair = (a.min(b), a.max(b));
        if let Some(first) = pairs.get(&pair) {
            let (first_line, _) = line_column(text, first.start);
            return Err(error(
                Some(link.a.span()),
                format!(
                    "{:?} and {:?} are already linked at line {first_line}; routes use only \
                     one link per pair, so give one link with the combined bandwidth",
                    link.a.get_ref(),
                    link.b.get_ref()
                ),
            ));
        }
        pairs.insert(pair, link.a.span());
        let kind = link_kind(&link.kind).map_err(|(span, m)| error(Some(span), m))?;
        let bandwidth_bytes_per_s =
            gbps_to_bytes_per_s(&link.gbps, "gbps").map_err(|(span, m)| error(Some(span), m))?;
        builder.link(
            a,
            b,
            Link {
                kind,
                latency_ns: link.latency_ns,
                bandwidth_bytes_per_s,
            },
        );
    }

    builder.build().map_err(|e| {
        // Point at the node the problem is about; the checks above already catch the
        // problems that belong to a single link or name.
        let span = match &e {
            TopologyError::Unreachable { b, .. } => nodes.get(b.as_str()).map(|(_, s)| s.clone()),
            TopologyError::DuplicateName(name) => nodes.get(name.as_str()).map(|(_, s)| s.clone()),
            _ => None,
        };
        error(span, e.to_string())
    })
}

/// A semantic error: the span it is about and the message.
type SpanError = (Range<usize>, String);

fn read_timing(spec: &TimingSpec) -> Result<Timing, SpanError> {
    let defaults = Timing::default();
    Ok(Timing {
        issue_ns: spec.issue_ns.unwrap_or(defaults.issue_ns),
        nic_ns: spec.nic_ns.unwrap_or(defaults.nic_ns),
        poll_ns: spec.poll_ns.unwrap_or(defaults.poll_ns),
        local_bytes_per_s: match &spec.local_gbps {
            Some(gbps) => gbps_to_bytes_per_s(gbps, "local_gbps")?,
            None => defaults.local_bytes_per_s,
        },
        fence_ns: spec.fence_ns.unwrap_or(defaults.fence_ns),
        // A file that names only a fence priced put-with-signal's release with it, as the
        // simulator did before the release had a cost of its own.
        release_ns: spec
            .release_ns
            .or(spec.fence_ns)
            .unwrap_or(defaults.release_ns),
        transfer_ns: spec.transfer_ns.unwrap_or(defaults.transfer_ns),
        copy: match &spec.copy {
            Some(copy) => read_copy(copy)?,
            None => defaults.copy,
        },
        launch_ns: spec.launch_ns.unwrap_or(defaults.launch_ns),
        local_access_ns: spec.local_access_ns.unwrap_or(defaults.local_access_ns),
        startup_ns: spec.startup_ns.unwrap_or(defaults.startup_ns),
        map_bytes_per_s: match &spec.map_gbps {
            Some(gbps) => gbps_to_bytes_per_s(gbps, "map_gbps")?,
            None => defaults.map_bytes_per_s,
        },
    })
}

fn read_copy(spec: &CopySpec) -> Result<CopyTimes, SpanError> {
    let curve = |points: &Option<Spanned<Vec<(u64, u64)>>>, key: &str| match points {
        None => Ok(CopyCurve::FREE),
        Some(points) => CopyCurve::new(points.get_ref()).map_err(|e| {
            (
                points.span(),
                format!("timing.copy.{key}: {e} (each point is [bytes, ns])"),
            )
        }),
    };
    Ok(CopyTimes {
        device: curve(&spec.device, "device")?,
        block: curve(&spec.block, "block")?,
        warp: curve(&spec.warp, "warp")?,
        thread: curve(&spec.thread, "thread")?,
        engine: curve(&spec.engine, "engine")?,
    })
}

fn node_kind(node: &NodeSpec) -> Result<NodeKind, SpanError> {
    let word = node.kind.get_ref().as_str();
    let host = node.host.as_ref().map_or(0, |h| *h.get_ref());
    let kind = match word {
        "gpu" => NodeKind::Gpu { host },
        "nvswitch" => NodeKind::NvSwitch { host },
        "pcie-switch" => NodeKind::PcieSwitch { host },
        "nic" => NodeKind::Nic { host },
        "ib-switch" => {
            if let Some(host) = &node.host {
                return Err((
                    host.span(),
                    "\"host\" does not apply to an ib-switch, which belongs to no host; \
                     give its fat-tree level as \"tier\" instead"
                        .to_string(),
                ));
            }
            NodeKind::IbSwitch {
                tier: node.tier.as_ref().map_or(0, |t| *t.get_ref()),
            }
        }
        _ => {
            return Err((
                node.kind.span(),
                format!(
                    "unknown node kind {word:?}; expected one of gpu, nvswitch, pcie-switch, \
                     nic, ib-switch"
                ),
            ));
        }
    };
    if let (Some(tier), false) = (&node.tier, matches!(kind, NodeKind::IbSwitch { .. })) {
        return Err((
            tier.span(),
            format!("\"tier\" applies only to ib-switch nodes, not to a {word}"),
        ));
    }
    Ok(kind)
}

fn link_kind(kind: &Spanned<String>) -> Result<LinkKind, SpanError> {
    match kind.get_ref().as_str() {
        "nvlink" => Ok(LinkKind::NvLink),
        "pcie" => Ok(LinkKind::Pcie),
        "ib" => Ok(LinkKind::Ib),
        word => Err((
            kind.span(),
            format!("unknown link kind {word:?}; expected one of nvlink, pcie, ib"),
        )),
    }
}

/// Converts GB/s (1e9 bytes per second) to whole bytes per second.
fn gbps_to_bytes_per_s(gbps: &Spanned<f64>, key: &str) -> Result<u64, SpanError> {
    let value = *gbps.get_ref();
    // Rounding absorbs the binary error of decimals such as 394.8.
    let bytes_per_s = (value * 1e9).round();
    // u64::MAX as f64 rounds up to 2^64, so `<` keeps the cast below exact.
    if !(bytes_per_s >= 1.0 && bytes_per_s < u64::MAX as f64) {
        return Err((
            gbps.span(),
            format!("{key} must be a positive number of GB/s (1e9 bytes/s), got {value}"),
        ));
    }
    Ok(bytes_per_s as u64)
}

/// 1-based line and character column of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    // Spans from the toml crate fall on character boundaries; this keeps a bad one harmless.
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use hw::Pe;
    use hw::topology::PathClass;

    use super::*;
    use crate::topology::{presets, shape};

    const GOOD: &str = r#"
name = "pair"
[timing]
issue_ns = 25
local_gbps = 4300
transfer_ns = 40

[[node]]
name = "gpu0"
kind = "gpu"

[[node]]
name = "gpu1"
kind = "gpu"
host = 0

[[link]]
a = "gpu0"
b = "gpu1"
kind = "nvlink"
latency_ns = 450
gbps = 394.8
"#;

    /// Parses `text` and returns the error, failing the test if it parses.
    fn parse_err(text: &str) -> FileError {
        match parse(text, "topo.toml") {
            Ok(t) => panic!("expected an error, got topology {:?}", t.name()),
            Err(e) => e,
        }
    }

    /// `GOOD` with `from` replaced by `to`, to make one mistake at a known place.
    fn good_with(from: &str, to: &str) -> String {
        assert!(GOOD.contains(from), "{from:?} is not in GOOD");
        GOOD.replacen(from, to, 1)
    }

    /// The 1-based line of GOOD on which `needle` first appears.
    fn line_of(text: &str, needle: &str) -> usize {
        let offset = text.find(needle).expect("needle present");
        text[..offset].matches('\n').count() + 1
    }

    #[test]
    fn good_file_round_trips() {
        let t = parse(GOOD, "dir/pair-file.toml").unwrap();
        assert_eq!(t.name(), "pair");
        assert_eq!(t.n_gpus(), 2);
        let timing = t.timing();
        assert_eq!(timing.issue_ns, 25);
        assert_eq!(timing.nic_ns, Timing::default().nic_ns);
        assert_eq!((timing.fence_ns, timing.transfer_ns), (0, 40));
        assert_eq!(timing.local_bytes_per_s, 4_300_000_000_000);
        let path = t.routes_from(Pe(0)).path_to(&t, Pe(1));
        assert_eq!(path.class, PathClass::LoadStore);
        assert_eq!(path.latency_ns, 450);
        assert_eq!(path.bandwidth_bytes_per_s, 394_800_000_000);
    }

    #[test]
    fn calibrated_costs_and_copy_curves_are_read() {
        let text = good_with(
            "transfer_ns = 40\n",
            "transfer_ns = 40\nlaunch_ns = 2800\nlocal_access_ns = 400\nstartup_ns = 9\n\
             map_gbps = 50\n[timing.copy]\nwarp = [[1024, 190], [65536, 1640]]\n",
        );
        let timing = parse(&text, "t.toml").unwrap().timing();
        assert_eq!(
            (timing.launch_ns, timing.local_access_ns, timing.startup_ns),
            (2800, 400, 9)
        );
        assert_eq!(timing.map_bytes_per_s, 50_000_000_000);
        assert_eq!(timing.copy.warp.points(), &[(1024, 190), (65536, 1640)]);
        assert!(timing.copy.block.is_free() && timing.copy.engine.is_free());
        let defaults = parse(GOOD, "t.toml").unwrap().timing();
        assert_eq!(defaults.copy, hw::topology::CopyTimes::FREE);
        assert_eq!(defaults.map_bytes_per_s, 0);
        // A put-with-signal's release costs what a fence does unless the file says otherwise.
        let fenced = good_with("transfer_ns = 40\n", "transfer_ns = 40\nfence_ns = 900\n");
        let timing = parse(&fenced, "t.toml").unwrap().timing();
        assert_eq!((timing.fence_ns, timing.release_ns), (900, 900));
        let released =
            fenced.replacen("fence_ns = 900\n", "fence_ns = 900\nrelease_ns = 1100\n", 1);
        let timing = parse(&released, "t.toml").unwrap().timing();
        assert_eq!((timing.fence_ns, timing.release_ns), (900, 1100));
    }

    #[test]
    fn malformed_copy_curves_are_rejected_naming_the_mover_and_the_point() {
        for (curve, says) in [
            (
                "warp = [[1024, 190], [512, 200]]",
                "point 1 (512 bytes, 200 ns)",
            ),
            (
                "warp = [[1024, 190], [2048, 100]]",
                "point 1 (2048 bytes, 100 ns)",
            ),
            ("warp = [[0, 1]]", "point 0 is of 0 bytes"),
            (
                "warp = [[1, 1], [2, 2], [3, 3], [4, 4], [5, 5], [6, 6], [7, 7], [8, 8], [9, 9]]",
                "at most 8 points",
            ),
        ] {
            let text = good_with(
                "transfer_ns = 40\n",
                &format!("transfer_ns = 40\n[timing.copy]\n{curve}\n"),
            );
            let err = parse_err(&text);
            assert_eq!(err.line, line_of(&text, "warp ="), "{curve}: {err}");
            assert!(err.message.starts_with("timing.copy.warp: "), "{err}");
            assert!(err.message.contains(says), "{curve}: {err}");
        }
        let text = good_with(
            "transfer_ns = 40\n",
            "transfer_ns = 40\n[timing.copy]\nwarps = [[1, 1]]\n",
        );
        assert!(parse_err(&text).message.contains("unknown field"), "warps");
        let text = good_with("transfer_ns = 40\n", "transfer_ns = 40\nmap_gbps = 0\n");
        assert!(parse_err(&text).message.contains("map_gbps"));
    }

    #[test]
    fn name_defaults_to_the_file_stem() {
        let text = GOOD.replacen("name = \"pair\"\n", "", 1);
        assert_eq!(parse(&text, "dir/my-box.toml").unwrap().name(), "my-box");
    }

    #[test]
    fn shipped_h200x2_file_equals_the_preset() {
        let text = include_str!("../../topologies/h200x2.toml");
        let file = parse(text, "h200x2.toml").unwrap();
        let preset = presets::preset("h200x2").unwrap();
        assert_eq!(file.name(), preset.name());
        assert_eq!(file.timing(), preset.timing());
        assert_eq!(shape(&file), shape(&preset));
        let (link, preset_link) = (
            file.link(hw::topology::LinkId(0)),
            preset.link(hw::topology::LinkId(0)),
        );
        assert_eq!(
            link.bandwidth_bytes_per_s,
            preset_link.bandwidth_bytes_per_s
        );
        assert_eq!(link.latency_ns, preset_link.latency_ns);
    }

    #[test]
    fn shipped_pcie_box_routes_over_pcie() {
        let text = include_str!("../../topologies/pcie4.toml");
        let t = parse(text, "pcie4.toml").unwrap();
        assert_eq!(t.n_gpus(), 4);
        let routes = t.routes_from(Pe(0));
        for pe in 1..4 {
            let path = routes.path_to(&t, Pe(pe));
            assert_eq!(path.class, PathClass::LoadStore);
            assert!(
                path.hops
                    .iter()
                    .all(|h| t.link(h.link).kind == LinkKind::Pcie)
            );
        }
    }

    #[test]
    fn documented_example_parses_and_routes_as_the_doc_says() {
        let doc = include_str!("../../../docs/topology-format.md");
        let example = doc
            .find("## Complete example")
            .expect("the doc has a complete example");
        let start = example
            + doc[example..]
                .find("```toml\n")
                .expect("the example is toml")
            + 8;
        let len = doc[start..].find("```").expect("the example is closed");
        let t = parse(&doc[start..start + len], "topology-format.md").unwrap();
        assert_eq!(t.name(), "two-by-two");
        let routes = t.routes_from(Pe(0));
        let nvlink = routes.path_to(&t, Pe(1));
        assert_eq!(
            (
                nvlink.class,
                nvlink.latency_ns,
                nvlink.bandwidth_bytes_per_s
            ),
            (PathClass::LoadStore, 450, 394_800_000_000)
        );
        let rdma = routes.path_to(&t, Pe(2));
        assert_eq!(
            (rdma.class, rdma.latency_ns, rdma.bandwidth_bytes_per_s),
            (PathClass::Rdma, 1500, 48_500_000_000)
        );
    }

    #[test]
    fn syntax_error_names_its_line() {
        let text = good_with("kind = \"nvlink\"", "kind = nvlink");
        let err = parse_err(&text);
        assert_eq!(err.line, line_of(&text, "kind = nvlink"), "{err}");
        assert!(err.to_string().starts_with("topo.toml:"), "{err}");
    }

    #[test]
    fn unknown_node_in_link_names_its_line_and_column() {
        let text = good_with("b = \"gpu1\"", "b = \"gpu9\"");
        let err = parse_err(&text);
        assert_eq!(err.line, line_of(&text, "b = \"gpu9\""));
        assert_eq!(err.column, 5);
        assert_eq!(
            err.to_string(),
            format!(
                "topo.toml:{}:5: unknown node \"gpu9\" in link; nodes are named in [[node]] tables",
                err.line
            )
        );
    }

    #[test]
    fn unknown_kinds_are_rejected_where_they_are() {
        let text = good_with("kind = \"gpu\"\n\n[[node]]", "kind = \"gpux\"\n\n[[node]]");
        let err = parse_err(&text);
        assert_eq!(err.line, line_of(&text, "\"gpux\""));
        assert!(err.message.contains("unknown node kind \"gpux\""), "{err}");
        assert!(err.message.contains("pcie-switch"), "{err}");

        let text = good_with("\"nvlink\"", "\"nvlnk\"");
        let err = parse_err(&text);
        assert_eq!(err.line, line_of(&text, "\"nvlnk\""));
        assert!(err.message.contains("unknown link kind"), "{err}");
    }

    #[test]
    fn zero_and_negative_bandwidths_are_rejected() {
        for bad in ["gbps = 0", "gbps = -3.5", "gbps = 0.0", "gbps = nan"] {
            let text = good_with("gbps = 394.8", bad);
            let err = parse_err(&text);
            assert_eq!(err.line, line_of(&text, bad), "{bad}: {err}");
            assert!(err.message.contains("positive"), "{err}");
        }
        let text = good_with("local_gbps = 4300", "local_gbps = 0");
        assert!(parse_err(&text).message.contains("local_gbps"));
    }

    #[test]
    fn unreachable_gpus_are_reported_at_a_node() {
        let text = format!("{GOOD}\n[[node]]\nname = \"gpu2\"\nkind = \"gpu\"\n");
        let err = parse_err(&text);
        assert!(err.message.contains("no route"), "{err}");
        assert!(err.message.contains("gpu2"), "{err}");
        assert_eq!(err.line, line_of(&text, "\"gpu2\""));
    }

    #[test]
    fn unknown_keys_are_rejected_where_they_are() {
        let text = good_with("latency_ns = 450", "latency_ns = 450\nlatency_us = 1");
        let err = parse_err(&text);
        assert!(err.message.contains("latency_us"), "{err}");
        assert_eq!(err.line, line_of(&text, "latency_us"), "{err}");

        let text = good_with("issue_ns = 25", "issue_ns = 25\npoll = 3");
        let err = parse_err(&text);
        assert_eq!(err.line, line_of(&text, "poll = 3"), "{err}");
    }

    #[test]
    fn duplicates_and_self_links_are_rejected() {
        let text = good_with("name = \"gpu1\"", "name = \"gpu0\"");
        let err = parse_err(&text);
        assert!(
            err.message.contains("two nodes are named \"gpu0\""),
            "{err}"
        );
        assert_eq!(
            err.line,
            line_of(&text, "name = \"gpu0\"\nkind = \"gpu\"\nhost")
        );

        let text = format!(
            "{GOOD}\n[[link]]\na = \"gpu1\"\nb = \"gpu0\"\nkind = \"nvlink\"\n\
             latency_ns = 1\ngbps = 1\n"
        );
        let err = parse_err(&text);
        assert!(err.message.contains("already linked"), "{err}");

        let text = good_with("b = \"gpu1\"", "b = \"gpu0\"");
        assert!(parse_err(&text).message.contains("itself"));
    }

    #[test]
    fn host_and_tier_only_where_they_apply() {
        let text = good_with("host = 0", "tier = 1");
        let err = parse_err(&text);
        assert!(err.message.contains("tier"), "{err}");
        assert_eq!(err.line, line_of(&text, "tier = 1"));
    }

    #[test]
    fn no_gpu_is_an_error_at_line_one() {
        let err = parse_err("[[node]]\nname = \"s\"\nkind = \"nvswitch\"\n");
        assert_eq!((err.line, err.column), (1, 1));
        assert!(err.message.contains("no GPU"), "{err}");
    }

    #[test]
    fn columns_count_characters() {
        assert_eq!(line_column("ab\ncé d", 7), (2, 4));
        assert_eq!(line_column("x", 99), (1, 2));
    }
}
