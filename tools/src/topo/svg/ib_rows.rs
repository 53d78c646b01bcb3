//! The InfiniBand switches of a drawing: one row per tier, the spines on top, each row
//! ordered to sit above what it connects; both layouts place them the same way.

use std::collections::BTreeMap;

use hw::topology::NodeKind;

use super::{Drawing, MIN_NODE_W, NODE_GAP, NODE_H, Placed, Rect, text_w};
use crate::topo::Graph;

/// Vertical space between rows of IB switches, and between the last row and the hosts.
const TIER_GAP: f64 = 90.0;
/// A row of IB switches wider than this is drawn as unlabelled squares.
const DENSE_ROW_MAX_W: f64 = 2400.0;
const DENSE_NODE_W: f64 = 12.0;
const DENSE_NODE_GAP: f64 = 5.0;

/// The IB switches by tier, lowest first.
pub(super) fn ib_tiers(g: &Graph<'_>) -> BTreeMap<u32, Vec<usize>> {
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
pub(super) fn ib_rows_w(g: &Graph<'_>, tiers: &BTreeMap<u32, Vec<usize>>) -> f64 {
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
pub(super) fn ib_rows_h(tiers: &BTreeMap<u32, Vec<usize>>) -> f64 {
    if tiers.is_empty() {
        0.0
    } else {
        ib_row_y(tiers.len())
    }
}

/// Places the IB switches in rows, the highest tier on top, spread over `content_w`. Each
/// row is ordered by the mean x of its neighbours below (`anchor_x`), which keeps a rail's
/// leaf above its NICs and avoids most crossings.
pub(super) fn place_ib_rows(
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
