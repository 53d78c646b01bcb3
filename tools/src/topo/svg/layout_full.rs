//! The detailed layout: IB rows on top, then one box per host with every NIC, PCIe switch,
//! GPU and NVSwitch; beyond four hosts the boxes wrap and each IB switch reaches its NICs
//! through a bus.

use std::collections::{BTreeMap, BTreeSet};

use hw::topology::{Link, NodeKind};

use super::ib_rows::{ib_rows_h, ib_rows_w, ib_tiers, place_ib_rows};
use super::{
    Drawing, Frame, HOST_GAP, HOST_PAD, HOST_TITLE_H, MIN_NODE_W, NODE_GAP, NODE_H, Placed, Rect,
    host_summary, links_summary, text_w,
};
use crate::svg::put;
use crate::topo::{Graph, host_of};

/// Vertical space between rows of nodes inside a host box.
const ROW_GAP: f64 = 26.0;

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
pub(super) fn layout_full(g: &Graph<'_>) -> Drawing {
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
