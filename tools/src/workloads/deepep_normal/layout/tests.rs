//! The layout's arithmetic, checked by placing every token of a small run by hand: each one
//! must get an entry of its own in each buffer it crosses, and the buffers must be packed.

use std::collections::BTreeSet;

use super::{Counts, Dests, Layout, Nodes, Walk, channel_tokens};
use crate::workloads::MoeShape;

/// Channels in the tests: fewer tokens than channels in some, uneven runs in others.
const CHANNELS: u32 = 4;

#[test]
fn nodes_are_hosts_and_forwarders_share_the_senders_local_index() {
    // Three hosts of 8, 8 and 4 PEs.
    let nodes = Nodes::new(20, |pe| pe / 8);
    assert_eq!(nodes.count(), 3);
    assert_eq!(nodes.members(2), [16, 17, 18, 19]);
    assert_eq!((nodes.node_of(13), nodes.local_of(13)), (1, 5));
    assert_eq!(nodes.forwarder(13, 0), 5, "the same local index");
    assert_eq!(nodes.forwarder(13, 2), 17, "5 wraps to 1 on a node of 4");
    assert!((0..20).all(|pe| nodes.forwarder(pe, nodes.node_of(pe)) == pe));
    // Hosts need not hold consecutive PEs.
    let nodes = Nodes::new(6, |pe| 7 - pe % 2);
    assert_eq!(
        (nodes.members(0), nodes.members(1)),
        (&[0, 2, 4][..], &[1, 3, 5][..])
    );
    assert_eq!(nodes.forwarder(3, 0), 2);
    let alone = Nodes::new(1, |_| 0);
    assert_eq!(alone.forwarder(0, 0), 0);
}

#[test]
fn channels_split_the_tokens_into_runs_in_order() {
    for tokens in [0, 1, 3, 5, 16, 4096] {
        let all: Vec<u32> = (0..CHANNELS)
            .flat_map(|c| channel_tokens(tokens, CHANNELS, c))
            .collect();
        assert_eq!(all, (0..tokens).collect::<Vec<_>>());
    }
}

/// A run of `n_pes` PEs on hosts of 8 with its notify phase done: where each PE's tokens go,
/// and everyone's counts.
fn notified(n_pes: u32, shape: &MoeShape) -> (Nodes, Vec<Vec<Dests>>, Counts) {
    let nodes = Nodes::new(n_pes, |pe| pe / 8);
    let per_pe = shape.experts_per_pe(n_pes);
    let dests: Vec<Vec<Dests>> = (0..n_pes)
        .map(|pe| {
            (0..shape.tokens)
                .map(|t| Dests::of(&shape.route(pe, t, n_pes), per_pe, &nodes))
                .collect()
        })
        .collect();
    let rows = dests
        .iter()
        .flat_map(|d| Counts::row(d, n_pes, nodes.count(), CHANNELS))
        .collect();
    let counts = Counts::new(rows, n_pes, nodes.count(), CHANNELS);
    (nodes, dests, counts)
}

/// Each PE's set of places must be `0..total`: one token a place, none left empty.
fn packed(places: &[BTreeSet<u64>], totals: impl Fn(u32) -> u64, what: &str) {
    for (pe, taken) in places.iter().enumerate() {
        let total = totals(pe as u32);
        assert_eq!(taken.len() as u64, total, "{what} of PE {pe}");
        assert!(taken.iter().all(|&at| at < total), "{what} of PE {pe}");
    }
}

/// Both hops, placed as the kernel places them: the sender puts each token into its region at
/// each other node's forwarder, and each forwarder walks its regions in order.
fn every_token_gets_a_place_of_its_own(n_pes: u32, shape: &MoeShape) {
    let (nodes, dests, counts) = notified(n_pes, shape);
    let layout = Layout {
        nodes: &nodes,
        counts: &counts,
    };
    let n = n_pes as usize;
    let (mut rdma, mut nvl, mut reduce) = (
        vec![BTreeSet::new(); n],
        vec![BTreeSet::new(); n],
        vec![BTreeSet::new(); n],
    );
    for src in 0..n_pes {
        for channel in 0..CHANNELS {
            let region = layout.region(src, channel);
            let mut sent = vec![0; nodes.count() as usize];
            for token in channel_tokens(shape.tokens, CHANNELS, channel) {
                for &node in &dests[src as usize][token as usize].nodes {
                    if node == nodes.node_of(src) {
                        continue;
                    }
                    let forwarder = nodes.forwarder(src, node);
                    let at = layout.rdma(forwarder)[region] + sent[node as usize];
                    sent[node as usize] += 1;
                    assert!(at < layout.rdma(forwarder)[region + 1]);
                    assert!(rdma[forwarder as usize].insert(at), "taken twice");
                }
            }
        }
    }
    packed(
        &rdma,
        |pe| *layout.rdma(pe).last().unwrap(),
        "the RDMA buffer",
    );
    for forwarder in 0..n_pes {
        let node = nodes.node_of(forwarder);
        let members = nodes.members(node);
        let nvl_layouts: Vec<Vec<u64>> = members.iter().map(|&pe| layout.nvl(pe)).collect();
        let reduce_layout = layout.reduce(forwarder);
        let forwarded = (0..n_pes).filter(|&src| nodes.forwarder(src, node) == forwarder);
        for src in forwarded {
            for channel in 0..CHANNELS {
                let region = layout.region(src, channel);
                let mut walk = Walk::start(&nvl_layouts, &reduce_layout, region);
                for token in channel_tokens(shape.tokens, CHANNELS, channel) {
                    let to = &dests[src as usize][token as usize];
                    let holders: Vec<u32> = to
                        .pes
                        .iter()
                        .filter(|&&pe| nodes.node_of(pe) == node)
                        .map(|&pe| nodes.local_of(pe))
                        .collect();
                    if holders.is_empty() {
                        continue;
                    }
                    let (entries, slot) = walk.next(&holders);
                    for (&local, &entry) in holders.iter().zip(&entries) {
                        let pe = members[local as usize];
                        let layout = &nvl_layouts[local as usize];
                        assert!((layout[region]..layout[region + 1]).contains(&entry));
                        assert!(nvl[pe as usize].insert(entry), "taken twice");
                    }
                    for slot in slot..slot + holders.len() as u64 {
                        assert!(slot < reduce_layout[region + 1]);
                        assert!(reduce[forwarder as usize].insert(slot), "taken twice");
                    }
                }
            }
        }
    }
    packed(
        &nvl,
        |pe| *layout.nvl(pe).last().unwrap(),
        "the NVLink buffer",
    );
    packed(
        &reduce,
        |pe| *layout.reduce(pe).last().unwrap(),
        "the reduce buffer",
    );
    let sizes = layout.largest();
    let most = |f: &dyn Fn(u32) -> u64| (0..n_pes).map(f).max().unwrap();
    assert_eq!(sizes.rdma, most(&|pe| *layout.rdma(pe).last().unwrap()));
    assert_eq!(sizes.nvl, most(&|pe| *layout.nvl(pe).last().unwrap()));
    assert_eq!(sizes.reduce, most(&|pe| *layout.reduce(pe).last().unwrap()));
    let back = |pe: u32| {
        dests[pe as usize]
            .iter()
            .map(|d| d.nodes.len() as u64)
            .sum()
    };
    assert_eq!(sizes.back, most(&back));
}

#[test]
fn every_token_gets_a_place_of_its_own_on_uneven_nodes() {
    // Nodes of 8, 8 and 4 PEs: forwarders on the last node serve two local indices each.
    let shape = MoeShape {
        tokens: 37,
        ..MoeShape::default()
    };
    every_token_gets_a_place_of_its_own(20, &shape);
}

#[test]
fn every_token_gets_a_place_of_its_own_on_one_node_and_on_many() {
    every_token_gets_a_place_of_its_own(1, &MoeShape::default());
    every_token_gets_a_place_of_its_own(8, &MoeShape::default());
    let shape = MoeShape {
        tokens: 3,
        top_k: Some(8),
        experts: Some(256),
        ..MoeShape::default()
    };
    every_token_gets_a_place_of_its_own(64, &shape);
}
