//! Renderings of a topology for `rshmem topo`: a text summary, Graphviz DOT, and an SVG
//! drawn by our own layout code so that no Graphviz install is needed.

use std::collections::{BTreeMap, BTreeSet};

use hw::Pe;
use hw::topology::{Link, LinkKind, Node, NodeKind, PathClass, Timing, Topology};

/// Appends formatted text to a `String`.
macro_rules! put {
    ($out:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        // fmt::Write for String never fails, so there is no error to handle.
        let _ = write!($out, $($arg)*);
    }};
}

/// The link kinds in the order every rendering lists them.
const LINK_KINDS: [LinkKind; 3] = [LinkKind::NvLink, LinkKind::Pcie, LinkKind::Ib];

/// The node-kind words in the order every rendering lists them.
const NODE_KIND_WORDS: [&str; 5] = ["gpu", "nvswitch", "pcie-switch", "nic", "ib-switch"];

/// A text summary: counts of nodes and links by kind, hosts, per-kind bandwidth and latency,
/// the per-operation timing, and the route from PE 0 to a few sample PEs.
pub fn describe(t: &Topology) -> String {
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

    let timing = t.timing();
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
        gbps(timing.local_bytes_per_s)
    );
    out.push_str(&calibrated_costs(&timing));

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

/// The PEs `describe` routes to from PE 0, each with why it was picked.
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
fn dot_quote(text: &str) -> String {
    let escaped = text
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n");
    format!("\"{escaped}\"")
}

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

// ---------------------------------------------------------------------------------------------
// Shared model of the graph, with plain indices so that no petgraph type is named here.

/// The topology's nodes and links, indexed by petgraph's node index.
struct Graph<'t> {
    nodes: Vec<&'t Node>,
    /// (end a, end b, link) in link-id order.
    edges: Vec<(usize, usize, Link)>,
    /// Neighbours of each node.
    adjacent: Vec<Vec<usize>>,
}

impl<'t> Graph<'t> {
    fn of(t: &'t Topology) -> Self {
        let graph = t.graph();
        let nodes: Vec<&Node> = graph.node_weights().collect();
        let mut adjacent = vec![Vec::new(); nodes.len()];
        let mut edges = Vec::with_capacity(graph.edge_count());
        for edge in graph.edge_indices() {
            if let Some((a, b)) = graph.edge_endpoints(edge) {
                let (a, b) = (a.index(), b.index());
                edges.push((a, b, graph[edge]));
                adjacent[a].push(b);
                adjacent[b].push(a);
            }
        }
        Graph {
            nodes,
            edges,
            adjacent,
        }
    }
}

/// How many links of one kind there are and the range of their numbers.
struct LinkStats {
    count: usize,
    bandwidth_bytes_per_s: (u64, u64),
    latency_ns: (u64, u64),
}

impl LinkStats {
    fn of(g: &Graph<'_>, kind: LinkKind) -> Option<Self> {
        let links: Vec<&Link> = g
            .edges
            .iter()
            .map(|(_, _, l)| l)
            .filter(|l| l.kind == kind)
            .collect();
        let bandwidth: Vec<u64> = links.iter().map(|l| l.bandwidth_bytes_per_s).collect();
        let latency: Vec<u64> = links.iter().map(|l| l.latency_ns).collect();
        Some(LinkStats {
            count: links.len(),
            bandwidth_bytes_per_s: (*bandwidth.iter().min()?, *bandwidth.iter().max()?),
            latency_ns: (*latency.iter().min()?, *latency.iter().max()?),
        })
    }

    fn bandwidth_text(&self) -> String {
        let (lo, hi) = self.bandwidth_bytes_per_s;
        if lo == hi {
            gbps(lo)
        } else {
            format!("{}-{}", gbps(lo), gbps(hi))
        }
    }

    fn latency_text(&self) -> String {
        let (lo, hi) = self.latency_ns;
        if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}-{hi}")
        }
    }
}

fn host_of(node: &Node) -> Option<u32> {
    match node.kind {
        NodeKind::Gpu { host }
        | NodeKind::NvSwitch { host }
        | NodeKind::PcieSwitch { host }
        | NodeKind::Nic { host } => Some(host),
        NodeKind::IbSwitch { .. } => None,
    }
}

/// Bytes per second as GB/s (1e9 bytes/s) with at most three decimals and no trailing zeros.
fn gbps(bytes_per_s: u64) -> String {
    let text = format!("{:.3}", bytes_per_s as f64 / 1e9);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

fn class_word(class: PathClass) -> &'static str {
    match class {
        PathClass::Local => "local",
        PathClass::LoadStore => "load/store",
        PathClass::Rdma => "RDMA",
    }
}

struct LinkStyle {
    color: &'static str,
    width: f64,
}

fn link_style(kind: LinkKind) -> LinkStyle {
    match kind {
        // NVIDIA green for NVLink; widths follow the bandwidth order of the technologies.
        LinkKind::NvLink => LinkStyle {
            color: "#5f9600",
            width: 2.5,
        },
        LinkKind::Pcie => LinkStyle {
            color: "#1f77b4",
            width: 1.6,
        },
        LinkKind::Ib => LinkStyle {
            color: "#d95f02",
            width: 1.2,
        },
    }
}

struct NodeStyle {
    fill: &'static str,
    stroke: &'static str,
    dot_shape: &'static str,
}

fn node_style(kind: NodeKind) -> NodeStyle {
    let (fill, stroke, dot_shape) = match kind {
        NodeKind::Gpu { .. } => ("#dff0c4", "#4d7c00", "box"),
        NodeKind::NvSwitch { .. } => ("#a9d66b", "#3d6300", "box3d"),
        NodeKind::PcieSwitch { .. } => ("#d4e5f5", "#1f77b4", "trapezium"),
        NodeKind::Nic { .. } => ("#fde2cc", "#d95f02", "ellipse"),
        NodeKind::IbSwitch { .. } => ("#f6b887", "#a34a00", "octagon"),
    };
    NodeStyle {
        fill,
        stroke,
        dot_shape,
    }
}

// ---------------------------------------------------------------------------------------------
// SVG layout.

const MARGIN: f64 = 20.0;
const NODE_H: f64 = 22.0;
const MIN_NODE_W: f64 = 44.0;
const NODE_GAP: f64 = 10.0;
/// Vertical space between rows of nodes inside a host box.
const ROW_GAP: f64 = 26.0;
/// Vertical space between rows of IB switches, and between the last row and the hosts.
const TIER_GAP: f64 = 90.0;
const HOST_PAD: f64 = 10.0;
const HOST_TITLE_H: f64 = 16.0;
const HOST_GAP: f64 = 24.0;
/// Average glyph width of 10 px Helvetica, generous so labels fit their boxes.
const CHAR_W: f64 = 6.2;
/// A row of IB switches wider than this is drawn as unlabelled squares.
const DENSE_ROW_MAX_W: f64 = 2400.0;
const DENSE_NODE_W: f64 = 12.0;
const DENSE_NODE_GAP: f64 = 5.0;

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

/// Text escaped for SVG content and attribute values.
pub(crate) fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// Width of a box that holds `label` in 10 px text.
fn text_w(label: &str) -> f64 {
    label.chars().count() as f64 * CHAR_W + 10.0
}

/// Labels for the nodes of one host: the names without the prefix they all share up to a
/// dot ("node3.gpu5" is shown as "gpu5" inside the box titled "host 3"), or the full names
/// when they share none. Full names are always in the tooltips.
fn short_labels(g: &Graph<'_>, members: &[usize]) -> Vec<String> {
    let names: Vec<&str> = members.iter().map(|&i| g.nodes[i].name.as_str()).collect();
    let prefix = names
        .first()
        .and_then(|n| n.rfind('.').map(|dot| &n[..=dot]))
        .filter(|p| names.iter().all(|n| n.starts_with(p) && n.len() > p.len()))
        .unwrap_or("");
    names
        .iter()
        .map(|n| n[prefix.len()..].to_string())
        .collect()
}

/// The height of each PCIe switch above the GPUs: 1 for a switch linked to a GPU, 2 for one
/// linked to a level-1 switch, and so on; switches reaching no GPU sit one level above all.
fn pcie_levels(g: &Graph<'_>) -> Vec<u32> {
    let is_pcie = |i: usize| matches!(g.nodes[i].kind, NodeKind::PcieSwitch { .. });
    let mut level = vec![0u32; g.nodes.len()];
    let mut frontier: Vec<usize> = (0..g.nodes.len())
        .filter(|&i| {
            is_pcie(i)
                && g.adjacent[i]
                    .iter()
                    .any(|&j| matches!(g.nodes[j].kind, NodeKind::Gpu { .. }))
        })
        .collect();
    let mut current = 1;
    while !frontier.is_empty() {
        for &i in &frontier {
            level[i] = current;
        }
        let mut next = BTreeSet::new();
        for &i in &frontier {
            for &j in &g.adjacent[i] {
                if is_pcie(j) && level[j] == 0 {
                    next.insert(j);
                }
            }
        }
        frontier = next.into_iter().collect();
        current += 1;
    }
    for (i, level) in level.iter_mut().enumerate() {
        if is_pcie(i) && *level == 0 {
            *level = current;
        }
    }
    level
}

/// The IB switches by tier, lowest first.
fn ib_tiers(g: &Graph<'_>) -> BTreeMap<u32, Vec<usize>> {
    let mut tiers: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, node) in g.nodes.iter().enumerate() {
        if let NodeKind::IbSwitch { tier } = node.kind {
            tiers.entry(tier).or_default().push(i);
        }
    }
    tiers
}

/// How one row of IB switches is drawn: labelled boxes, or unlabelled squares when there
/// are too many to label.
struct IbRowShape {
    node_w: f64,
    slot_w: f64,
    labelled: bool,
}

fn ib_row_shape(g: &Graph<'_>, members: &[usize]) -> IbRowShape {
    let node_w = members
        .iter()
        .map(|&i| text_w(&g.nodes[i].name))
        .fold(MIN_NODE_W, f64::max);
    if members.len() as f64 * (node_w + NODE_GAP) <= DENSE_ROW_MAX_W {
        IbRowShape {
            node_w,
            slot_w: node_w + NODE_GAP,
            labelled: true,
        }
    } else {
        IbRowShape {
            node_w: DENSE_NODE_W,
            slot_w: DENSE_NODE_W + DENSE_NODE_GAP,
            labelled: false,
        }
    }
}

/// The width the IB rows need.
fn ib_rows_w(g: &Graph<'_>, tiers: &BTreeMap<u32, Vec<usize>>) -> f64 {
    tiers
        .values()
        .map(|members| members.len() as f64 * ib_row_shape(g, members).slot_w)
        .fold(0.0, f64::max)
}

/// Room above the first row of IB switches for its label.
const IB_LABEL_H: f64 = 18.0;

/// The top of the `row`th row of IB switches, counted from the top.
fn ib_row_y(row: usize) -> f64 {
    IB_LABEL_H + row as f64 * (NODE_H + TIER_GAP)
}

/// The height the IB rows take above the hosts.
fn ib_rows_h(tiers: &BTreeMap<u32, Vec<usize>>) -> f64 {
    if tiers.is_empty() {
        0.0
    } else {
        ib_row_y(tiers.len())
    }
}

/// Places the IB switches in rows, the highest tier on top, spread over `content_w`. Each
/// row is ordered by the mean x of its neighbours below (`anchor_x`), which keeps a rail's
/// leaf above its NICs and avoids most crossings.
fn place_ib_rows(
    g: &Graph<'_>,
    d: &mut Drawing,
    tiers: &BTreeMap<u32, Vec<usize>>,
    content_w: f64,
    anchor_x: &mut [Option<f64>],
) {
    let n_tiers = tiers.len();
    for (pos, (tier, members)) in tiers.iter().enumerate() {
        let row_y = ib_row_y(n_tiers - 1 - pos);
        let mut order: Vec<(f64, usize)> = members
            .iter()
            .map(|&i| {
                let xs: Vec<f64> = g.adjacent[i].iter().filter_map(|&j| anchor_x[j]).collect();
                let mean = if xs.is_empty() {
                    f64::INFINITY
                } else {
                    xs.iter().sum::<f64>() / xs.len() as f64
                };
                (mean, i)
            })
            .collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let shape = ib_row_shape(g, members);
        let spacing = (content_w / members.len() as f64).max(shape.slot_w);
        let node_h = if shape.labelled { NODE_H } else { DENSE_NODE_W };
        for (k, &(_, i)) in order.iter().enumerate() {
            let cx = (k as f64 + 0.5) * spacing;
            let rect = Rect {
                x: cx - shape.node_w / 2.0,
                y: row_y + (NODE_H - node_h) / 2.0,
                w: shape.node_w,
                h: node_h,
            };
            anchor_x[i] = Some(cx);
            d.placed[i] = Some(Placed {
                rect,
                label: shape.labelled.then(|| g.nodes[i].name.clone()),
                bar: false,
            });
        }
        let what = if *tier == 0 { "leaves" } else { "spines" };
        d.row_labels.push((
            row_y - 6.0,
            format!(
                "InfiniBand tier {tier} ({what}): {} switch{}",
                members.len(),
                if members.len() == 1 { "" } else { "es" }
            ),
        ));
    }
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

/// A host's nodes by row key (see `row_of` in [`layout_full`]), in node order within a row.
type HostRows = BTreeMap<(u8, u32), Vec<usize>>;

/// Host boxes per row in the detailed layout. With more hosts than this, the boxes wrap into
/// several rows and each IB switch reaches its NICs through a bus (see [`layout_full`]).
const HOSTS_PER_ROW: usize = 4;
/// Distance between parallel bus lines.
const BUS_GAP: f64 = 6.0;

/// Every node drawn: IB rows on top, then one box per host with a row per node kind (NICs,
/// PCIe switches from the highest level down, GPUs, NVSwitches).
///
/// Up to [`HOSTS_PER_ROW`] hosts sit side by side and every link is a straight line. Beyond
/// that the host boxes wrap into rows, and a line from a switch to a NIC in a lower row would
/// cut through the boxes above it; so each IB switch that has links into hosts gets a bus
/// instead: a line in the channel above each row of hosts, fed from a trunk in the left
/// gutter, with a short drop to each NIC. For a rail-optimised fabric each bus is one rail.
fn layout_full(g: &Graph<'_>) -> Drawing {
    let n = g.nodes.len();
    let mut d = Drawing::new(n);
    let pcie_level = pcie_levels(g);
    let max_level = pcie_level.iter().copied().max().unwrap_or(0);
    // Row order inside a host box: smaller keys are drawn higher.
    let row_of = |i: usize| -> (u8, u32) {
        match g.nodes[i].kind {
            NodeKind::Nic { .. } => (0, 0),
            NodeKind::PcieSwitch { .. } => (1, max_level - pcie_level[i]),
            NodeKind::Gpu { .. } => (2, 0),
            NodeKind::NvSwitch { .. } | NodeKind::IbSwitch { .. } => (3, 0),
        }
    };
    let mut hosts: BTreeMap<u32, HostRows> = BTreeMap::new();
    for (i, node) in g.nodes.iter().enumerate() {
        if let Some(host) = host_of(node) {
            hosts
                .entry(host)
                .or_default()
                .entry(row_of(i))
                .or_default()
                .push(i);
        }
    }
    // The same rows in every host box, so that GPUs line up across hosts.
    let row_index: BTreeMap<(u8, u32), usize> = hosts
        .values()
        .flat_map(|rows| rows.keys().copied())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .enumerate()
        .map(|(index, key)| (key, index))
        .collect();
    let widest = |rows: &HostRows| rows.values().map(Vec::len).max().unwrap_or(1);
    let is_switch = |i: usize| {
        matches!(
            g.nodes[i].kind,
            NodeKind::NvSwitch { .. } | NodeKind::PcieSwitch { .. }
        )
    };
    // A lone switch under a wide row is a crossbar: it is drawn as a bar under the row, so
    // its label does not set the width of the other boxes.
    let mut bar = vec![false; n];
    let mut labels: Vec<String> = vec![String::new(); n];
    for rows in hosts.values() {
        for row in rows.values() {
            if let [only] = row[..]
                && widest(rows) >= 3
                && is_switch(only)
            {
                bar[only] = true;
            }
        }
        let members: Vec<usize> = rows.values().flatten().copied().collect();
        for (&i, label) in members.iter().zip(short_labels(g, &members)) {
            labels[i] = label;
        }
    }
    let node_w = (0..n)
        .filter(|&i| !bar[i] && host_of(g.nodes[i]).is_some())
        .map(|i| text_w(&labels[i]))
        .fold(MIN_NODE_W, f64::max);
    let slot_w = node_w + NODE_GAP;
    let inner_w = |host: u32, rows: &HostRows| {
        (widest(rows) as f64 * slot_w).max(text_w(&format!("host {host}")))
    };
    let n_rows = row_index.len() as f64;
    let host_h = HOST_TITLE_H + 2.0 * HOST_PAD + n_rows * NODE_H + (n_rows - 1.0) * ROW_GAP;

    let host_list: Vec<(u32, &HostRows)> = hosts.iter().map(|(&h, rows)| (h, rows)).collect();
    let bused = host_list.len() > HOSTS_PER_ROW;
    let chunk_len = if bused {
        HOSTS_PER_ROW
    } else {
        host_list.len().max(1)
    };
    let is_host_node = |i: usize| host_of(g.nodes[i]).is_some();
    let is_ib = |i: usize| matches!(g.nodes[i].kind, NodeKind::IbSwitch { .. });
    let bus_switches: Vec<usize> = if bused {
        (0..n)
            .filter(|&i| is_ib(i) && g.adjacent[i].iter().any(|&j| is_host_node(j)))
            .collect()
    } else {
        Vec::new()
    };
    let bus_space = if bused {
        (bus_switches.len() + 2) as f64 * BUS_GAP
    } else {
        0.0
    };
    // The gutter holds the trunks, the channel above each row of hosts holds the buses.
    let (gutter_w, channel_h) = (bus_space, bus_space);
    let hosts_w = host_list
        .chunks(chunk_len)
        .map(|chunk| {
            chunk
                .iter()
                .map(|&(h, rows)| inner_w(h, rows) + 2.0 * HOST_PAD + HOST_GAP)
                .sum::<f64>()
                - HOST_GAP
        })
        .fold(0.0, f64::max);
    let band_h = channel_h + host_h + if bused { ROW_GAP } else { 0.0 };

    let tiers = ib_tiers(g);
    let content_w = (gutter_w + hosts_w).max(ib_rows_w(g, &tiers));
    let hosts_y = ib_rows_h(&tiers);
    let mut anchor_x: Vec<Option<f64>> = vec![None; n];
    let mut host_row: BTreeMap<u32, usize> = BTreeMap::new();
    for (k, chunk) in host_list.chunks(chunk_len).enumerate() {
        let top = hosts_y + k as f64 * band_h + channel_h;
        let mut x = if bused {
            gutter_w
        } else {
            (content_w - hosts_w) / 2.0
        };
        for &(host, rows) in chunk {
            host_row.insert(host, k);
            let inner = inner_w(host, rows);
            let frame = Rect {
                x,
                y: top,
                w: inner + 2.0 * HOST_PAD,
                h: host_h,
            };
            let members: Vec<usize> = rows.values().flatten().copied().collect();
            d.frames.push(Frame {
                rect: frame,
                label: format!("host {host}"),
                title: host_summary(g, host, &members),
            });
            let widest_n = widest(rows);
            let row_x = |count: usize| frame.x + HOST_PAD + (inner - count as f64 * slot_w) / 2.0;
            for (key, row) in rows {
                let y = top + HOST_TITLE_H + HOST_PAD + row_index[key] as f64 * (NODE_H + ROW_GAP);
                if let [only] = row[..]
                    && bar[only]
                {
                    let rect = Rect {
                        x: row_x(widest_n) + NODE_GAP / 2.0,
                        y,
                        w: widest_n as f64 * slot_w - NODE_GAP,
                        h: NODE_H,
                    };
                    anchor_x[only] = Some(rect.cx());
                    d.placed[only] = Some(Placed {
                        rect,
                        label: Some(labels[only].clone()),
                        bar: true,
                    });
                    continue;
                }
                let x0 = row_x(row.len()) + NODE_GAP / 2.0;
                for (k, &i) in row.iter().enumerate() {
                    let rect = Rect {
                        x: x0 + k as f64 * slot_w,
                        y,
                        w: node_w,
                        h: NODE_H,
                    };
                    anchor_x[i] = Some(rect.cx());
                    d.placed[i] = Some(Placed {
                        rect,
                        label: Some(labels[i].clone()),
                        bar: false,
                    });
                }
            }
            x += frame.w + HOST_GAP;
        }
    }
    place_ib_rows(g, &mut d, &tiers, content_w, &mut anchor_x);

    let on_bus = |a: usize, b: usize| bus_switches.contains(&a) && is_host_node(b);
    d.wire_placed_links(g, |a, b| on_bus(a, b) || on_bus(b, a));
    // Buses in the order of their switches, left to right, so they nest instead of crossing.
    let mut ordered: Vec<(f64, usize)> = bus_switches
        .iter()
        .filter_map(|&s| d.placed[s].as_ref().map(|p| (p.rect.cx(), s)))
        .collect();
    ordered.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    for (b, &(_, s)) in ordered.iter().enumerate() {
        let Some(switch) = d.placed[s].as_ref().map(|p| p.rect) else {
            continue;
        };
        let mut targets: BTreeMap<usize, Vec<Rect>> = BTreeMap::new();
        let mut links: Vec<Link> = Vec::new();
        for &(a, c, link) in &g.edges {
            let other = if a == s {
                c
            } else if c == s {
                a
            } else {
                continue;
            };
            let row = host_of(g.nodes[other]).and_then(|h| host_row.get(&h));
            if let (Some(&row), Some(placed)) = (row, &d.placed[other]) {
                targets.entry(row).or_default().push(placed.rect);
                links.push(link);
            }
        }
        let bus_y = |row: usize| hosts_y + row as f64 * band_h + BUS_GAP * (b + 1) as f64;
        let trunk_x = BUS_GAP * (b + 1) as f64;
        let last_row = targets.keys().next_back().copied().unwrap_or(0);
        let mut path = format!(
            "M {:.1} {:.1} L {:.1} {:.1}",
            switch.cx(),
            switch.bottom(),
            switch.cx(),
            bus_y(0)
        );
        if last_row > 0 {
            put!(
                path,
                " M {trunk_x:.1} {:.1} L {trunk_x:.1} {:.1}",
                bus_y(0),
                bus_y(last_row)
            );
        }
        for row in 0..=last_row {
            let rects = targets.get(&row).map(Vec::as_slice).unwrap_or(&[]);
            let right = rects.iter().map(Rect::cx).fold(f64::NEG_INFINITY, f64::max);
            let (from, to) = if row == 0 {
                let left = if last_row > 0 { trunk_x } else { switch.cx() };
                let left = rects.iter().map(Rect::cx).fold(left, f64::min);
                (left.min(switch.cx()), right.max(switch.cx()))
            } else if rects.is_empty() {
                continue;
            } else {
                (trunk_x, right)
            };
            let y = bus_y(row);
            put!(path, " M {from:.1} {y:.1} L {to:.1} {y:.1}");
            for r in rects {
                put!(path, " M {:.1} {y:.1} L {:.1} {:.1}", r.cx(), r.cx(), r.y);
            }
        }
        let title = format!("{}: {}", g.nodes[s].name, links_summary(&links));
        d.buses.push((title, path));
    }
    d.width = content_w;
    let n_bands = host_list.len().div_ceil(chunk_len).max(1) as f64;
    d.height = hosts_y + n_bands * band_h - if bused { ROW_GAP } else { 0.0 };
    d
}

const CELL_W: f64 = 24.0;
const CELL_H: f64 = 16.0;
const CELL_GAP: f64 = 4.0;
const CELLS_PER_ROW: usize = 8;

/// One box per host, hosts grouped by the IB switches they are wired to, one line per switch
/// and group: for a rail-optimised fabric each line is one rail of that group.
fn layout_compact(g: &Graph<'_>, n_hosts: usize) -> Drawing {
    let n = g.nodes.len();
    let mut d = Drawing::new(n);
    let mut host_nodes: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, node) in g.nodes.iter().enumerate() {
        if let Some(host) = host_of(node) {
            host_nodes.entry(host).or_default().push(i);
        }
    }
    let is_ib = |i: usize| matches!(g.nodes[i].kind, NodeKind::IbSwitch { .. });
    let mut by_switches: BTreeMap<Vec<usize>, Vec<u32>> = BTreeMap::new();
    for (&host, members) in &host_nodes {
        let switches: BTreeSet<usize> = members
            .iter()
            .flat_map(|&i| g.adjacent[i].iter().copied())
            .filter(|&j| is_ib(j))
            .collect();
        by_switches
            .entry(switches.into_iter().collect())
            .or_default()
            .push(host);
    }
    let mut groups: Vec<(Vec<usize>, Vec<u32>)> = by_switches.into_iter().collect();
    groups.sort_by_key(|(_, hosts)| hosts.first().copied());

    let group_label = |hosts: &[u32]| match (hosts.first(), hosts.last()) {
        (Some(&lo), Some(&hi)) if (hi - lo) as usize + 1 == hosts.len() && lo != hi => {
            format!("hosts {lo}-{hi}")
        }
        (Some(&lo), _) if hosts.len() == 1 => format!("host {lo}"),
        _ => plural(hosts.len(), "host"),
    };
    let block_size = |hosts: &[u32]| {
        let cols = hosts.len().clamp(1, CELLS_PER_ROW);
        let rows = hosts.len().div_ceil(CELLS_PER_ROW).max(1);
        let cells_w = cols as f64 * (CELL_W + CELL_GAP) - CELL_GAP;
        let w = (cells_w + 2.0 * HOST_PAD).max(text_w(&group_label(hosts)) + 16.0);
        let h = HOST_TITLE_H + 2.0 * HOST_PAD + rows as f64 * (CELL_H + CELL_GAP) - CELL_GAP;
        (w, h)
    };
    let blocks_w = groups
        .iter()
        .map(|(_, hosts)| block_size(hosts).0 + HOST_GAP)
        .sum::<f64>()
        - HOST_GAP;
    let blocks_h = groups
        .iter()
        .map(|(_, hosts)| block_size(hosts).1)
        .fold(0.0, f64::max);

    let tiers = ib_tiers(g);
    let content_w = blocks_w.max(ib_rows_w(g, &tiers));
    let hosts_y = ib_rows_h(&tiers);
    let mut anchor_x: Vec<Option<f64>> = vec![None; n];
    let mut host_cell: BTreeMap<u32, Rect> = BTreeMap::new();
    let mut blocks: Vec<Rect> = Vec::new();
    let mut x = (content_w - blocks_w) / 2.0;
    for (_, hosts) in &groups {
        let (w, h) = block_size(hosts);
        let block = Rect {
            x,
            y: hosts_y,
            w,
            h,
        };
        d.frames.push(Frame {
            rect: block,
            label: group_label(hosts),
            title: format!(
                "{}, wired to the same InfiniBand switches",
                group_label(hosts)
            ),
        });
        let cells_x = x + HOST_PAD;
        for (k, &host) in hosts.iter().enumerate() {
            let (col, row) = (k % CELLS_PER_ROW, k / CELLS_PER_ROW);
            let rect = Rect {
                x: cells_x + col as f64 * (CELL_W + CELL_GAP),
                y: hosts_y + HOST_TITLE_H + HOST_PAD + row as f64 * (CELL_H + CELL_GAP),
                w: CELL_W,
                h: CELL_H,
            };
            let members = host_nodes.get(&host).map(Vec::as_slice).unwrap_or(&[]);
            for &i in members {
                anchor_x[i] = Some(rect.cx());
            }
            host_cell.insert(host, rect);
            d.cells.push(HostCell {
                rect,
                host,
                title: host_summary(g, host, members),
            });
        }
        blocks.push(block);
        x += w + HOST_GAP;
    }
    place_ib_rows(g, &mut d, &tiers, content_w, &mut anchor_x);
    // Links between switches are drawn one by one.
    d.wire_placed_links(g, |_, _| false);

    // Links from a switch into hosts, merged per (switch, group): the rail lines.
    let group_of: BTreeMap<u32, usize> = groups
        .iter()
        .enumerate()
        .flat_map(|(k, (_, hosts))| hosts.iter().map(move |&h| (h, k)))
        .collect();
    let mut rails: BTreeMap<(usize, usize), Vec<Link>> = BTreeMap::new();
    let mut host_pairs: BTreeMap<(u32, u32), Vec<Link>> = BTreeMap::new();
    for &(a, b, link) in &g.edges {
        match (host_of(g.nodes[a]), host_of(g.nodes[b])) {
            (None, Some(h)) | (Some(h), None) => {
                let switch = if is_ib(a) { a } else { b };
                if let Some(&k) = group_of.get(&h) {
                    rails.entry((switch, k)).or_default().push(link);
                }
            }
            (Some(ha), Some(hb)) if ha != hb => {
                host_pairs
                    .entry((ha.min(hb), ha.max(hb)))
                    .or_default()
                    .push(link);
            }
            _ => {}
        }
    }
    for ((switch, k), links) in &rails {
        let (Some(placed), Some(block)) = (&d.placed[*switch], blocks.get(*k)) else {
            continue;
        };
        let key = &groups[*k].0;
        let slot = key.iter().position(|s| s == switch).unwrap_or(0);
        let span = block.w - 2.0 * HOST_PAD;
        let point = Rect {
            x: block.x + HOST_PAD + (slot as f64 + 0.5) / key.len().max(1) as f64 * span,
            y: block.y,
            w: 0.0,
            h: 0.0,
        };
        d.wires.push(Wire {
            from: placed.rect,
            from_bar: false,
            to: point,
            to_bar: false,
            kind: links[0].kind,
            title: format!(
                "{} - {}: {}",
                g.nodes[*switch].name,
                group_label(&groups[*k].1),
                links_summary(links)
            ),
        });
    }
    for ((ha, hb), links) in &host_pairs {
        if let (Some(&a), Some(&b)) = (host_cell.get(ha), host_cell.get(hb)) {
            d.wires.push(Wire {
                from: a,
                from_bar: false,
                to: b,
                to_bar: false,
                kind: links[0].kind,
                title: format!("host {ha} - host {hb}: {}", links_summary(links)),
            });
        }
    }
    d.note = Some(format!(
        "{n_hosts} hosts is more than {FULL_DETAIL_MAX_HOSTS}, so each host is one small box \
         (hover for its contents). Hosts wired to the same InfiniBand switches form a group; \
         one line from a switch to a group stands for all its links to that group (a rail)."
    ));
    d.width = content_w;
    d.height = hosts_y + blocks_h;
    d
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

/// The key to colours: one entry per link kind present, with its numbers, and one per node
/// kind present.
struct Legend {
    links: Vec<(LinkKind, String)>,
    nodes: Vec<NodeKind>,
    width: f64,
    height: f64,
}

const LEGEND_LINE_W: f64 = 28.0;
const LEGEND_GAP: f64 = 24.0;

impl Legend {
    fn of(g: &Graph<'_>) -> Self {
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

    fn write(&self, out: &mut String, x0: f64, y0: f64) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn preset(name: &str) -> Topology {
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
        let h200x2 = describe(&preset("h200x2"));
        assert!(h200x2.contains("calibrated: launch "), "{h200x2}");
        assert!(h200x2.contains("  warp   1024: "), "{h200x2}");
        assert!(!describe(&preset("hgx8")).contains("calibrated"));
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
        let text = describe(&preset("ib-2"));
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

        let pair = describe(&preset("h200x2"));
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
}
