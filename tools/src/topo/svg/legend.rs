//! The legend under a drawing: a line per link kind present, with its numbers, and a box per
//! node kind present.

use hw::topology::{LinkKind, NodeKind};

use super::text_w;
use crate::svg::{put, xml};
use crate::topo::{Graph, LINK_KINDS, LinkStats, NODE_KIND_WORDS, link_style, node_style, plural};

/// The key to colours: one entry per link kind present, with its numbers, and one per node
/// kind present.
pub(super) struct Legend {
    links: Vec<(LinkKind, String)>,
    nodes: Vec<NodeKind>,
    pub(super) width: f64,
    pub(super) height: f64,
}

const LEGEND_LINE_W: f64 = 28.0;
const LEGEND_GAP: f64 = 24.0;

impl Legend {
    pub(super) fn of(g: &Graph<'_>) -> Self {
        let links: Vec<(LinkKind, String)> = LINK_KINDS
            .iter()
            .filter_map(|&kind| {
                let stats = LinkStats::of(g, kind)?;
                Some((
                    kind,
                    format!(
                        "{} ({}): {} GB/s per direction, {} ns",
                        kind.word(),
                        plural(stats.count, "link"),
                        stats.bandwidth_text(),
                        stats.latency_text()
                    ),
                ))
            })
            .collect();
        let mut nodes: Vec<NodeKind> = Vec::new();
        for word in NODE_KIND_WORDS {
            if let Some(node) = g.nodes.iter().find(|n| n.kind.word() == word) {
                nodes.push(node.kind);
            }
        }
        let links_w: f64 = links
            .iter()
            .map(|(_, text)| LEGEND_LINE_W + 6.0 + text_w(text) + LEGEND_GAP)
            .sum();
        let nodes_w: f64 = nodes
            .iter()
            .map(|k| 14.0 + 6.0 + text_w(k.word()) + LEGEND_GAP)
            .sum();
        Legend {
            links,
            nodes,
            width: links_w.max(nodes_w),
            height: 44.0,
        }
    }

    pub(super) fn write(&self, out: &mut String, x0: f64, y0: f64) {
        let mut x = x0;
        let y = y0 + 8.0;
        for (kind, text) in &self.links {
            let style = link_style(*kind);
            put!(
                out,
                "<line x1=\"{x:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{}\" \
                 stroke-width=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
                x + LEGEND_LINE_W,
                style.color,
                style.width + 1.0,
                x + LEGEND_LINE_W + 6.0,
                y + 3.5,
                xml(text)
            );
            x += LEGEND_LINE_W + 6.0 + text_w(text) + LEGEND_GAP;
        }
        let mut x = x0;
        let y = y0 + 30.0;
        for kind in &self.nodes {
            let style = node_style(*kind);
            put!(
                out,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"14\" height=\"12\" rx=\"2\" \
                 fill=\"{}\" stroke=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\">{}</text>\n",
                y - 6.0,
                style.fill,
                style.stroke,
                x + 20.0,
                y + 3.5,
                kind.word()
            );
            x += 14.0 + 6.0 + text_w(kind.word()) + LEGEND_GAP;
        }
    }
}
