//! The layout's arithmetic, checked by placing every token of a small run by hand: each one
//! must get an entry of its own in each buffer it crosses, and the buffers must be packed.

use std::collections::BTreeSet;

use super::{Counts, Dests, Layout, Nodes, Sizes, Walk, channel_tokens};
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

/// A run of `n_pes` PEs on hosts of 8 with the counts of its notify phase exchanged: where
/// each PE's tokens go, and the counts each node's PEs got (by node).
fn notified(n_pes: u32, shape: &MoeShape) -> (Nodes, Vec<Vec<Dests>>, Vec<Counts>) {
    let nodes = Nodes::new(n_pes, |pe| pe / 8);
    let per_pe = shape.experts_per_pe(n_pes);
    let dests: Vec<Vec<Dests>> = (0..n_pes)
        .map(|pe| {
            (0..shape.tokens)
                .map(|t| Dests::of(&shape.route(pe, t, n_pes), per_pe, &nodes))
                .collect()
        })
        .collect();
    let outgoing: Vec<Vec<u32>> = dests
        .iter()
        .map(|d| Counts::outgoing(d, &nodes, CHANNELS))
        .collect();
    let len = Counts::part_len(&nodes, CHANNELS);
    let part = |src: usize, pe: u32| &outgoing[src][pe as usize * len..][..len];
    let counts = (0..nodes.count())
        .map(|node| {
            let members = nodes.members(node);
            for src in 0..n_pes as usize {
                assert!(
                    members
                        .iter()
                        .all(|&pe| part(src, pe) == part(src, members[0])),
                    "a source tells every PE of a node the same"
                );
            }
            let parts = (0..n_pes as usize).flat_map(|src| part(src, members[0]).to_vec());
            Counts::new(parts.collect(), &nodes, node, CHANNELS)
        })
        .collect();
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
    let layout_at = |pe: u32| Layout {
        nodes: &nodes,
        counts: &counts[nodes.node_of(pe) as usize],
    };
    // Regions are numbered the same at every node.
    let layout = layout_at(0);
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
                    let there = layout_at(forwarder);
                    let start = there.rdma_starts(forwarder)[(src * CHANNELS + channel) as usize];
                    assert_eq!(start, there.rdma(forwarder)[region], "what it was told");
                    let at = start + sent[node as usize];
                    sent[node as usize] += 1;
                    assert!(at < there.rdma(forwarder)[region + 1]);
                    assert!(rdma[forwarder as usize].insert(at), "taken twice");
                }
            }
        }
    }
    packed(
        &rdma,
        |pe| *layout_at(pe).rdma(pe).last().unwrap(),
        "the RDMA buffer",
    );
    for forwarder in 0..n_pes {
        let node = nodes.node_of(forwarder);
        let members = nodes.members(node);
        let layout = layout_at(forwarder);
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
        |pe| *layout_at(pe).nvl(pe).last().unwrap(),
        "the NVLink buffer",
    );
    packed(
        &reduce,
        |pe| *layout_at(pe).reduce(pe).last().unwrap(),
        "the reduce buffer",
    );
    for pe in 0..n_pes {
        let at = layout_at(pe);
        let total = |layout: Vec<u64>| *layout.last().unwrap();
        let back = dests[pe as usize].iter().map(|d| d.nodes.len() as u64);
        let sizes = at.sizes(pe, &dests[pe as usize]);
        assert_eq!(
            sizes,
            Sizes {
                rdma: total(at.rdma(pe)),
                nvl: total(at.nvl(pe)),
                reduce: total(at.reduce(pe)),
                back: back.sum(),
            }
        );
        assert_eq!(Sizes::from_words(sizes.to_words()), sizes);
    }
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
