//! The compact layout, beyond 16 hosts: one small box per host, hosts grouped by the IB
//! switches they are wired to, one line per switch and group.

use std::collections::{BTreeMap, BTreeSet};

use hw::topology::{Link, NodeKind};

use super::ib_rows::{ib_rows_h, ib_rows_w, ib_tiers, place_ib_rows};
use super::{
    Drawing, FULL_DETAIL_MAX_HOSTS, Frame, HOST_GAP, HOST_PAD, HOST_TITLE_H, HostCell, Rect, Wire,
    host_summary, links_summary, text_w,
};
use crate::topo::{Graph, host_of, plural};

const CELL_W: f64 = 24.0;
const CELL_H: f64 = 16.0;
const CELL_GAP: f64 = 4.0;
const CELLS_PER_ROW: usize = 8;

/// One box per host, hosts grouped by the IB switches they are wired to, one line per switch
/// and group: for a rail-optimised fabric each line is one rail of that group.
pub(super) fn layout_compact(g: &Graph<'_>, n_hosts: usize) -> Drawing {
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
