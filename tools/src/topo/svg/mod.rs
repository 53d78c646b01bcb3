//! The SVG drawing of `rshmem topo --svg`, laid out by our own code: the shapes a layout
//! places (`Drawing`) and how they are written out. The two layouts are `layout_full` (every
//! node, up to 16 hosts) and `layout_compact` (a box per host); `ib_rows` places the
//! InfiniBand switches for both, and `legend` draws the key.

mod ib_rows;
mod layout_compact;
mod layout_full;
mod legend;

use std::collections::BTreeSet;

use hw::topology::{Link, LinkKind, Node, NodeKind, Topology};

use super::{Graph, NODE_KIND_WORDS, gbps, host_of, link_style, node_style, plural};
use crate::svg::{put, xml};
use layout_compact::layout_compact;
use layout_full::layout_full;
use legend::Legend;

/// The most hosts drawn with every NIC, GPU and switch; beyond this a host is one box.
const FULL_DETAIL_MAX_HOSTS: usize = 16;

/// A self-contained SVG drawing: IB switches in rows by tier (spines on top), then one box per
/// host holding its NICs, PCIe switches, GPUs and NVSwitch, with links coloured by kind, a
/// legend and a title. Above 16 hosts (`FULL_DETAIL_MAX_HOSTS`), each host is one small box and
/// the hosts wired to the same IB switches share one line per switch (a note says so).
pub fn to_svg(t: &Topology) -> String {
    let g = Graph::of(t);
    let n_hosts = g
        .nodes
        .iter()
        .filter_map(|n| host_of(n))
        .collect::<BTreeSet<_>>()
        .len();
    let mut drawing = if n_hosts <= FULL_DETAIL_MAX_HOSTS {
        layout_full(&g)
    } else {
        layout_compact(&g, n_hosts)
    };
    drawing.finish(t, &g)
}

const MARGIN: f64 = 20.0;
const NODE_H: f64 = 22.0;
const MIN_NODE_W: f64 = 44.0;
const NODE_GAP: f64 = 10.0;
const HOST_PAD: f64 = 10.0;
const HOST_TITLE_H: f64 = 16.0;
const HOST_GAP: f64 = 24.0;
/// Average glyph width of 10 px Helvetica, generous so labels fit their boxes.
const CHAR_W: f64 = 6.2;

#[derive(Clone, Copy, Debug)]
struct Rect {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

impl Rect {
    fn cx(&self) -> f64 {
        self.x + self.w / 2.0
    }
    fn cy(&self) -> f64 {
        self.y + self.h / 2.0
    }
    fn bottom(&self) -> f64 {
        self.y + self.h
    }
}

/// One shape of a node: where it is, its visible label, and whether it is a wide bar
/// (a crossbar switch drawn under everything it connects).
struct Placed {
    rect: Rect,
    label: Option<String>,
    bar: bool,
}

/// A line between two drawn things, with the tooltip that explains it.
struct Wire {
    from: Rect,
    from_bar: bool,
    to: Rect,
    to_bar: bool,
    kind: LinkKind,
    title: String,
}

/// A labelled frame: a host box, or a group of hosts in the compact layout.
struct Frame {
    rect: Rect,
    label: String,
    title: String,
}

/// A small box standing for a whole host in the compact layout.
struct HostCell {
    rect: Rect,
    host: u32,
    title: String,
}

/// Everything a layout decided, ready to be written out. Coordinates are relative to the
/// content origin; `finish` adds the title and legend around them.
struct Drawing {
    width: f64,
    height: f64,
    placed: Vec<Option<Placed>>,
    wires: Vec<Wire>,
    frames: Vec<Frame>,
    cells: Vec<HostCell>,
    /// Text at the left of each row of IB switches.
    row_labels: Vec<(f64, String)>,
    /// Bus lines (tooltip, SVG path data), drawn in the IB colour.
    buses: Vec<(String, String)>,
    note: Option<String>,
}

impl Drawing {
    fn new(n_nodes: usize) -> Self {
        Drawing {
            width: 0.0,
            height: 0.0,
            placed: (0..n_nodes).map(|_| None).collect(),
            wires: Vec::new(),
            frames: Vec::new(),
            cells: Vec::new(),
            row_labels: Vec::new(),
            buses: Vec::new(),
            note: None,
        }
    }

    /// Adds a wire for each link whose two ends are both drawn, except those `skip` takes.
    fn wire_placed_links(&mut self, g: &Graph<'_>, skip: impl Fn(usize, usize) -> bool) {
        for &(a, b, link) in &g.edges {
            if skip(a, b) {
                continue;
            }
            if let (Some(pa), Some(pb)) = (&self.placed[a], &self.placed[b]) {
                self.wires.push(Wire {
                    from: pa.rect,
                    from_bar: pa.bar,
                    to: pb.rect,
                    to_bar: pb.bar,
                    kind: link.kind,
                    title: format!(
                        "{} - {}: {}, {} GB/s, {} ns",
                        g.nodes[a].name,
                        g.nodes[b].name,
                        link.kind.word(),
                        gbps(link.bandwidth_bytes_per_s),
                        link.latency_ns
                    ),
                });
            }
        }
    }

    /// Writes the SVG: title, optional note, content, legend.
    fn finish(&mut self, t: &Topology, g: &Graph<'_>) -> String {
        let title = format!(
            "{}: {} on {}",
            t.name(),
            plural(t.n_gpus() as usize, "GPU"),
            plural(
                g.nodes
                    .iter()
                    .filter_map(|n| host_of(n))
                    .collect::<BTreeSet<_>>()
                    .len(),
                "host"
            )
        );
        let mut top = MARGIN + 30.0;
        if self.note.is_some() {
            top += 20.0;
        }
        let legend = Legend::of(g);
        let width = (self.width + 2.0 * MARGIN)
            .max(legend.width + 2.0 * MARGIN)
            .max(title.len() as f64 * 10.0 + 2.0 * MARGIN);
        let legend_y = top + self.height + 30.0;
        let height = legend_y + legend.height + MARGIN;
        // Centre the content when the title or legend is wider.
        let left = ((width - self.width) / 2.0).max(MARGIN);

        let mut out = String::new();
        put!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" \
             viewBox=\"0 0 {w:.0} {h:.0}\" font-family=\"Helvetica, Arial, sans-serif\" \
             font-size=\"10\">\n",
            w = width,
            h = height
        );
        put!(out, "<title>{}</title>\n", xml(&title));
        put!(
            out,
            "<rect x=\"0\" y=\"0\" width=\"{width:.0}\" height=\"{height:.0}\" fill=\"#ffffff\"/>\n"
        );
        put!(
            out,
            "<text x=\"{MARGIN}\" y=\"{:.1}\" font-size=\"18\" font-weight=\"bold\">{}</text>\n",
            MARGIN + 16.0,
            xml(&title)
        );
        if let Some(note) = &self.note {
            put!(
                out,
                "<text x=\"{MARGIN}\" y=\"{:.1}\" font-size=\"12\" fill=\"#555555\">Note: {}</text>\n",
                MARGIN + 38.0,
                xml(note)
            );
        }
        put!(out, "<g transform=\"translate({left:.1},{top:.1})\">\n");
        self.write_content(&mut out, g);
        out.push_str("</g>\n");
        legend.write(&mut out, MARGIN, legend_y);
        out.push_str("</svg>\n");
        out
    }

    fn write_content(&self, out: &mut String, g: &Graph<'_>) {
        for frame in &self.frames {
            let r = frame.rect;
            put!(
                out,
                "<g><title>{}</title><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" \
                 height=\"{:.1}\" rx=\"8\" fill=\"#f5f5f5\" stroke=\"#9a9a9a\"/></g>\n",
                xml(&frame.title),
                r.x,
                r.y,
                r.w,
                r.h
            );
        }
        for (y, label) in &self.row_labels {
            put!(
                out,
                "<text x=\"0\" y=\"{y:.1}\" fill=\"#555555\">{}</text>\n",
                xml(label)
            );
        }
        // Lines before nodes, so that nodes sit on top of the ends of their lines.
        for wire in &self.wires {
            let style = link_style(wire.kind);
            put!(
                out,
                "<g><title>{}</title><path d=\"{}\" fill=\"none\" stroke=\"{}\" \
                 stroke-width=\"{}\" stroke-opacity=\"0.8\"/></g>\n",
                xml(&wire.title),
                wire_path(wire),
                style.color,
                style.width
            );
        }
        let ib = link_style(LinkKind::Ib);
        for (title, path) in &self.buses {
            put!(
                out,
                "<g><title>{}</title><path d=\"{}\" fill=\"none\" stroke=\"{}\" \
                 stroke-width=\"{}\" stroke-opacity=\"0.8\"/></g>\n",
                xml(title),
                path,
                ib.color,
                ib.width
            );
        }
        // Frame labels after the lines, with a halo in the frame's colour, so that lines
        // entering a host box do not make its label unreadable.
        for frame in &self.frames {
            put!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" font-weight=\"bold\" \
                 fill=\"#444444\" stroke=\"#f5f5f5\" stroke-width=\"3\" \
                 paint-order=\"stroke\">{}</text>\n",
                frame.rect.x + 8.0,
                frame.rect.y + 13.0,
                xml(&frame.label)
            );
        }
        for cell in &self.cells {
            let r = cell.rect;
            put!(
                out,
                "<g><title>{}</title><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" \
                 height=\"{:.1}\" rx=\"2\" fill=\"#dff0c4\" stroke=\"#4d7c00\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"8\" text-anchor=\"middle\">{}</text></g>\n",
                xml(&cell.title),
                r.x,
                r.y,
                r.w,
                r.h,
                r.cx(),
                r.cy() + 3.0,
                cell.host
            );
        }
        for (i, placed) in self.placed.iter().enumerate() {
            let Some(placed) = placed else { continue };
            let node = g.nodes[i];
            let style = node_style(node.kind);
            let r = placed.rect;
            put!(
                out,
                "<g><title>{}</title><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" \
                 height=\"{:.1}\" rx=\"4\" fill=\"{}\" stroke=\"{}\"/>",
                xml(&node_tooltip(node)),
                r.x,
                r.y,
                r.w,
                r.h,
                style.fill,
                style.stroke
            );
            if let Some(label) = &placed.label {
                put!(
                    out,
                    "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                    r.cx(),
                    r.cy() + 3.5,
                    xml(label)
                );
            }
            out.push_str("</g>\n");
        }
    }
}

fn node_tooltip(node: &Node) -> String {
    match node.kind {
        NodeKind::IbSwitch { tier } => format!("{} (ib-switch, tier {tier})", node.name),
        kind => match host_of(node) {
            Some(host) => format!("{} ({}, host {host})", node.name, kind.word()),
            None => format!("{} ({})", node.name, kind.word()),
        },
    }
}

/// The SVG path of a wire: straight between rows (ending anywhere along a bar), straight
/// between neighbours of one row, and an arc over the row between nodes further apart so the
/// line does not run through the nodes between them.
fn wire_path(wire: &Wire) -> String {
    let (a, b) = (wire.from, wire.to);
    if (a.cy() - b.cy()).abs() < 1.0 {
        let (l, r) = if a.x <= b.x { (a, b) } else { (b, a) };
        if r.x - (l.x + l.w) <= NODE_GAP + 1.0 {
            return format!(
                "M {:.1} {:.1} L {:.1} {:.1}",
                l.x + l.w,
                l.cy(),
                r.x,
                r.cy()
            );
        }
        let lift = 20.0 + (r.cx() - l.cx()) * 0.15;
        return format!(
            "M {:.1} {:.1} Q {:.1} {:.1} {:.1} {:.1}",
            l.cx(),
            l.y,
            (l.cx() + r.cx()) / 2.0,
            l.y - lift,
            r.cx(),
            r.y
        );
    }
    let ((up, up_bar), (down, down_bar)) = if a.cy() < b.cy() {
        ((a, wire.from_bar), (b, wire.to_bar))
    } else {
        ((b, wire.to_bar), (a, wire.from_bar))
    };
    // A bar is a crossbar: its links leave it straight up or down from the node they join.
    let along = |bar: Rect, x: f64| x.clamp(bar.x + 4.0, bar.x + bar.w - 4.0);
    let x_up = if up_bar {
        along(up, down.cx())
    } else {
        up.cx()
    };
    let x_down = if down_bar {
        along(down, up.cx())
    } else {
        down.cx()
    };
    format!(
        "M {:.1} {:.1} L {:.1} {:.1}",
        x_up,
        up.bottom(),
        x_down,
        down.y
    )
}

/// Width of a box that holds `label` in 10 px text.
fn text_w(label: &str) -> f64 {
    label.chars().count() as f64 * CHAR_W + 10.0
}

/// A tooltip listing how many nodes of each kind a host has.
fn host_summary(g: &Graph<'_>, host: u32, members: &[usize]) -> String {
    let counts: Vec<String> = NODE_KIND_WORDS
        .iter()
        .filter_map(|word| {
            let n = members
                .iter()
                .filter(|&&i| g.nodes[i].kind.word() == *word)
                .count();
            (n > 0).then(|| format!("{n} {word}"))
        })
        .collect();
    format!("host {host}: {}", counts.join(", "))
}

/// "32 ib links, 48.5 GB/s, 600 ns" for links merged into one line.
fn links_summary(links: &[Link]) -> String {
    let bandwidth: BTreeSet<u64> = links.iter().map(|l| l.bandwidth_bytes_per_s).collect();
    let latency: BTreeSet<u64> = links.iter().map(|l| l.latency_ns).collect();
    let kinds: BTreeSet<&str> = links.iter().map(|l| l.kind.word()).collect();
    let join = |values: Vec<String>| values.join("/");
    format!(
        "{} {} links, {} GB/s, {} ns",
        links.len(),
        join(kinds.into_iter().map(str::to_string).collect()),
        join(bandwidth.into_iter().map(gbps).collect()),
        join(latency.into_iter().map(|l| l.to_string()).collect())
    )
}
