//! The TOML topology file format (`docs/topology-format.md`).
//!
//! Every field is read as a [`toml::Spanned`] value so that a semantic error (an unknown node
//! name, a zero bandwidth) points at the line and column that caused it, just as a syntax
//! error does.
//!
//! This file reads the machine: its name, its nodes and its links; `file/timing.rs` reads
//! the costs under `[timing]` and `[timing.copy]`.

#[cfg(test)]
mod tests;
mod timing;

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use hw::topology::{Link, LinkKind, NodeKind, TopologyBuilder, TopologyError};
use petgraph::graph::NodeIndex;
use serde::Deserialize;
use toml::Spanned;

use super::Machine;
use crate::costs::Timing;
use timing::{TimingSpec, read_local_bytes_per_s, read_timing};

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
pub fn parse(text: &str, origin: &str) -> Result<Machine, FileError> {
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
    let mut timing = Timing::default();
    if let Some(spec) = &spec.timing {
        let at = |(span, m): SpanError| error(Some(span), m);
        timing = read_timing(spec).map_err(at)?;
        if let Some(bytes_per_s) = read_local_bytes_per_s(spec).map_err(at)? {
            builder.local_bytes_per_s(bytes_per_s);
        }
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

    let topology = builder.build().map_err(|e| {
        // Point at the node the problem is about; the checks above already catch the
        // problems that belong to a single link or name.
        let span = match &e {
            TopologyError::Unreachable { b, .. } => nodes.get(b.as_str()).map(|(_, s)| s.clone()),
            TopologyError::DuplicateName(name) => nodes.get(name.as_str()).map(|(_, s)| s.clone()),
            _ => None,
        };
        error(span, e.to_string())
    })?;
    Ok(Machine { topology, timing })
}

/// A semantic error: the span it is about and the message.
pub(super) type SpanError = (Range<usize>, String);

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
pub(super) fn gbps_to_bytes_per_s(gbps: &Spanned<f64>, key: &str) -> Result<u64, SpanError> {
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
